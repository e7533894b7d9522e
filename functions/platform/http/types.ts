import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Request } from '@middy/core';
import type { Principal } from '../auth/principal.js';

/** What the middleware stack learns about a request before the handler runs. */
export interface RequestState {
  requestId: string;
  principal?: Principal;
  body?: unknown;
  query?: unknown;
  /** An Idempotency-Key this request holds (functions/platform/http/idempotency.ts). */
  idempotency?: { scope: string; key: string; token: string };
}

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResponse = APIGatewayProxyStructuredResultV2;
export type HttpContext = Context & { state: RequestState };
export type HttpMiddyRequest = Request<HttpEvent, HttpResponse, Error, HttpContext>;

/** What a handler returns: the kernel serialises it to JSON and adds the request id header. */
export interface HttpResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}
