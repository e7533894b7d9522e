import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';

/** One validation problem of a 422 (`loc` is where: ['body', 'name']). */
export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
}

/** A non-2xx answer of the API: its status, its `error` message, or its 422 `detail` list. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly detail: ValidationIssue[] = [],
  ) {
    super(message);
  }

  /**
   * The 422 messages about one field (`name`, `settings.timezone`), for showing next to it; `nested`:
   * those about its parts too (a list's items, `caller_script.2`).
   */
  fieldMessages(field: string, nested = false): string[] {
    return this.detail
      .filter((issue) => {
        const at = issue.loc.filter((part) => part !== 'body').join('.');
        return at === field || (nested && at.startsWith(`${field}.`));
      })
      .map((issue) => issue.msg);
  }
}

let tokenSource: () => string | undefined = () => undefined;
let onUnauthorised: () => void = () => undefined;

export function useToken(source: () => string | undefined, unauthorised: () => void): void {
  tokenSource = source;
  onUnauthorised = unauthorised;
}

export function accessToken(): string | undefined {
  return tokenSource();
}

const authorise: Middleware = {
  onRequest({ request }) {
    const token = tokenSource();
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) onUnauthorised();
    return response;
  },
};

export type Api = ReturnType<typeof createClient<paths>>;
let client: Api | undefined;

export function api(): Api {
  if (!client) throw new Error('the API client is not configured');
  return client;
}

export function configureApi(baseUrl: string): void {
  client = createClient<paths>({ baseUrl });
  client.use(authorise);
}

interface FetchResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** The data of a 2xx answer, else an ApiError with the API's message or 422 details. */
export async function ok<R extends FetchResult>(pending: Promise<R>): Promise<NonNullable<R['data']>> {
  const { data, error, response } = await pending;
  if (response.ok) return data as NonNullable<R['data']>;
  const body = (error ?? {}) as { error?: string; detail?: ValidationIssue[] };
  // The API's 422 messages keep the validator's "Value error, " prefix (its wire format); a reader
  // is shown the message alone.
  const detail = (Array.isArray(body.detail) ? body.detail : []).map((issue) => ({
    ...issue,
    msg: issue.msg.replace(/^Value error, /, ''),
  }));
  const message =
    body.error ?? (detail.length > 0 ? 'Some fields need attention.' : `Request failed (${response.status})`);
  throw new ApiError(response.status, message, detail);
}

export const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : 'Something went wrong.';
