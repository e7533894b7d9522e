/**
 * Twilio's REST API (2010-04-01) over `fetch`, for the Twilio adapters (telephony and SMS). The
 * official `twilio` library would add ~3 MB (axios, its whole generated API) to every function that
 * can reach an adapter; the few calls we make are plain form posts with basic auth, encoded as the
 * library encodes them (a list is repeated: `StatusCallbackEvent=a&StatusCallbackEvent=b`).
 * Its request signature check stays the library's own (`twilio-format.ts`).
 */

export const TWILIO_API_BASE = 'https://api.twilio.com/2010-04-01';

/** The library's default request timeout. */
const DEFAULT_TIMEOUT_MS = 30_000;

export interface TwilioAccount {
  accountSid: string;
  authToken: string;
}

/** A parameter: left out when undefined; a list is sent as the parameter repeated. */
export type TwilioParam = string | number | boolean | readonly string[] | undefined;

/** Twilio refused the request: its HTTP status, and its error code and message when it sent them. */
export class TwilioRestError extends Error {
  readonly status: number;
  readonly code?: number;
  readonly moreInfo?: string;
  constructor(status: number, body: { message?: string; code?: number; more_info?: string } | undefined) {
    super(body?.message ?? `[HTTP ${status}] Failed to execute request`);
    this.name = 'TwilioRestError';
    this.status = status;
    this.code = body?.code;
    this.moreInfo = body?.more_info;
  }
}

export const twilioBasicAuth = (account: TwilioAccount): string =>
  `Basic ${Buffer.from(`${account.accountSid}:${account.authToken}`).toString('base64')}`;

/** Form (or query) encoding of the parameters, in their order. */
export function twilioParams(params: Record<string, TwilioParam>): URLSearchParams {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value as readonly string[]) form.append(name, item);
    else form.append(name, String(value));
  }
  return form;
}

/**
 * One request under the account (`path` after `/Accounts/{sid}`, e.g. `/Calls.json`): a GET sends the
 * parameters as the query, a POST as a form. Resolves to the JSON answer (undefined for 204); a refusal
 * is a TwilioRestError; a network failure or timeout is thrown as is (no status: it may have arrived).
 */
export async function twilioRequest<T>(
  account: TwilioAccount,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  params: Record<string, TwilioParam> = {},
  options: { timeoutMs?: number } = {},
): Promise<T> {
  const encoded = twilioParams(params).toString();
  const query = method === 'POST' || encoded === '' ? '' : `?${encoded}`;
  const url = `${TWILIO_API_BASE}/Accounts/${encodeURIComponent(account.accountSid)}${path}${query}`;
  const response = await fetch(url, {
    method,
    headers: {
      authorization: twilioBasicAuth(account),
      accept: 'application/json',
      ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    body: method === 'POST' ? encoded : undefined,
    signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    throw new TwilioRestError(
      response.status,
      body && typeof body === 'object' ? (body as Record<string, never>) : undefined,
    );
  }
  return body as T;
}
