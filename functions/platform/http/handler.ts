import middy from '@middy/core';
import { authenticate } from './authenticate.js';
import { errorHandler } from './error-handler.js';
import { jsonBody } from './json-body.js';
import { requestContext, withRequestLogKeys } from './request-context.js';
import { jsonResponse, resultResponse } from './response.js';
import type { HttpContext, HttpEvent, HttpResponse, HttpResult, RawRequestBody } from './types.js';
import type { ApiKeyPrincipal, Principal, UserPrincipal } from '../auth/principal.js';
import { validate } from './validate.js';
import { idempotency } from './idempotency.js';
import { openCursor, sealCursor } from '../pagination.js';
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
  /** Milliseconds before the function times out (Lambda's context; locally lib/local/invoke.ts's). */
  remainingMs(): number;
}

type PrincipalFor<A> = A extends 'none'
  ? undefined
  : A extends 'api_key'
    ? ApiKeyPrincipal
    : A extends 'user'
      ? UserPrincipal
      : Principal;

export type LambdaHttpHandler = (event: HttpEvent, context: HttpContext) => Promise<HttpResponse>;

/** A route and the code that serves it, ready for its domain's `domainHandler`. */
export interface RouteHandler {
  route: Route<unknown, unknown>;
  handler: LambdaHttpHandler;
}

/**
 * Serves one declared route. Middleware order is the order of checks of the API contract:
 * request id → credential (401/403) → JSON body (422) → schema validation (422; but a viewer's write
 * to a workspace is 403 first: write-guard.ts) → Idempotency-Key
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
      await openListCursor(state.query);
      const result = await handle({
        requestId: state.requestId,
        principal: state.principal as PrincipalFor<A>,
        body: state.body as B,
        raw: state.raw,
        query: state.query as Q,
        params: (event.pathParameters ?? {}) as Record<string, string>,
        headers: lowerCaseHeaders(event.headers),
        event,
        remainingMs: () =>
          typeof context.getRemainingTimeInMillis === 'function'
            ? context.getRemainingTimeInMillis()
            : Number.POSITIVE_INFINITY,
      });
      return resultResponse(await sealNextCursor(result), state.requestId);
    });
  return {
    route: route as Route<unknown, unknown>,
    handler: withRequestLogKeys(handler as LambdaHttpHandler),
  };
}

/** A list's `cursor` as sent is sealed (platform/pagination.ts): the handler reads the plain one. */
async function openListCursor(query: unknown): Promise<void> {
  const list = query as { cursor?: unknown } | undefined;
  if (typeof list?.cursor === 'string') list.cursor = await openCursor(list.cursor);
}

/** A list's `next_cursor` leaves sealed. */
async function sealNextCursor(result: HttpResult): Promise<HttpResult> {
  const body = result.body as { next_cursor?: unknown } | undefined;
  if (result.raw || typeof body?.next_cursor !== 'string') return result;
  return { ...result, body: { ...body, next_cursor: await sealCursor(body.next_cursor) } };
}

/** A domain's HTTP function; `loadAll` imports every route's module and checks it (for tests). */
export type DomainHandler = LambdaHttpHandler & { loadAll(): Promise<void> };

/** A route's module, imported on the route's first request (a function returning a dynamic import of a handlers/ file). */
export type RouteModule = () => Promise<{ handler: RouteHandler }>;

/**
 * The one Lambda handler of a domain: dispatches on the event's `routeKey`, which API Gateway (or the
 * local gateway) has already matched against the declared routes. Each route's implementation is given
 * as its module, imported on the route's first request, so a cold start builds only what the route
 * needs (its entities, services and clients), not the whole domain's. Every declared route must have
 * a module and every module a declared route (checked when the module loads); a module must implement
 * its own route (checked when it is imported; test/unit/domain-handler.test.ts imports every domain's).
 */
export function domainHandler<R extends RouteTable>(
  routes: R,
  modules: { [K in keyof R]: RouteModule | RouteHandler },
): DomainHandler {
  const byKey = new Map<string, () => Promise<LambdaHttpHandler>>();
  for (const name of Object.keys(routes)) {
    const given = modules[name];
    const route = routes[name];
    if (!given) throw new Error(`Route ${name} (${routeKey(route)}) has no handler of its own`);
    let loaded: Promise<LambdaHttpHandler> | undefined;
    const load = async (): Promise<LambdaHttpHandler> => {
      const implementation = typeof given === 'function' ? (await given()).handler : given;
      if (implementation.route !== route) {
        throw new Error(`Route ${name} (${routeKey(route)}) has no handler of its own`);
      }
      return implementation.handler;
    };
    if (typeof given !== 'function' && given.route !== route) {
      throw new Error(`Route ${name} (${routeKey(route)}) has no handler of its own`);
    }
    byKey.set(routeKey(route), () => {
      loaded ??= load().catch((error: unknown) => {
        loaded = undefined;
        throw error;
      });
      return loaded;
    });
  }
  const extra = Object.keys(modules).filter((name) => !(name in routes));
  if (extra.length > 0) throw new Error(`Handlers without a declared route: ${extra.join(', ')}`);

  const serve: LambdaHttpHandler = async (event, context) => {
    const handler = byKey.get(event.routeKey);
    if (!handler) return jsonResponse(404, { error: 'Not found' }, event.requestContext?.requestId ?? '');
    return (await handler())(event, context);
  };
  return Object.assign(serve, {
    loadAll: async () => {
      for (const load of byKey.values()) await load();
    },
  });
}

function lowerCaseHeaders(headers: HttpEvent['headers']): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers ?? {})) out[name.toLowerCase()] = value;
  return out;
}
