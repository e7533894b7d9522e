import { createHash, randomUUID } from 'node:crypto';
import { Entity } from './entity.js';
import { clock } from './clock.js';
import { conflict, ValidationError } from './errors.js';
import { entityConfig, isConditionFailure } from './table.js';
import { primaryIndex } from './keys.js';

/**
 * `Idempotency-Key` on writes (docs/api.md conventions): keys are per scope (the workspace, else the
 * organisation, else the caller) and kept 24 hours. The first request claims the key (a conditional
 * put) and completes it with its response; start-call completes it inside the transaction that
 * creates the call. A retry with the same request gets the first response; with another request, 409;
 * while the first is still running, 409. A refusal gives the key back; a claim whose request crashed
 * lapses after `LEASE_MS`, so the key does not stay blocked.
 *
 *   idempotency key   pk IDEM#<scope>#<key>   sk IDEM   (TTL 24 h)
 */
export const IdempotencyEntity = new Entity(
  {
    model: { entity: 'idempotencyKey', version: '1', service: 'va' },
    attributes: {
      scope: { type: 'string', required: true },
      key: { type: 'string', required: true },
      requestHash: { type: 'string', required: true },
      state: { type: ['in_flight', 'completed'] as const, required: true },
      /** Who holds an in-flight claim, and until when (a crashed request's claim lapses). */
      token: { type: 'string', required: true },
      lockedUntil: { type: 'number', required: true },
      callId: { type: 'string' },
      /** The first response, served again to retries. */
      response: { type: 'string' },
      createdAt: { type: 'string', required: true },
      /** Epoch seconds; DynamoDB's TTL removes the record after 24 hours. */
      expiresAt: { type: 'number', required: true, field: 'expires_at' },
    },
    indexes: {
      byKey: primaryIndex(['scope', 'key'], 'IDEM#${scope}#${key}', [], 'IDEM'),
    },
  },
  entityConfig(),
);
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
export const LEASE_MS = 30_000;
export const IDEMPOTENCY_MISMATCH = 'Idempotency-Key was already used with a different request';
export const IDEMPOTENCY_IN_FLIGHT = 'A request with this Idempotency-Key is still in progress';

/** The header's key, or undefined; a key that is empty, too long or not printable ASCII is 422. */
export function idempotencyKeyFrom(headers: Record<string, string | undefined>): string | undefined {
  const value = headers['idempotency-key'];
  if (value === undefined) return undefined;
  if (!/^[\x21-\x7E]{1,255}$/.test(value)) {
    throw new ValidationError([
      {
        type: 'value_error',
        loc: ['header', 'idempotency-key'],
        msg: 'Value error, Idempotency-Key must be 1 to 255 printable ASCII characters',
        input: value,
      },
    ]);
  }
  return value;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value as Record<string, unknown>)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/** The same request (whatever the order of its fields) has the same hash. */
export const requestHash = (request: unknown): string =>
  createHash('sha256')
    .update(JSON.stringify(canonical(request)))
    .digest('hex');

export type Claim = { kind: 'claimed'; token: string } | { kind: 'replay'; response: unknown };

export async function claimIdempotencyKey(scope: string, key: string, hash: string): Promise<Claim> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const now = clock.now();
    const nowSeconds = Math.floor(now.getTime() / 1000);
    const token = randomUUID();
    try {
      await IdempotencyEntity.put({
        scope,
        key,
        requestHash: hash,
        state: 'in_flight',
        token,
        lockedUntil: now.getTime() + LEASE_MS,
        createdAt: now.toISOString(),
        expiresAt: nowSeconds + IDEMPOTENCY_TTL_SECONDS,
      })
        .where(
          (attr, op) =>
            `${op.notExists(attr.key)} OR ${op.lt(attr.expiresAt, nowSeconds)} OR ` +
            `(${op.eq(attr.state, 'in_flight')} AND ${op.lt(attr.lockedUntil, now.getTime())})`,
        )
        .go({ response: 'none' });
      return { kind: 'claimed', token };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    const { data: existing } = await IdempotencyEntity.get({ scope, key }).go({ consistent: true });
    if (!existing) continue; // released meanwhile: claim again
    if (existing.requestHash !== hash) throw conflict(IDEMPOTENCY_MISMATCH);
    if (existing.state === 'completed' && existing.response)
      return { kind: 'replay', response: JSON.parse(existing.response) };
    throw conflict(IDEMPOTENCY_IN_FLIGHT);
  }
  throw conflict(IDEMPOTENCY_IN_FLIGHT);
}

/** Gives the key back after a refusal (404, 402, 429…), so a later retry is decided afresh. */
export async function releaseIdempotencyKey(scope: string, key: string, token: string): Promise<void> {
  try {
    await IdempotencyEntity.delete({ scope, key })
      .where((attr, op) => `${op.eq(attr.token, token)} AND ${op.eq(attr.state, 'in_flight')}`)
      .go({ response: 'none' });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** Records the response of a claimed key, for retries to get it again. */
export async function completeIdempotencyKey(
  scope: string,
  key: string,
  token: string,
  response: unknown,
): Promise<void> {
  try {
    await IdempotencyEntity.patch({ scope, key })
      .set({ state: 'completed', response: JSON.stringify(response) })
      .where((attr, op) => `${op.eq(attr.token, token)} AND ${op.eq(attr.state, 'in_flight')}`)
      .go({ response: 'none' });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
