import { createHash } from 'node:crypto';
import type { MiddlewareObj } from '@middy/core';
import { actorId, type Principal } from '../auth/principal.js';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  idempotencyKeyFrom,
  releaseIdempotencyKey,
  requestHash,
} from '../idempotency.js';
import { logger } from '../logger.js';
import type { HttpContext, HttpEvent, HttpResponse } from './types.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Whose an `Idempotency-Key` is: the caller's (a user or an API key), within the workspace or
 * organisation of the path — as a payment provider's keys are per account and key. Two API keys of one
 * workspace, or two members, never share a key, so one caller's retry never replays another's
 * response. The one rule for every write: the kernel's middleware below and the routes that keep
 * their own key (start-call completes it in the call's transaction) both scope keys with it.
 */
export function idempotencyScope(
  params: { workspace_id?: string; organisation_id?: string },
  principal: Principal,
): string {
  return `${params.workspace_id ?? params.organisation_id ?? 'user'}#${actorId(principal)}`;
}

/**
 * `Idempotency-Key` on every write route (docs/api.md conventions): the same key with the same request
 * within 24 h answers the first response again (header `idempotent-replayed: true`); with another
 * request, 409; while the first is running, 409. Keys belong to the caller within the workspace or
 * organisation of the path, so a replay never hands one caller's response to another. Responses of
 * 5xx and refusals give the key back, so a retry is decided afresh.
 */
export const idempotency = (): MiddlewareObj<HttpEvent, HttpResponse, Error, HttpContext> => ({
  name: 'idempotency',
  before: async (request) => {
    const { event, context } = request;
    const method = event.requestContext?.http?.method ?? '';
    const principal = context.state.principal;
    if (!WRITES.has(method) || !principal) return undefined;
    const headers: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(event.headers ?? {})) headers[name.toLowerCase()] = value;
    const key = idempotencyKeyFrom(headers);
    if (!key) return undefined;
    const scope = idempotencyScope(event.pathParameters ?? {}, principal);
    const { raw } = context.state;
    const body = raw
      ? { raw_sha256: createHash('sha256').update(raw.bytes).digest('hex') }
      : (context.state.body ?? null);
    const hash = requestHash({ method, path: event.rawPath, body });
    const claim = await claimIdempotencyKey(scope, key, hash);
    if (claim.kind === 'replay') {
      const first = claim.response as HttpResponse;
      return {
        ...first,
        headers: { ...first.headers, 'x-request-id': context.state.requestId, 'idempotent-replayed': 'true' },
      };
    }
    context.state.idempotency = { scope, key, token: claim.token };
    return undefined;
  },
  after: async (request) => {
    const held = request.context.state.idempotency;
    const response = request.response;
    if (!held || !response || typeof response === 'string') return;
    if ((response.statusCode ?? 200) >= 500) {
      await releaseIdempotencyKey(held.scope, held.key, held.token);
      return;
    }
    const { 'x-request-id': _requestId, ...headers } = response.headers ?? {};
    await completeIdempotencyKey(held.scope, held.key, held.token, {
      statusCode: response.statusCode,
      headers,
      body: response.body,
    });
  },
  onError: async (request) => {
    const held = request.context.state.idempotency;
    if (!held) return;
    await releaseIdempotencyKey(held.scope, held.key, held.token).catch((error: unknown) =>
      logger.warn('could not release idempotency key', { error: String(error) }),
    );
  },
});
