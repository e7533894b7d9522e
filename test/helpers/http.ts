import { stackState } from './stack-state.js';

export interface ApiOptions {
  /** Sent as `Authorization: Bearer <token>` (a JWT or an API key). */
  token?: string;
  /** Serialised as JSON (with `content-type: application/json`). */
  body?: unknown;
  /** Sent as is (a string or bytes): for malformed JSON, forms, signatures over exact bytes. */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
}

/** Response bodies are whatever JSON the route returns; tests narrow them with expect(). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface ApiResponse<T = Json> {
  status: number;
  /** Lower-cased names. */
  headers: Record<string, string>;
  /** Parsed JSON when the response is JSON, else the text. */
  body: T;
  text: string;
}

/** The gateway of the running local stack, e.g. http://127.0.0.1:53211. */
export const baseUrl = (): string => stackState().base_url;

/** One request to the running local gateway. `path` starts with `/` (e.g. `/api/v1/health`). */
export async function api<T = Json>(
  method: string,
  path: string,
  options: ApiOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | Uint8Array | undefined;
  if (options.rawBody !== undefined) {
    body = options.rawBody;
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(`${baseUrl()}${path}`, { method, headers, body, redirect: 'manual' });
  const text = await response.text();
  const responseHeaders: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    responseHeaders[name.toLowerCase()] = value;
  });
  let parsed: unknown = text;
  if ((responseHeaders['content-type'] ?? '').includes('json') && text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: response.status, headers: responseHeaders, body: parsed as T, text };
}

/**
 * A call detail without what the post-call pipeline adds in its own time (sentiment and analysis), so a
 * test can check that nothing else about the call moved.
 */
export function withoutPostCallAnalysis(call: Json): Json {
  // The analysis' own fields, and the call log's summary of it (sentiment label, success, summary line).
  const {
    sentiment: _sentiment,
    analysis: _analysis,
    user_sentiment: _userSentiment,
    call_successful: _callSuccessful,
    summary_line: _summaryLine,
    ...rest
  } = call;
  return rest;
}
