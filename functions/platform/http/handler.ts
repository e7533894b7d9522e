import middy from '@middy/core';
import { authenticate } from './authenticate.js';
import { errorHandler } from './error-handler.js';
import { jsonBody } from './json-body.js';
import { requestContext } from './request-context.js';
import { jsonResponse, resultResponse } from './response.js';
import type { HttpContext, HttpEvent, HttpResponse, HttpResult, RawRequestBody } from './types.js';
import type { Principal } from '../auth/principal.js';
import { validate } from './validate.js';
import { idempotency } from './idempotency.js';
import { routeKey, type Route, type RouteAuth, type RouteTable } from './route.js';

export interface HttpRequest<B, Q, P extends Principal | undefined> {
  requestId: string;
  principal: P;
  body: B;
  /** The body as sent, when its content type is one of the route's `rawBody` types (`body` is then undefined). */
  raw?: RawRequestBody;
  query: Q;
  params: Record<string, string>;
  headers: Record<string, string | undefined>;
  event: HttpEvent;
}

type PrincipalFor<A> = A extends 'none' ? undefined : Principal;

export type LambdaHttpHandler = (event: HttpEvent, context: HttpContext) => Promise<HttpResponse>;

/** A route and the code that serves it, ready for its domain's `domainHandler`. */
export interface RouteHandler {
  route: Route<unknown, unknown>;
  handler: LambdaHttpHandler;
}

/**
 * Serves one declared route. Middleware order is the order of checks of the API contract:
 * request id → credential (401/403) → JSON body (422) → schema validation (422) → Idempotency-Key
 * (replay or 409) → handler; the error handler maps whatever was thrown. Everything the middleware
 * checks comes from the route's declaration, so the runtime cannot disagree with the documentation.
 */
export function implement<B, Q, A extends RouteAuth>(
  route: Route<B, Q, A>,
  handle: (request: HttpRequest<B, Q, PrincipalFor<A>>) => Promise<HttpResult>,
): RouteHandler {
  const middlewares = [
    requestContext(),
    errorHandler(),
    authenticate({ mode: route.auth, scope: route.scope }),
    jsonBody(route.rawBody),
    validate({ body: route.body, query: route.query }),
    ...(route.idempotency === 'route' ? [] : [idempotency()]),
  ];
  const handler = middy<HttpEvent, HttpResponse, Error, HttpContext>()
    .use(middlewares)
    .handler(async (event, context) => {
      const { state } = context;
      const result = await handle({
        requestId: state.requestId,
        principal: state.principal as PrincipalFor<A>,
        body: state.body as B,
        raw: state.raw,
        query: state.query as Q,
        params: (event.pathParameters ?? {}) as Record<string, string>,
        headers: lowerCaseHeaders(event.headers),
        event,
      });
      return resultResponse(result, state.requestId);
    });
  return { route: route as Route<unknown, unknown>, handler: handler as LambdaHttpHandler };
}

/**
 * The one Lambda handler of a domain: dispatches on the event's `routeKey`, which API Gateway (or the
 * local gateway) has already matched against the declared routes. Every declared route must have
 * exactly its own implementation; a mismatch fails when the module loads, not on a request.
 */
export function domainHandler<R extends RouteTable>(
  routes: R,
  implementations: { [K in keyof R]: RouteHandler },
): LambdaHttpHandler {
  const byKey = new Map<string, LambdaHttpHandler>();
  for (const name of Object.keys(routes)) {
    const implementation = implementations[name];
    if (!implementation || implementation.route !== routes[name]) {
      throw new Error(`Route ${name} (${routeKey(routes[name])}) has no handler of its own`);
    }
    byKey.set(routeKey(routes[name]), implementation.handler);
  }
  const extra = Object.keys(implementations).filter((name) => !(name in routes));
  if (extra.length > 0) throw new Error(`Handlers without a declared route: ${extra.join(', ')}`);

  return async (event, context) => {
    const handler = byKey.get(event.routeKey);
    if (!handler) return jsonResponse(404, { error: 'Not found' }, event.requestContext?.requestId ?? '');
    return handler(event, context);
  };
}

function lowerCaseHeaders(headers: HttpEvent['headers']): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers ?? {})) out[name.toLowerCase()] = value;
  return out;
}
