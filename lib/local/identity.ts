import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { dirname } from 'node:path';
import {
  OAuth2Server,
  type MutableRedirectUri,
  type MutableResponse,
  type MutableToken,
} from 'oauth2-mock-server';
import { preferredOrFreePort } from './ports.js';
import { localSubject } from './subject.js';

export { localSubject };

/** The app client id local access tokens carry (Cognito's `client_id` claim). */
export const LOCAL_CLIENT_ID = 'local-dashboard';
/** Cognito's scope on a user's access token. */
export const DEFAULT_SCOPE = 'aws.cognito.signin.user.admin';

export interface IdentityLocal {
  issuer: string;
  jwksUri: string;
  tokenEndpoint: string;
  clientId: string;
  port: number;
  stop(): Promise<void>;
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;

/** Seconds until expiry from the request (`expires_in`, may be negative: already expired), else 3600. */
function requestedLifetime(body: Record<string, unknown>): number {
  const raw = text(body.expires_in);
  const seconds = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(seconds) ? Math.trunc(seconds) : 3600;
}

/** The email signed in on the sign-in page, by the authorization code it was given (until exchanged). */
const signedInCodes = new Map<string, string>();

function emailOf(body: Record<string, unknown>): string | undefined {
  const code = text(body.code);
  if (body.grant_type === 'authorization_code' && code) return signedInCodes.get(code);
  return text(body.email) ?? (body.grant_type === 'password' ? text(body.username) : undefined);
}

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The sign-in page the dashboard's authorization request lands on: a field `Email` and a button
 * `Sign in`. It submits the same request again with `email`; the provider then redirects back with a
 * code that signs in as that user (any email: the API decides what the user may see).
 */
function signInPage(url: URL): string {
  const hidden = [...url.searchParams.entries()]
    .filter(([name]) => name !== 'email')
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in (local identity provider)</title></head>
<body><main><h1>Sign in</h1>
<p>Local identity provider: any email of a user the service knows signs in as that user.</p>
<form method="get" action="/authorize">${hidden}
<p><label for="email">Email</label><br><input id="email" name="email" type="email" autocomplete="username" required autofocus></p>
<p><button type="submit">Sign in</button></p>
</form></main></body></html>`;
}

/** The authorize endpoint without an email yet: the sign-in page instead of an immediate redirect. */
function answerSignIn(req: IncomingMessage, res: ServerResponse, issuer: string): boolean {
  if (req.method !== 'GET') return false;
  const url = new URL(req.url ?? '/', issuer);
  if (url.pathname !== '/authorize' || text(url.searchParams.get('email'))) return false;
  const body = Buffer.from(signInPage(url));
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(body.length),
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  });
  res.end(body);
  return true;
}

/**
 * Shapes every token the mock issues like a Cognito user-pool ACCESS token for the user named by the
 * form field `email`. Tests may override `token_use`, `client_id`, `scope`, `expires_in` (seconds, may be
 * negative) and `iss` (a validly signed token from another issuer).
 */
function cognitoStyle(token: MutableToken, body: Record<string, unknown>, defaultClientId: string): void {
  const payload = token.payload as Record<string, unknown>;
  const email = emailOf(body) ?? '';
  const sub = localSubject(email);
  const tokenUse = text(body.token_use) ?? 'access';
  const clientId = text(body.client_id) ?? defaultClientId;
  const now = Math.floor(Date.now() / 1000);
  delete payload.aud;
  delete payload.nbf;
  delete payload.amr;
  Object.assign(payload, {
    sub,
    email,
    token_use: tokenUse,
    username: sub,
    auth_time: now,
    iat: now,
    exp: now + requestedLifetime(body),
    jti: randomUUID(),
  });
  const issuer = text(body.iss);
  if (issuer) payload.iss = issuer;
  if (tokenUse === 'id') {
    // An ID token names its client in `aud` and carries no scope (as Cognito's do).
    payload.aud = clientId;
    payload.email_verified = true;
  } else {
    payload.client_id = clientId;
    payload.scope = text(body.scope) ?? DEFAULT_SCOPE;
  }
}

async function loadOrCreateKey(server: OAuth2Server, keyFile: string | undefined): Promise<void> {
  if (keyFile && existsSync(keyFile)) {
    const jwk = JSON.parse(readFileSync(keyFile, 'utf8')) as Record<string, unknown>;
    await server.issuer.keys.add(jwk as Parameters<typeof server.issuer.keys.add>[0]);
    return;
  }
  const jwk = await server.issuer.keys.generate('RS256');
  if (keyFile) {
    mkdirSync(dirname(keyFile), { recursive: true });
    writeFileSync(keyFile, JSON.stringify(jwk, null, 2), { mode: 0o600 });
  }
}

/**
 * A local OpenID provider (oauth2-mock-server) on 127.0.0.1. POST /token (form or JSON) with
 * `grant_type=client_credentials&email=you@example.com` returns a Cognito-style access token.
 */
export async function startIdentity(options: {
  clientId?: string;
  /** Persist the RS256 key here so tokens survive restarts; omitted: a fresh key each start. */
  keyFile?: string;
  preferredPort?: number;
}): Promise<IdentityLocal> {
  const clientId = options.clientId ?? LOCAL_CLIENT_ID;
  const server = new OAuth2Server();
  await loadOrCreateKey(server, options.keyFile);
  const port = await preferredOrFreePort(options.preferredPort);
  const issuer = `http://127.0.0.1:${port}`;
  server.issuer.url = issuer;

  server.service.on('beforeTokenSigning', (token: MutableToken, req: { body?: unknown }) => {
    cognitoStyle(token, (req.body ?? {}) as Record<string, unknown>, clientId);
  });
  server.service.on('beforeResponse', (response: MutableResponse, req: { body?: unknown }) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (response.statusCode !== 200 || response.body === '') return;
    if (!emailOf(body)) {
      response.statusCode = 400;
      response.body = { error: 'invalid_request', error_description: "the form field 'email' is required" };
      return;
    }
    if (body.grant_type === 'authorization_code') signedInCodes.delete(String(body.code));
    response.body.expires_in = requestedLifetime(body);
    if (text(body.token_use) !== 'id') response.body.scope = text(body.scope) ?? DEFAULT_SCOPE;
  });

  server.service.on('beforeAuthorizeRedirect', (redirect: MutableRedirectUri, req: IncomingMessage) => {
    const email = text(new URL(req.url ?? '/', issuer).searchParams.get('email'));
    const code = redirect.url.searchParams.get('code');
    if (email && code) signedInCodes.set(code, email);
  });

  // The provider's own endpoints, but /authorize first shows the sign-in page.
  const handler = server.service.requestHandler;
  const http = createServer((req, res) => {
    if (!answerSignIn(req, res, issuer)) handler(req, res);
  });
  await new Promise<void>((resolveListening, reject) => {
    http.once('error', reject);
    http.listen(port, '127.0.0.1', () => {
      http.off('error', reject);
      resolveListening();
    });
  });
  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    tokenEndpoint: `${issuer}/token`,
    clientId,
    port,
    stop: () =>
      new Promise<void>((resolveClosed) => {
        http.close(() => resolveClosed());
        http.closeAllConnections();
      }),
  };
}
