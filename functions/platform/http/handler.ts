import middy from '@middy/core';
import type { ZodType } from 'zod';
import { authenticate } from './authenticate.js';
import { errorHandler } from './error-handler.js';
import { jsonBody } from './json-body.js';
import { requestContext } from './request-context.js';
import { jsonResponse } from './response.js';
import type { HttpContext, HttpEvent, HttpResponse, HttpResult } from './types.js';
import type { ApiKeyScope, Principal } from '../auth/principal.js';
import { validate } from './validate.js';
import { idempotency } from './idempotency.js';

export interface HttpRouteOptions<B, Q> {
  /** `none`: public; `user`: a dashboard user's JWT only; `user_or_api_key`: either credential. */
  auth: 'none' | 'user' | 'user_or_api_key';
  /** Scope an API key must carry for this route. */
  scope?: ApiKeyScope;
  body?: ZodType<B>;
  query?: ZodType<Q>;
  /**
   * `kernel` (default): writes honour an `Idempotency-Key` header here. `route`: the route keeps its
   * own (start-call completes its key in the transaction that creates the call).
   */
  idempotency?: 'kernel' | 'route';
}

export interface HttpRequest<B, Q, P extends Principal | undefined> {
  requestId: string;
  principal: P;
  body: B;
  query: Q;
  params: Record<string, string>;
  headers: Record<string, string | undefined>;
  event: HttpEvent;
}

type PrincipalFor<A> = A extends 'none' ? undefined : Principal;

/**
 * The one way to write an HTTP handler. Middleware order is the order of checks of API.md:
 * request id → credential (401/403) → JSON body (422) → schema validation (422) → Idempotency-Key
 * (replay or 409) → handler;
 * the error handler maps whatever was thrown.
 */
export function httpHandler<
  B = undefined,
  Q = undefined,
  A extends HttpRouteOptions<B, Q>['auth'] = 'user_or_api_key',
>(
  options: HttpRouteOptions<B, Q> & { auth: A },
  handle: (request: HttpRequest<B, Q, PrincipalFor<A>>) => Promise<HttpResult>,
) {
  const middlewares = [
    requestContext(),
    errorHandler(),
    authenticate({ mode: options.auth, scope: options.scope }),
    jsonBody(),
    validate({ body: options.body, query: options.query }),
    ...(options.idempotency === 'route' ? [] : [idempotency()]),
  ];
  return middy<HttpEvent, HttpResponse, Error, HttpContext>()
    .use(middlewares)
    .handler(async (event, context) => {
      const { state } = context;
      const result = await handle({
        requestId: state.requestId,
        principal: state.principal as PrincipalFor<A>,
        body: state.body as B,
        query: state.query as Q,
        params: (event.pathParameters ?? {}) as Record<string, string>,
        headers: lowerCaseHeaders(event.headers),
        event,
      });
      return jsonResponse(result.status, result.body, state.requestId, result.headers);
    });
}

function lowerCaseHeaders(headers: HttpEvent['headers']): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers ?? {})) out[name.toLowerCase()] = value;
  return out;
}
