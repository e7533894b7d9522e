import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FunctionSpec } from '../cloud/catalog-types.js';
import { httpApiEvent } from './events.js';
import { invokeFunction } from './invoke.js';
import { dim, warn } from './log.js';
import { Router, type RouteTarget } from './router.js';
import { servedByDashboard, type WebSite } from './web.js';

/** API Gateway's and Lambda's request payload limit. */
export const MAX_BODY_BYTES = 6 * 1024 * 1024;
export const INTERNAL_ERROR_MESSAGE = 'Internal server error. Please try again later.';
/**
 * API Gateway's HTTP API waits at most 30 s for an integration and then answers 503 Service
 * Unavailable (the function may still be running). A function that times out before that has failed,
 * and a failed function is a 500 (lib/local/invoke.ts enforces each function's own timeout).
 */
export const HTTP_INTEGRATION_TIMEOUT_MS = 30_000;
export const INTEGRATION_TIMEOUT_MESSAGE = 'Service Unavailable';
/**
 * Paths under this prefix are the local stack's own endpoints (e.g. GET /_local/quiescence), answered
 * by the gateway itself: no catalog function serves them and the cloud stack has no such route.
 */
export const LOCAL_PATH_PREFIX = '/_local/';

export interface Gateway {
  url: string;
  port: number;
  router: Router;
  /** Until called, every request is answered 503 (the environment is not complete yet). */
  setReady(): void;
  /**
   * Serves `GET <path>` (under LOCAL_PATH_PREFIX) with the JSON `read()` returns: a local-only
   * endpoint for tests and tools, never part of the API or the cloud stack.
   */
  setLocalRoute(path: string, read: () => unknown): void;
  /** Requests being handled now (the gateway's own /_local/ endpoints not counted). */
  inFlight(): number;
  stop(): Promise<void>;
}

export interface GatewayOptions {
  /** 0: any free port. */
  port: number;
  functions: FunctionSpec[];
  region: string;
  /** Print one line per request. */
  accessLog?: boolean;
  /** The dashboard (lib/local/web.ts): answers the GETs no route matches, outside /api, /webhooks, /r. */
  web?: WebSite;
  /** How long an integration may take before a 503 (HTTP_INTEGRATION_TIMEOUT_MS unless a test says). */
  integrationTimeoutMs?: number;
}

interface HandlerResponse {
  statusCode?: number;
  headers?: Record<string, string | number | boolean>;
  multiValueHeaders?: Record<string, (string | number | boolean)[]>;
  cookies?: string[];
  body?: string;
  isBase64Encoded?: boolean;
}

class PayloadTooLarge extends Error {}

const INTEGRATION_TIMED_OUT = Symbol('integration timed out');

/**
 * The whole request body, or PayloadTooLarge once it exceeds 6 MB. An oversized body is still read
 * to its end (and dropped), so the client has finished sending when the 413 arrives.
 */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES ? MAX_BODY_BYTES + 1 : 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      else chunks.length = 0;
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) reject(new PayloadTooLarge());
      else resolveBody(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  requestId: string,
  headers: Record<string, string> = {},
): void {
  const payload = Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(payload.length),
    'x-request-id': requestId,
    'apigw-requestid': requestId,
    ...headers,
  });
  res.end(payload);
}

/** Writes what a handler returned, with API Gateway's format inference for bare values. */
function sendHandlerResult(res: ServerResponse, result: unknown, requestId: string): number {
  const structured =
    result !== null && typeof result === 'object' && 'statusCode' in (result as Record<string, unknown>)
      ? (result as HandlerResponse)
      : undefined;
  if (!structured) {
    // Not a {statusCode,…} object: API Gateway answers 200 with the value as JSON (a string as is).
    const body = result === undefined ? '' : typeof result === 'string' ? result : JSON.stringify(result);
    const payload = Buffer.from(body);
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': String(payload.length),
      'apigw-requestid': requestId,
    });
    res.end(payload);
    return 200;
  }
  const status = Number(structured.statusCode) || 200;
  const headers: Record<string, string | string[]> = { 'apigw-requestid': requestId };
  for (const [name, value] of Object.entries(structured.headers ?? {}))
    headers[name.toLowerCase()] = String(value);
  for (const [name, values] of Object.entries(structured.multiValueHeaders ?? {})) {
    headers[name.toLowerCase()] = values.map(String);
  }
  if (structured.cookies && structured.cookies.length > 0) headers['set-cookie'] = structured.cookies;
  delete headers['content-length'];
  delete headers['transfer-encoding'];
  const payload =
    structured.body === undefined || structured.body === null
      ? Buffer.alloc(0)
      : Buffer.from(String(structured.body), structured.isBase64Encoded ? 'base64' : 'utf8');
  headers['content-length'] = String(payload.length);
  res.writeHead(status, headers);
  res.end(payload);
  return status;
}

/**
 * The local API Gateway: turns each request into an HTTP API v2 event for the catalog function whose
 * route (or function URL) matches, invokes its handler in this process and writes back the result.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const router = new Router(options.functions);
  const integrationTimeoutMs = options.integrationTimeoutMs ?? HTTP_INTEGRATION_TIMEOUT_MS;
  const localRoutes = new Map<string, () => unknown>();
  let ready = false;
  let inFlight = 0;

  const server = createServer((req, res) => {
    const started = Date.now();
    const requestId = randomUUID();
    const local = (req.url ?? '/').startsWith(LOCAL_PATH_PREFIX);
    if (!local) {
      inFlight += 1;
      res.once('close', () => (inFlight -= 1));
    }
    let target: RouteTarget | undefined;
    const log = (status: number) => {
      if (!options.accessLog) return;
      const name = target ? ` ${dim(target.fn.id)}` : '';
      process.stdout.write(
        `${dim('[gateway]')} ${req.method} ${withoutQueryValues(req.url ?? '/')} → ${status} ${dim(`${Date.now() - started} ms`)}${name}\n`,
      );
    };
    const fail = (status: number, message: string, headers?: Record<string, string>) => {
      if (!res.headersSent) sendJson(res, status, { error: message }, requestId, headers);
      else res.end();
      log(status);
    };

    void (async () => {
      let body: Buffer;
      try {
        body = await readBody(req);
      } catch (error) {
        if (error instanceof PayloadTooLarge) return fail(413, 'Request body too large');
        return fail(400, 'Bad request');
      }
      if (!ready) return fail(503, 'The local stack is starting', { 'retry-after': '1' });

      const url = req.url ?? '/';
      const path = url.split('?')[0];
      if (local) {
        const read = localRoutes.get(path);
        if (!read) return fail(404, 'Not found');
        if (req.method !== 'GET') return fail(405, 'Method not allowed', { allow: 'GET' });
        // Not in the access log: tests and the bench poll these many times a second.
        sendJson(res, 200, await read(), requestId, { 'cache-control': 'no-store' });
        return;
      }
      const match = router.match(req.method ?? 'GET', path);
      if (match.kind === 'not-found' && options.web && servedByDashboard(req.method ?? 'GET', path)) {
        options.web.handle(req, res, path);
        return;
      }
      if (match.kind === 'not-found') return fail(404, 'Not found');
      if (match.kind === 'method-not-allowed')
        return fail(405, 'Method not allowed', { allow: match.allowed.join(', ') });
      target = match.target;

      const event = httpApiEvent(
        {
          method: req.method ?? 'GET',
          url,
          headers: req.headers,
          body,
          sourceIp: (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, ''),
          requestId,
        },
        match.target,
        match.pathParameters,
      );
      let result: unknown;
      let integration: NodeJS.Timeout | undefined;
      try {
        result = await Promise.race([
          invokeFunction(match.target.fn, event, options.region, requestId),
          new Promise<typeof INTEGRATION_TIMED_OUT>((resolveTimedOut) => {
            integration = setTimeout(() => resolveTimedOut(INTEGRATION_TIMED_OUT), integrationTimeoutMs);
          }),
        ]);
      } catch (error) {
        warn(`${match.target.fn.id} failed on ${req.method} ${path}`, error);
        return fail(500, INTERNAL_ERROR_MESSAGE);
      } finally {
        clearTimeout(integration);
      }
      if (result === INTEGRATION_TIMED_OUT) {
        warn(`${match.target.fn.id} did not answer ${req.method} ${path} within ${integrationTimeoutMs} ms`);
        return fail(503, INTEGRATION_TIMEOUT_MESSAGE);
      }
      try {
        log(sendHandlerResult(res, result, requestId));
      } catch (error) {
        warn(`${match.target.fn.id} returned a response that could not be written`, error);
        fail(500, INTERNAL_ERROR_MESSAGE);
      }
    })().catch((error: unknown) => {
      warn('gateway error', error);
      fail(500, INTERNAL_ERROR_MESSAGE);
    });
  });
  server.keepAliveTimeout = 5000;

  await new Promise<void>((resolveListening, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolveListening();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    router,
    setReady: () => {
      ready = true;
    },
    setLocalRoute: (path, read) => {
      if (!path.startsWith(LOCAL_PATH_PREFIX)) throw new Error(`a local route is under ${LOCAL_PATH_PREFIX}`);
      localRoutes.set(path, read);
    },
    inFlight: () => inFlight,
    stop: () =>
      new Promise<void>((resolveClosed) => {
        server.close(() => resolveClosed());
        server.closeAllConnections();
      }),
  };
}

/** A request's path with its query's values left out (a search `q` or a phone filter is personal data). */
function withoutQueryValues(url: string): string {
  const [path, query] = url.split('?', 2);
  if (query === undefined) return path;
  const keys = query.split('&').map((pair) => pair.split('=')[0]);
  return `${path}?${keys.map((key) => `${key}=…`).join('&')}`;
}
