/**
 * Errors a handler or service may throw. The HTTP error middleware turns them into the documented
 * `{ "error": message }` bodies; anything else becomes a 500 with the documented message.
 */

export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  /** Details of the failed check (pydantic's `ctx`), e.g. the JSON parser's message. */
  ctx?: Record<string, unknown>;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** Fields the body carries beside `error` (a 409's `contact_id`: the record that already exists). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** 422 with the pydantic-style `detail` array of docs/api.md */
export class ValidationError extends Error {
  readonly status = 422;
  constructor(readonly detail: ValidationIssue[]) {
    super('Validation failed');
    this.name = 'ValidationError';
  }
}

export const INTERNAL_ERROR_MESSAGE = 'Internal server error. Please try again later.';
export const VIEWER_READ_ONLY_MESSAGE = 'Viewers have read-only access';

export const unauthorized = () => new HttpError(401, 'Unauthorized');
export const forbidden = (message = 'Forbidden') => new HttpError(403, message);
export const viewerReadOnly = () => new HttpError(403, VIEWER_READ_ONLY_MESSAGE);
/** `notFound('Agent')` → 404 `Agent not found`; pass a whole message when it differs. */
export const notFound = (thing: string) =>
  new HttpError(404, thing.endsWith('not found') || thing.includes(' ') ? thing : `${thing} not found`);
/** 409; `details` go into the body beside `error` (`{ error, contact_id }`). */
export const conflict = (message: string, details: Record<string, unknown> = {}) =>
  new HttpError(409, message, {}, details);
export const paymentRequired = (message: string) => new HttpError(402, message);
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new HttpError(429, message, { 'retry-after': String(retryAfterSeconds) });
export const badRequest = (message: string) => new HttpError(400, message);
