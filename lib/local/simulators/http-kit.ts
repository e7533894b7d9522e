import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { signTwilioRequest, SIGNATURE_HEADER } from '../../../functions/providers/telephony/twilio-format.js';

/**
 * What the simulators' HTTP services share: a route table, a bounded body reader (JSON object or form),
 * and one error-response shape — `{ error: <message> }` with the status of a thrown `SimulatorError`
 * (500 for anything else). A simulator that plays a provider whose errors look different (Stripe,
 * OpenAI) keeps its own shape.
 */

/** A request the simulator refuses: answered with `status` and `{ error: message }`. */
export class SimulatorError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The most a request body may hold. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The body as text; a body over `maxBytes` is refused with 413. */
export async function readText(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new SimulatorError(413, `body over ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The body as a JSON object; an empty body is `{}`, anything but an object is refused with 400. */
export async function readJsonObject(
  req: IncomingMessage,
  maxBytes = MAX_BODY_BYTES,
): Promise<Record<string, unknown>> {
  const text = await readText(req, maxBytes);
  if (!text) return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // falls through
  }
  throw new SimulatorError(400, 'body must be a JSON object');
}

/** The body as form fields (`application/x-www-form-urlencoded`); a repeated field keeps its last value. */
export async function readForm(
  req: IncomingMessage,
  maxBytes = MAX_BODY_BYTES,
): Promise<Record<string, string>> {
  return Object.fromEntries(new URLSearchParams(await readText(req, maxBytes)));
}

/** A required, non-empty string field (400 otherwise). */
export function requireString(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw new SimulatorError(400, `${name} is required`);
  return value;
}

/** A JSON answer; no body when `body` is undefined (a 204). */
export function sendJson(res: ServerResponse, status: number, body?: unknown): void {
  const payload = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** The path's `:name` segments. */
  params: Record<string, string>;
}

export interface Route {
  method: string;
  /** Segments, `:name` for a parameter: `/calls/:sid/hangup`. Empty segments in a request's path are ignored. */
  path: string;
  handle: (context: RouteContext) => unknown;
}

/** A route table: the handler of the first route that matches runs; false when none matched. */
export function routeTable(
  routes: Route[],
): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean> {
  const compiled = routes.map((route) => ({ ...route, segments: route.path.split('/').filter(Boolean) }));
  return async (req, res, url) => {
    const method = req.method ?? 'GET';
    const parts = url.pathname.split('/').filter(Boolean);
    for (const route of compiled) {
      if (route.method !== method || route.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      const matches = route.segments.every((segment, i) => {
        if (segment.startsWith(':')) params[segment.slice(1)] = parts[i];
        return segment.startsWith(':') || segment === parts[i];
      });
      if (!matches) continue;
      await route.handle({ req, res, url, params });
      return true;
    }
    return false;
  };
}

/**
 * An HTTP server whose handler's failures are answered in the one shape: a `SimulatorError`'s status
 * (else 500) and `{ error: message }`; a response already under way is ended.
 */
export function simulatorServer(
  handle: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>,
): Server {
  return createServer((req, res) => {
    (async () => handle(req, res, new URL(req.url ?? '/', 'http://simulator')))().catch((error: unknown) => {
      const status = error instanceof SimulatorError ? error.status : 500;
      if (!res.headersSent)
        sendJson(res, status, { error: error instanceof Error ? error.message : String(error) });
      else res.end();
    });
  });
}

/**
 * POSTs a form-encoded callback signed as Twilio signs it (`X-Twilio-Signature` over the URL and the
 * parameters): what the telephony and SMS simulators send the service. A network error or a 5xx is
 * tried again (3 attempts, 250 ms then 500 ms apart) unless `stopped()` says the simulator stopped;
 * any other answer is returned as it is.
 */
export async function postSignedForm(
  url: string,
  params: Record<string, string>,
  options: { authToken: string; userAgent: string; stopped?: () => boolean },
): Promise<{ status: number; text: string }> {
  const signature = signTwilioRequest(options.authToken, url, params);
  let lastError: unknown;
  for (let attempt = 1; attempt <= 3 && !options.stopped?.(); attempt += 1) {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          [SIGNATURE_HEADER]: signature,
          'user-agent': options.userAgent,
        },
        body: new URLSearchParams(params).toString(),
        signal: AbortSignal.timeout(15_000),
      });
      const text = await response.text();
      if (response.status < 500) return { status: response.status, text };
      lastError = new Error(`${response.status} ${text.slice(0, 200)}`);
    } catch (error) {
      lastError = error;
    }
    await new Promise((r) => setTimeout(r, 250 * attempt));
  }
  throw lastError ?? new Error('simulator stopped');
}
