import type { MiddlewareObj } from '@middy/core';
import { randomUUID } from 'node:crypto';
import { runWithLogKeys } from '../logger.js';
import type { HttpContext, HttpEvent, HttpResponse } from './types.js';

const ids = new WeakMap<HttpEvent, string>();

/** The request's id: API Gateway's, else a new one (the same for the same event). */
export function requestIdOf(event: HttpEvent): string {
  let id = ids.get(event);
  if (!id) {
    id = event.requestContext?.requestId || randomUUID();
    ids.set(event, id);
  }
  return id;
}

/**
 * Runs an HTTP handler with its request's `request_id` and `route` on every log line it writes
 * (functions/platform/logger.ts: per invocation, never on the shared logger).
 */
export function withRequestLogKeys<C>(
  handler: (event: HttpEvent, context: C) => Promise<HttpResponse>,
): (event: HttpEvent, context: C) => Promise<HttpResponse> {
  return (event, context) =>
    runWithLogKeys({ request_id: requestIdOf(event), route: event.routeKey }, () => handler(event, context));
}

/** Gives every request an id (API Gateway's, else a new one) for its response and its handler. */
export const requestContext = (): MiddlewareObj<HttpEvent, HttpResponse, Error, HttpContext> => ({
  name: 'requestContext',
  before: (request) => {
    request.context.state = { requestId: requestIdOf(request.event) };
  },
});
