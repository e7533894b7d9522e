import * as http from 'node:http';
import * as https from 'node:https';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { isAllowedHost, type AllowedHost } from './allow-list.js';

/**
 * One HTTP POST of a webhook, with the protections of issue 6:
 * - SSRF: private, loopback, link-local, metadata and other non-unicast addresses are refused when
 *   the connection is made (request-filtering-agent checks the literal address, or every address a
 *   name resolves to, so DNS rebinding is covered too) — except hosts in the allow-list.
 * - redirects are never followed (node's http client does not follow them; a 3xx is returned as is);
 * - the whole attempt, body included, is bounded by `timeoutMs`, and at most `maxResponseBytes` of
 *   the response are read.
 */

export const ATTEMPT_TIMEOUT_MS = 15_000;
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** Characters of a failed response's body kept in the attempt's error. */
const ERROR_BODY_CHARS = 200;

export interface HttpAttempt {
  /** The response status, when a response came. */
  statusCode?: number;
  latencyMs: number;
  /** Set when no 2xx came: the reason in a few words. */
  error?: string;
  retryAfter?: string;
  /** True when no connection was attempted: the address or URL is not allowed. */
  refused: boolean;
  /** True when the response body was longer than the cap (it was cut). */
  truncated: boolean;
}

const filteringAgents = {
  http: new RequestFilteringHttpAgent({ keepAlive: false }),
  https: new RequestFilteringHttpsAgent({ keepAlive: false }),
};
const allowListedAgents = {
  http: new http.Agent({ keepAlive: false }),
  https: new https.Agent({ keepAlive: false }),
};

/** The message request-filtering-agent gives when it refuses an address. */
const REFUSED_ADDRESS = /is not allowed\. Because/;

export function refusalReason(url: string, options: { requireHttps: boolean }): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'invalid URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    return `unsupported scheme ${parsed.protocol}`;
  if (options.requireHttps && parsed.protocol !== 'https:') return 'only https URLs are allowed';
  return undefined;
}

export interface PostInput {
  url: string;
  body: string;
  headers: Record<string, string>;
  allowedHosts: readonly AllowedHost[];
  requireHttps: boolean;
  timeoutMs?: number;
  maxResponseBytes?: number;
}

export async function postWebhook(input: PostInput): Promise<HttpAttempt> {
  const {
    body: _body,
    contentType: _type,
    timedOut: _t,
    cancelled: _c,
    ...attempt
  } = await post(input, { forAnswer: false });
  return attempt;
}

/** An attempt with what the response said: its body (the first `maxResponseBytes`) and content type. */
export interface HttpExchange extends HttpAttempt {
  /** The response body read (UTF-8), at most `maxResponseBytes`; '' when no response came. */
  body: string;
  contentType?: string;
  /** True when `timeoutMs` passed before the response was read. */
  timedOut: boolean;
  /** True when the caller's signal aborted it. */
  cancelled: boolean;
  /** True when `sendWhen` said no: the request was made ready but nothing of it was sent. */
  notSent?: boolean;
}

/**
 * The same POST as postWebhook (same SSRF agents, allow-list, no redirects, bounded time and size),
 * for callers that use the answer (agents' function tools): the body read (the read stops at
 * `maxResponseBytes`) and the content type; `signal` aborts the request.
 */
export function postForResponse(
  input: PostInput & {
    signal?: AbortSignal;
    /**
     * The request is made ready (connection opened, headers held) at once, and its headers and body
     * go only when this is true; false or a failure sends nothing (`notSent`).
     */
    sendWhen?: Promise<boolean>;
    /** Headers known later (a signature): the request waits for them; their failure fails it, unsent. */
    lateHeaders?: Promise<Record<string, string>>;
  },
): Promise<HttpExchange> {
  return post(input, {
    signal: input.signal,
    forAnswer: true,
    sendWhen: input.sendWhen,
    lateHeaders: input.lateHeaders,
  });
}

/** The agent a request to `url` connects with: the SSRF-filtering one unless the allow-list names it. */
export function connectionAgent(url: URL, allowed: readonly AllowedHost[]): http.Agent {
  const secure = url.protocol === 'https:';
  if (isAllowedHost(url, allowed)) return secure ? allowListedAgents.https : allowListedAgents.http;
  return secure ? filteringAgents.https : filteringAgents.http;
}

/** Whether a request error is request-filtering-agent refusing the address. */
export const isRefusedAddress = (error: Error): boolean => REFUSED_ADDRESS.test(error.message);

/**
 * `forAnswer`: a response cut by the timeout or the signal is a failure even after a 2xx status
 * (the answer is incomplete); postWebhook keeps its rule (a 2xx status delivered the event).
 */
async function post(
  input: PostInput,
  options: {
    signal?: AbortSignal;
    forAnswer: boolean;
    sendWhen?: Promise<boolean>;
    lateHeaders?: Promise<Record<string, string>>;
  },
): Promise<HttpExchange> {
  const started = process.hrtime.bigint();
  const elapsed = () => Number((process.hrtime.bigint() - started) / 1_000_000n);
  const base = { body: '', timedOut: false, cancelled: false };
  const refusal = refusalReason(input.url, { requireHttps: input.requireHttps });
  if (refusal)
    return { ...base, latencyMs: 0, error: `refused: ${refusal}`, refused: true, truncated: false };
  if (options.signal?.aborted)
    return { ...base, latencyMs: 0, error: 'cancelled', cancelled: true, refused: false, truncated: false };
  const url = new URL(input.url);
  const secure = url.protocol === 'https:';
  const agent = connectionAgent(url, input.allowedHosts);
  const timeoutMs = input.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const maxBytes = input.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const body = Buffer.from(input.body, 'utf8');

  return new Promise<HttpExchange>((resolve) => {
    let settled = false;
    let timedOut = false;
    let cancelled = false;
    const finish = (
      result: Omit<HttpExchange, 'latencyMs' | 'body' | 'timedOut' | 'cancelled'>,
      text = '',
    ) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ ...result, body: text, timedOut, cancelled, latencyMs: elapsed() });
    };
    const request = (secure ? https : http).request(url, {
      method: 'POST',
      agent,
      headers: { ...input.headers, 'content-length': String(body.length) },
    });
    const timer = setTimeout(() => {
      timedOut = true;
      request.destroy(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    const onAbort = () => {
      cancelled = true;
      request.destroy(new Error('cancelled'));
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });

    request.on('response', (response) => {
      const statusCode = response.statusCode ?? 0;
      const retryAfter = headerValue(response.headers['retry-after']);
      const contentType = headerValue(response.headers['content-type']);
      const chunks: Buffer[] = [];
      let received = 0;
      let truncated = false;
      const done = () => {
        const ok = statusCode >= 200 && statusCode < 300;
        const all = Buffer.concat(chunks).toString('utf8');
        const text = all.slice(0, ERROR_BODY_CHARS).trim();
        const interrupted = !options.forAnswer
          ? undefined
          : timedOut
            ? `timed out after ${timeoutMs} ms`
            : cancelled
              ? 'cancelled'
              : undefined;
        finish(
          {
            statusCode,
            retryAfter,
            refused: false,
            truncated,
            ...(contentType ? { contentType } : {}),
            ...(interrupted ? { error: interrupted } : ok ? {} : { error: describeStatus(statusCode, text) }),
          },
          all,
        );
      };
      response.on('data', (chunk: Buffer) => {
        if (truncated) return;
        received += chunk.length;
        if (received > maxBytes) {
          truncated = true;
          chunks.push(chunk.subarray(0, Math.max(0, chunk.length - (received - maxBytes))));
          response.destroy();
          done();
          return;
        }
        chunks.push(chunk);
      });
      response.on('end', done);
      response.on('error', () => done());
      response.on('close', done);
    });

    request.on('error', (error: NodeJS.ErrnoException) => {
      if (isRefusedAddress(error)) {
        finish({ refused: true, truncated: false, error: `refused: address not allowed (${error.message})` });
        return;
      }
      finish({
        refused: false,
        truncated: false,
        error: error.code ? `${error.code}: ${error.message}` : error.message,
      });
    });

    if (!options.sendWhen && !options.lateHeaders) {
      request.end(body);
      return;
    }
    const holdBack = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      request.destroy();
      resolve({ ...base, notSent: true, latencyMs: elapsed(), refused: false, truncated: false });
    };
    const late: Promise<Record<string, string>> = options.lateHeaders ?? Promise.resolve({});
    Promise.all([options.sendWhen ?? true, late]).then(([send, headers]) => {
      if (!send || settled) return holdBack();
      for (const [name, value] of Object.entries(headers)) request.setHeader(name, value);
      request.end(body);
    }, holdBack);
  });
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function describeStatus(statusCode: number, body: string): string {
  const reason = http.STATUS_CODES[statusCode] ?? 'Unknown';
  const kind = statusCode >= 300 && statusCode < 400 ? ' (redirects are not followed)' : '';
  return `HTTP ${statusCode} ${reason}${kind}${body ? `: ${body}` : ''}`;
}
