import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Request } from '@middy/core';
import type { Principal } from '../auth/principal.js';

/** What the middleware stack learns about a request before the handler runs. */
export interface RequestState {
  requestId: string;
  principal?: Principal;
  body?: unknown;
  /** A body the route takes as is (its `rawBody` content types): the bytes and the content type. */
  raw?: RawRequestBody;
  query?: unknown;
  /** An Idempotency-Key this request holds (functions/platform/http/idempotency.ts). */
  idempotency?: { scope: string; key: string; token: string };
}

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResponse = APIGatewayProxyStructuredResultV2;
export type HttpContext = Context & { state: RequestState };
export type HttpMiddyRequest = Request<HttpEvent, HttpResponse, Error, HttpContext>;

/** A request body of one of the route's `rawBody` content types. */
export interface RawRequestBody {
  /** Lower case, without parameters (`text/csv`). */
  contentType: string;
  bytes: Buffer;
}

/** A body that is not JSON (an HTML page, a script), sent as is with its own content type. */
export interface RawBody {
  contentType: string;
  body: string;
  /** `body` is base64 of bytes (e.g. gzip), which API Gateway decodes before sending. */
  isBase64Encoded?: boolean;
}

/**
 * What a handler returns: the kernel serialises `body` to JSON, or sends `raw` as is, and adds the
 * request id header. A result has one or the other, never both.
 */
export type HttpResult =
  | { status: number; body?: unknown; raw?: undefined; headers?: Record<string, string> }
  | { status: number; raw: RawBody; body?: undefined; headers?: Record<string, string> };
