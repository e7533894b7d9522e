import { randomUUID } from 'node:crypto';

/**
 * Stripe's REST API (v1) over `fetch`, for the Stripe adapter. The official `stripe` library adds
 * ~245 KB to every function that can reach the adapter (the billing API, its webhook, the monthly
 * extra-numbers job) for the eight calls we make; this sends them as the library does
 * (test/unit/stripe-rest.test.ts compares each request with the library's): form-encoded, nested
 * parameters as `a[b][0]=…` (brackets unencoded), the library's pinned API version, an
 * `Idempotency-Key` on every POST (ours, or `stripe-node-retry-<uuid>`), and its retries (2, on
 * network failures, 409, 5xx or when Stripe says so, backing off from 0.5 s up to 5 s).
 */

/** The API version the `stripe` library pins (test/unit/stripe-rest.test.ts holds them equal). */
export const STRIPE_API_VERSION = '2026-10-28.endive';

const BASE_URL = 'https://api.stripe.com';
const MAX_RETRIES = 2;
const TIMEOUT_MS = 8000;

export type StripeParams = { [key: string]: StripeParam };
type StripeParam = string | number | boolean | null | undefined | StripeParam[] | StripeParams;

/** Stripe refused the request: its message, type and code, and the HTTP status. */
export class StripeRestError extends Error {
  readonly statusCode: number;
  readonly type?: string;
  readonly code?: string;
  constructor(statusCode: number, error: { message?: string; type?: string; code?: string } | undefined) {
    super(error?.message ?? `Stripe answered ${statusCode}`);
    this.name = 'StripeRestError';
    this.statusCode = statusCode;
    this.type = error?.type;
    this.code = error?.code;
  }
}

const encode = (value: string): string =>
  encodeURIComponent(value)
    .replace(/[!*()']/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%5B/g, '[')
    .replace(/%5D/g, ']');

/** The library's form encoding: nested objects and arrays as brackets, undefined left out, null empty. */
export function stripeForm(params: StripeParams): string {
  const pairs: string[] = [];
  const add = (key: string, value: StripeParam): void => {
    if (value === undefined) return;
    if (value === null || typeof value !== 'object') {
      pairs.push(`${encode(key)}=${encode(value === null ? '' : String(value))}`);
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => add(`${key}[${index}]`, item));
    } else {
      for (const [name, item] of Object.entries(value)) add(`${key}[${name}]`, item);
    }
  };
  for (const [key, value] of Object.entries(params)) add(key, value);
  return pairs.join('&');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const backoffMs = (retry: number) =>
  1000 * Math.max(0.5, Math.min(0.5 * 2 ** (retry - 1), 5) * 0.5 * (1 + Math.random()));

/**
 * One API call (`path` from `/v1/…`): a GET or DELETE sends the parameters as the query, a POST as
 * the form. Resolves to the JSON answer; a refusal is a StripeRestError; a network failure after the
 * retries is thrown as is.
 */
export async function stripeRequest<T>(
  secretKey: string,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  params: StripeParams = {},
  options: { idempotencyKey?: string } = {},
): Promise<T> {
  const form = stripeForm(params);
  const url = `${BASE_URL}${path}${method !== 'POST' && form ? `?${form}` : ''}`;
  const headers: Record<string, string> = {
    accept: 'application/json',
    authorization: `Bearer ${secretKey}`,
    'content-type': 'application/x-www-form-urlencoded',
    'stripe-version': STRIPE_API_VERSION,
  };
  if (method === 'POST')
    headers['idempotency-key'] = options.idempotencyKey ?? `stripe-node-retry-${randomUUID()}`;
  for (let retry = 0; ; retry += 1) {
    if (retry > 0) await sleep(backoffMs(retry));
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: method === 'POST' ? form : undefined,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      if (retry < MAX_RETRIES) continue;
      throw error;
    }
    const text = await response.text();
    let body: { error?: { message?: string; type?: string; code?: string } } | undefined;
    try {
      body = text ? (JSON.parse(text) as typeof body) : undefined;
    } catch {
      body = undefined;
    }
    if (response.ok) return body as T;
    const shouldRetry = response.headers.get('stripe-should-retry');
    const retryable =
      shouldRetry === 'true' ||
      (shouldRetry !== 'false' && (response.status === 409 || response.status >= 500));
    if (retryable && retry < MAX_RETRIES) continue;
    throw new StripeRestError(response.status, body?.error);
  }
}
