import { queryPage } from '../platform/pagination.js';
import { continuedAtOldKey, oldKeyPage, oldKeyPosition } from './legacy-listing.js';
import { randomUUID } from 'node:crypto';
import {
  entityKey,
  entityWrite,
  isConditionFailure,
  type StoredItem,
  type TableKey,
  type TransactionItem,
} from '../platform/table.js';
import { clock } from '../platform/clock.js';
import { notFound } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { moveFromOldKey } from '../platform/key-moves.js';
import { sendMessage } from '../platform/queue.js';
import {
  attemptClaimed,
  attemptMessage,
  attemptNow,
  CLAIM_MS,
  DeadLetter,
  enqueueAttempt,
  getDelivery,
  urlHash,
  type AttemptResult,
} from './attempts.js';
import {
  deliveryTarget,
  legacyDeliveryKey,
  WebhookDeliveryEntity,
  WebhookEndpointEntity,
  WebhookSecretEntity,
  type DeliveryKind,
  type WebhookDelivery,
  type WebhookSecretRecord,
} from './entities.js';
import { maxAttempts } from './settings.js';
import { activeSecrets } from './signing.js';

/**
 * Webhook deliveries: one record per event sent to an endpoint, with every attempt (attempts.ts
 * makes them). A delivery is created once per id and its first attempt queued (`startDelivery`) — but
 * a post-call webhook's first attempt, which the action makes at once on the claim it wrote with the
 * delivery (`deliveryToWrite`). Also a resend by hand, a test payload, the delivery log and its wire
 * shape.
 */

export const DELIVERY_NOT_FOUND = 'Webhook delivery not found';
/** The GSI key of deliveries that belong to no call (test payloads); `null` on the wire. */
export const NO_CALL = '-';

export interface NewDelivery {
  workspaceId: string;
  organisationId: string;
  /** Chosen by the caller when it must be stable across retries of its own work. */
  deliveryId?: string;
  webhookId?: string;
  eventType: string;
  callId?: string;
  agentId?: string;
  actionId?: string;
  endpointId?: string;
  eventId?: string;
  url: string;
  payload: string;
  kind: DeliveryKind;
}

/** A new delivery's item, as created (pending, no attempt made). */
function newDeliveryItem(input: NewDelivery): WebhookDelivery {
  const now = clock.now().toISOString();
  return {
    workspaceId: input.workspaceId,
    deliveryId: input.deliveryId ?? newId('delivery'),
    organisationId: input.organisationId,
    webhookId: input.webhookId ?? newId('message'),
    eventType: input.eventType,
    callId: input.callId ?? NO_CALL,
    agentId: input.agentId,
    actionId: input.actionId,
    endpointId: input.endpointId,
    eventId: input.eventId,
    url: input.url,
    payload: input.payload,
    kind: input.kind,
    state: 'pending',
    scheduledAttempts: 0,
    maxAttempts: input.kind === 'test' ? 1 : maxAttempts(),
    nextAttemptAt: now,
    attempts: [],
    createdAt: now,
    updatedAt: now,
  };
}

/** Creates the delivery unless it exists (same id): returns the stored one either way. */
export async function createDelivery(input: NewDelivery): Promise<WebhookDelivery> {
  const item = newDeliveryItem(input);
  // An id fixed earlier may name one made before deliveries had their own key: moved first, so the
  // create below finds it (until `migrate calls` has run; nothing is read after).
  if (input.deliveryId)
    await moveFromOldKey(legacyDeliveryKey(input.workspaceId, input.deliveryId), deliveryTarget);
  try {
    const created = await WebhookDeliveryEntity.create(item).go();
    return created.data as WebhookDelivery;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const existing = await getDelivery(input.workspaceId, item.deliveryId);
    if (!existing) throw error;
    return existing;
  }
}

/**
 * A new delivery to write in the caller's own transaction, claimed for its first attempt, which the
 * caller makes once that transaction is written (`attempt`): at once, in the caller's invocation, with
 * no queue message. It is created on the condition that it does not exist (a cancellation on it means
 * it does, and startDelivery is then the way on). The attempt is the scheduled attempt 1, recorded as
 * a queued one is; a retry goes on the queue, and a first attempt that leaves the delivery dead sends
 * its attempt's message anyway, which DeliverWebhook moves to the dead-letter queue as it would have
 * its own. A caller that stops between the write and the attempt must call `queueFirstAttemptIfNone`
 * when it comes back (its own redelivered message): the attempt is then queued, and made once the
 * claim has lapsed.
 */
export function deliveryToWrite(
  input: NewDelivery & { deliveryId: string },
  /**
   * The workspace's signing secret, read by the caller (secretKey, secretFrom): the transaction then
   * also checks that the URL is not disabled for the workspace (a 410), so the attempt reads nothing.
   * A cancellation on that check means it is: startDelivery is the way on, as for an existing delivery.
   */
  secret?: WebhookSecretRecord,
): {
  delivery: WebhookDelivery;
  items: TransactionItem[];
  attempt: () => Promise<AttemptResult>;
} {
  const token = randomUUID();
  const now = clock.now();
  const delivery: WebhookDelivery = {
    ...newDeliveryItem(input),
    claimToken: token,
    claimExpiresAt: new Date(now.getTime() + CLAIM_MS).toISOString(),
  };
  const urlEnabled: TransactionItem = {
    ConditionCheck: {
      Key: entityKey(
        WebhookEndpointEntity.get({
          workspaceId: delivery.workspaceId,
          urlHash: urlHash(delivery.url),
        }).params(),
      ),
      ConditionExpression: 'attribute_not_exists(#state) OR #state <> :disabled',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':disabled': 'disabled' },
    },
  };
  const known = secret ? { inactive: undefined, secrets: activeSecrets(secret, clock.now()) } : undefined;
  return {
    delivery,
    items: [
      entityWrite('Put', WebhookDeliveryEntity.create(delivery).params()),
      ...(secret ? [urlEnabled] : []),
    ],
    attempt: async () => {
      try {
        return await attemptClaimed(delivery, token, 1, known);
      } catch (error) {
        if (!(error instanceof DeadLetter)) throw error;
        await sendMessage('webhookDelivery', attemptMessage(delivery, 1, now));
        return 'dead';
      }
    },
  };
}

/** The key of the workspace's signing secret, to read with other items (secretFrom reads the item). */
export const secretKey = (workspaceId: string): TableKey =>
  entityKey(WebhookSecretEntity.get({ workspaceId }).params());
export const secretFrom = (item: StoredItem | undefined): WebhookSecretRecord | undefined =>
  (item ? (WebhookSecretEntity.parse({ Item: item }).data as WebhookSecretRecord | null) : null) ?? undefined;

/**
 * Queues a delivery's first attempt unless it was made (or the delivery is gone or done). While it is
 * being made under a live claim, queues nothing and answers until when the claim holds: the caller
 * looks again then (the holder may stop before recording it).
 */
export async function queueFirstAttemptIfNone(
  workspaceId: string,
  deliveryId: string,
): Promise<{ claimedUntil?: Date }> {
  const delivery = await getDelivery(workspaceId, deliveryId);
  if (delivery?.state !== 'pending' || delivery.scheduledAttempts !== 0) return {};
  const claimedUntil = Date.parse(delivery.claimExpiresAt ?? '');
  if (claimedUntil > clock.now().getTime()) return { claimedUntil: new Date(claimedUntil) };
  await enqueueAttempt(delivery, 1, clock.now());
  return {};
}

/**
 * Creates a post-call (or event) delivery and queues its first attempt (now). Safe to repeat with the same
 * delivery id: the delivery is created once, and a first attempt already made is not queued again.
 */
export async function startDelivery(input: NewDelivery & { deliveryId: string }): Promise<WebhookDelivery> {
  const delivery = await createDelivery(input);
  if (delivery.state === 'pending' && delivery.scheduledAttempts === 0) {
    await enqueueAttempt(delivery, 1, clock.now());
  }
  return delivery;
}

/** POST …/webhook-deliveries/{id}/resend: one more attempt now, same webhook-id. */
export async function resendDelivery(workspaceId: string, deliveryId: string): Promise<WebhookDelivery> {
  if (!isId('delivery', deliveryId)) throw notFound(DELIVERY_NOT_FOUND);
  const delivery = await getDelivery(workspaceId, deliveryId);
  if (!delivery) throw notFound(DELIVERY_NOT_FOUND);
  return attemptNow(delivery);
}

/** Sends a test payload now to `url`: a delivery of kind `test`, one attempt, never retried. */
export async function sendTestDelivery(input: {
  workspaceId: string;
  organisationId: string;
  agentId: string;
  actionId: string;
  url: string;
  payload: string;
  eventType: string;
}): Promise<WebhookDelivery> {
  const delivery = await createDelivery({ ...input, kind: 'test' });
  return attemptNow(delivery);
}

export async function listDeliveries(
  workspaceId: string,
  options: { callId?: string; endpointId?: string; limit: number; cursor?: string },
): Promise<{ items: WebhookDelivery[]; nextCursor: string | null }> {
  const { callId, endpointId } = options;
  const atOldKey = callId === undefined ? oldKeyPosition(workspaceId, options.cursor) : undefined;
  if (atOldKey) return oldKeyPage(workspaceId, atOldKey, options);
  const page = await queryPage(options.cursor, (cursor) => {
    // `count` (not `limit`): with the endpoint filter, pages until that many match.
    const queryOptions = { order: 'desc' as const, count: options.limit, cursor };
    const base = callId
      ? WebhookDeliveryEntity.query.byCall({ workspaceId, callId })
      : WebhookDeliveryEntity.query.byWorkspace({ workspaceId });
    const filtered = endpointId ? base.where((attr, op) => op.eq(attr.endpointId, endpointId)) : base;
    return filtered.go(queryOptions);
  });
  const listed = { items: page.items as WebhookDelivery[], nextCursor: page.nextCursor };
  // A call's deliveries are on their index (gsi1) wherever they are kept; the workspace's listing
  // index (gsi2) has only those made or moved since deliveries had keys of their own.
  return callId === undefined ? continuedAtOldKey(workspaceId, listed, options) : listed;
}

/** The wire shape of API.md (plus `dead_reason`, `kind`, `created_at` and per-attempt `manual`). */
export function deliveryToWire(delivery: WebhookDelivery) {
  return {
    id: delivery.deliveryId,
    webhook_id: delivery.webhookId,
    event_type: delivery.eventType,
    call_id: delivery.callId === NO_CALL ? null : delivery.callId,
    agent_id: delivery.agentId ?? null,
    action_id: delivery.actionId ?? null,
    endpoint_id: delivery.endpointId ?? null,
    event_id: delivery.eventId ?? null,
    url: delivery.url,
    kind: delivery.kind,
    state: delivery.state,
    next_attempt_at: delivery.state === 'pending' ? (delivery.nextAttemptAt ?? null) : null,
    dead_reason: delivery.deadReason ?? null,
    attempts: delivery.attempts.map((attempt) => ({
      at: attempt.at,
      status_code: attempt.statusCode ?? null,
      latency_ms: attempt.latencyMs,
      error: attempt.error ?? null,
      manual: attempt.manual,
    })),
    created_at: delivery.createdAt,
  };
}
