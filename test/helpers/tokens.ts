import {
  createHash,
  createHmac,
  createPublicKey,
  generateKeyPairSync,
  randomUUID,
  sign,
  type KeyObject,
} from 'node:crypto';
import { requestAccessToken } from '../../lib/local/tokens.js';
import { stackState } from './stack-state.js';

/**
 * Access tokens from the running local identity provider, and forged or wrong tokens for auth tests.
 * node:crypto only.
 */

export interface TokenOverrides {
  /** Default `access`; `id` gives a Cognito-style ID token (aud = client, no client_id). */
  token_use?: string;
  /** Default: the stack's JWT_CLIENT_ID (`local-dashboard`). */
  client_id?: string;
  /** Seconds until expiry (default 3600); negative: already expired. */
  expires_in?: number;
  scope?: string;
  /** Another issuer, validly signed by the local provider's key. */
  iss?: string;
}

/** The local identity provider's `sub` for an email (same rule as lib/local/subject.ts). */
export function subjectFor(email: string): string {
  return `local-${createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 32)}`;
}

/** A Cognito-style access token for `email` from the running mock's POST /token. */
export async function tokenFor(email: string, overrides: TokenOverrides = {}): Promise<string> {
  return requestAccessToken(stackState(), email, { ...overrides });
}

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');
const segment = (value: object) => b64url(JSON.stringify(value));

/** The claims a good token for `email` carries (for forging variants of it). */
function goodClaims(email: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  const sub = subjectFor(email);
  return {
    sub,
    email,
    token_use: 'access',
    client_id: stackState().env.JWT_CLIENT_ID,
    username: sub,
    scope: 'aws.cognito.signin.user.admin',
    iss: stackState().env.JWT_ISSUER,
    iat: now,
    auth_time: now,
    exp: now + 3600,
    jti: randomUUID(),
    ...overrides,
  };
}

function rs256(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject): string {
  const input = `${segment({ typ: 'JWT', ...header, alg: 'RS256' })}.${segment(payload)}`;
  return `${input}.${b64url(sign('sha256', Buffer.from(input), key))}`;
}

const freshKey = () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

async function publishedKey(): Promise<{ kid: string; pem: string }> {
  const response = await fetch(stackState().env.JWT_JWKS_URI);
  const { keys } = (await response.json()) as { keys: (Record<string, unknown> & { kid: string })[] };
  const jwk = keys[0];
  const pem = createPublicKey({ key: jwk as never, format: 'jwk' })
    .export({ type: 'spki', format: 'pem' })
    .toString();
  return { kid: jwk.kid, pem };
}

/** Validly signed by the local provider, but expired `secondsAgo` seconds ago. */
export const expiredToken = (email: string, secondsAgo = 60) => tokenFor(email, { expires_in: -secondsAgo });
/** Validly signed, but issued to another app client. */
export const wrongClientToken = (email: string) => tokenFor(email, { client_id: 'another-client' });
/** Validly signed ID token (token_use id), not an access token. */
export const idToken = (email: string) => tokenFor(email, { token_use: 'id' });
/** Validly signed by the local provider's key, but naming another issuer. */
export const otherIssuerSameKeyToken = (email: string) =>
  tokenFor(email, { iss: 'https://issuer.example.com/other' });

/** Signed with another key by another issuer. */
export function wrongIssuerToken(email: string): string {
  return rs256(
    { kid: `other-${randomUUID()}` },
    goodClaims(email, { iss: 'https://cognito-idp.example.com/other-pool' }),
    freshKey(),
  );
}

/** Right issuer and claims, signed with a key whose `kid` the JWKS does not list. */
export function unknownKidToken(email: string): string {
  return rs256({ kid: `unknown-${randomUUID()}` }, goodClaims(email), freshKey());
}

/** `alg: none`, no signature. */
export async function algNoneToken(email: string): Promise<string> {
  const { kid } = await publishedKey();
  return `${segment({ typ: 'JWT', alg: 'none', kid })}.${segment(goodClaims(email))}.`;
}

/** HS256 "signed" with the provider's public key (PEM) as the HMAC secret: the key-confusion attack. */
export async function hs256WithPublicKeyToken(email: string): Promise<string> {
  const { kid, pem } = await publishedKey();
  const input = `${segment({ typ: 'JWT', alg: 'HS256', kid })}.${segment(goodClaims(email))}`;
  return `${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`;
}

export const GARBAGE_TOKEN = 'this-is.not-a.jwt';

/** Every bad token kind, for table-driven 401 tests. */
export async function badTokens(email: string): Promise<Record<string, string>> {
  return {
    expired: await expiredToken(email),
    'wrong issuer': wrongIssuerToken(email),
    'other issuer, same key': await otherIssuerSameKeyToken(email),
    'wrong client_id': await wrongClientToken(email),
    'id token': await idToken(email),
    'alg none': await algNoneToken(email),
    'HS256 with the public key': await hs256WithPublicKeyToken(email),
    'unknown kid': unknownKidToken(email),
    garbage: GARBAGE_TOKEN,
    'not base64': 'eyJ%%%.eyJ%%%.%%%',
  };
}
