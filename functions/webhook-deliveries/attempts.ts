import { createHash, randomUUID } from 'node:crypto';
import { batchGetStoredItems, entityKey, isConditionFailure, type TableKey } from '../platform/table.js';
import { clock } from '../platform/clock.js';
import { conflict } from '../platform/errors.js';
import { logger } from '../platform/logger.js';
import { errorName } from '../platform/programming-errors.js';
import { moveFromOldKey } from '../platform/key-moves.js';
import { sendMessage } from '../platform/queue.js';
import type { AttemptMessage } from '../platform/queue-messages.js';
import {
  EventEndpointEntity,
  WebhookDeliveryEntity,
  WebhookEndpointEntity,
  WebhookSecretEntity,
  deliveryTarget,
  legacyDeliveryKey,
  readDelivery,
  type DeliveryAttempt,
  type EventEndpoint,
  type WebhookDelivery,
} from './entities.js';
import { postWebhook, type HttpAttempt } from '../platform/outbound-http/http-attempt.js';
import { notifyEndpointDisabled } from './notify.js';
import {
  classifyStatus,
  nextStep,
  parseRetryAfter,
  sqsDelayFor,
  type AttemptOutcome,
  type NextStep,
} from './retry.js';
import { getOrCreateSecret, signingSecrets } from './secrets.js';
import { allowedHosts, requireHttps } from '../platform/outbound-http/settings.js';
import { retrySchedule } from './settings.js';
import { activeSecrets, signatureHeaders } from './signing.js';

/**
 * A webhook delivery's attempts. Scheduled attempts travel as messages on the webhookDelivery queue,
 * one message per attempt, delayed until due (waits longer than SQS's 15 minutes are re-enqueued until
 * due); a resend by hand or a test payload is one attempt now (`attemptNow`). Each attempt is claimed
 * with a conditional write, so a redelivered or duplicated message never makes a second request; it is
 * signed with the workspace's secrets, sent once (http-attempt.ts) and recorded with the state it
 * leads to (retry.ts). A 410 disables the URL for the workspace and tells its admins.
 *
 * Dead-lettering: when the last attempt fails (or the receiver answers 410/another 4xx), the
 * delivery is marked `dead` at once and the queue message of that attempt is reported failed on
 * every receive, so the queue's redrive policy moves it into the webhook-delivery DLQ.
 */

/** How long a claim on a delivery holds: one attempt (15 s) and its bookkeeping. */
export const CLAIM_MS = 60_000;
const USER_AGENT = 'VoiceAgent-Webhooks/1.0';

/** Thrown for the message of the attempt that made a delivery dead: it must end in the DLQ. */
export class DeadLetter extends Error {
  constructor(
    readonly deliveryId: string,
    readonly reason: string,
  ) {
    super(`webhook delivery ${deliveryId} is dead (${reason}); its message goes to the dead-letter queue`);
    this.name = 'DeadLetter';
  }
}

export const urlHash = (url: string) => createHash('sha256').update(url).digest('hex').slice(0, 32);

export async function getDelivery(workspaceId: string, deliveryId: string): Promise<WebhookDelivery | null> {
  const { data } = await readDelivery(workspaceId, deliveryId);
  // Made before deliveries had their own key (until `migrate calls` has run): moved now, then read.
  if (data || !(await moveFromOldKey(legacyDeliveryKey(workspaceId, deliveryId), deliveryTarget)))
    return data;
  return (await readDelivery(workspaceId, deliveryId)).data;
}

export const attemptMessage = (
  delivery: Pick<WebhookDelivery, 'workspaceId' | 'deliveryId'>,
  attempt: number,
  dueAt: Date,
): AttemptMessage => ({
  type: 'webhook.attempt',
  workspace_id: delivery.workspaceId,
  delivery_id: delivery.deliveryId,
  attempt,
  due_at: dueAt.toISOString(),
});

export async function enqueueAttempt(
  delivery: Pick<WebhookDelivery, 'workspaceId' | 'deliveryId'>,
  attempt: number,
  dueAt: Date,
) {
  await sendMessage('webhookDelivery', attemptMessage(delivery, attempt, dueAt), {
    delaySeconds: sqsDelayFor(dueAt, clock.now()),
  });
  // Recorded so that a redelivered message of attempt n can tell whether attempt n + 1 was queued
  // (`enqueued <= n` re-queues it). The first attempt needs no record: nothing before it reads one,
  // and 1 decides as an absent record does, so a delivery's first attempt saves the write.
  if (attempt === 1) return;
  await WebhookDeliveryEntity.patch({ workspaceId: delivery.workspaceId, deliveryId: delivery.deliveryId })
    .set({ enqueuedAttempt: attempt })
    .go()
    .catch((error: unknown) => {
      // The attempt is queued already: without the record a redelivered message of attempt n queues
      // n + 1 again, and that attempt's claim sends it once. Nothing is lost; worth a line.
      logger.warn('webhook attempt queued, its record not written', { attempt, error: errorName(error) });
    });
}

/**
 * Takes the right to make an attempt: nobody else holds a live claim (and, when scheduled, it is
 * attempt n's turn of a pending delivery). Undefined when the condition fails (or there is no such
 * delivery).
 */
async function claim(
  delivery: Pick<WebhookDelivery, 'workspaceId' | 'deliveryId'>,
  scheduledAttempt?: number,
): Promise<{ token: string; delivery: WebhookDelivery } | undefined> {
  const token = randomUUID();
  const now = clock.now();
  try {
    const updated = await WebhookDeliveryEntity.patch({
      workspaceId: delivery.workspaceId,
      deliveryId: delivery.deliveryId,
    })
      .set({ claimToken: token, claimExpiresAt: new Date(now.getTime() + CLAIM_MS).toISOString() })
      .where((attr, op) => {
        const free = `(${op.notExists(attr.claimToken)} OR ${op.lt(attr.claimExpiresAt, now.toISOString())})`;
        if (scheduledAttempt === undefined) return free;
        return `${op.eq(attr.state, 'pending')} AND ${op.eq(attr.scheduledAttempts, scheduledAttempt - 1)} AND ${free}`;
      })
      .go({ response: 'all_new' });
    return { token, delivery: updated.data as WebhookDelivery };
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** Signs (with the workspace's secrets, read now unless given) and sends the delivery's payload once. */
async function send(delivery: WebhookDelivery, given?: string[]): Promise<{ http: HttpAttempt; at: Date }> {
  const at = clock.now();
  const secrets = given ?? (await signingSecrets(delivery.workspaceId));
  const headers = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    ...signatureHeaders({ webhookId: delivery.webhookId, timestamp: at, payload: delivery.payload, secrets }),
  };
  const http = await postWebhook({
    url: delivery.url,
    body: delivery.payload,
    headers,
    allowedHosts: allowedHosts(),
    requireHttps: requireHttps(),
  });
  return { http, at };
}

function outcomeOf(http: HttpAttempt, at: Date): AttemptOutcome {
  if (http.refused) return { kind: 'refused' };
  return classifyStatus(http.statusCode, parseRetryAfter(http.retryAfter, at));
}

function attemptRecord(http: HttpAttempt, at: Date, number: number, manual: boolean): DeliveryAttempt {
  return {
    at: at.toISOString(),
    latencyMs: http.latencyMs,
    number,
    manual,
    ...(http.statusCode !== undefined ? { statusCode: http.statusCode } : {}),
    ...(http.error !== undefined ? { error: http.error } : {}),
  };
}

/**
 * What a scheduled attempt needs besides the delivery, in one read: whether its URL is disabled for
 * the workspace (a 410), the signing secrets, and for an event delivery whether its webhook endpoint
 * was deleted (`endpoint_deleted`) or disabled (`endpoint_disabled`) since it was queued: what the
 * customer turned off stops at once, retries included. The secret is made here on a workspace's
 * first delivery (getOrCreateSecret).
 */
async function attemptContext(
  delivery: WebhookDelivery,
): Promise<{ inactive: string | undefined; secrets: string[] }> {
  const { workspaceId } = delivery;
  const eventEndpointId = delivery.kind === 'event' ? delivery.endpointId : undefined;
  const keys: TableKey[] = [
    entityKey(WebhookEndpointEntity.get({ workspaceId, urlHash: urlHash(delivery.url) }).params()),
    entityKey(WebhookSecretEntity.get({ workspaceId }).params()),
    ...(eventEndpointId
      ? [entityKey(EventEndpointEntity.get({ workspaceId, endpointId: eventEndpointId }).params())]
      : []),
  ];
  const [endpointItem, secretItem, eventEndpointItem] = await batchGetStoredItems(keys);
  const endpointState = endpointItem ? WebhookEndpointEntity.parse({ Item: endpointItem }).data : null;
  const secret =
    (secretItem ? WebhookSecretEntity.parse({ Item: secretItem }).data : null) ??
    (await getOrCreateSecret(workspaceId));
  const eventEndpoint = eventEndpointItem
    ? (EventEndpointEntity.parse({ Item: eventEndpointItem }).data as EventEndpoint | null)
    : null;
  const inactive =
    endpointState?.state === 'disabled'
      ? 'endpoint_disabled'
      : !eventEndpointId
        ? undefined
        : !eventEndpoint
          ? 'endpoint_deleted'
          : eventEndpoint.enabled
            ? undefined
            : 'endpoint_disabled';
  return { inactive, secrets: activeSecrets(secret, clock.now()) };
}

/** A 410: the endpoint is disabled for this workspace and its admins are told (once per disabling). */
async function disableEndpoint(delivery: WebhookDelivery): Promise<void> {
  const now = clock.now().toISOString();
  const key = { workspaceId: delivery.workspaceId, urlHash: urlHash(delivery.url) };
  try {
    await WebhookEndpointEntity.upsert({
      ...key,
      url: delivery.url,
      state: 'disabled',
      disabledAt: now,
      disabledReason: 'The endpoint answered 410 Gone',
      disabledBy: delivery.deliveryId,
      updatedAt: now,
    })
      .where((attr, op) => `${op.notExists(attr.state)} OR ${op.ne(attr.state, 'disabled')}`)
      .go();
  } catch (error) {
    if (isConditionFailure(error)) return; // already disabled: the workspace was told then
    throw error;
  }
  await notifyEndpointDisabled({
    workspaceId: delivery.workspaceId,
    organisationId: delivery.organisationId,
    url: delivery.url,
    deliveryId: delivery.deliveryId,
  });
}

/** Clears a 410's disabling of the URL for this workspace (a resend that succeeded, or the customer re-enabling it). */
export async function enableEndpoint(workspaceId: string, url: string): Promise<void> {
  await WebhookEndpointEntity.patch({ workspaceId, urlHash: urlHash(url) })
    .set({ state: 'enabled', updatedAt: clock.now().toISOString() })
    .remove(['disabledAt', 'disabledReason', 'disabledBy'])
    .where((attr, op) => op.eq(attr.state, 'disabled'))
    .go()
    .catch((error: unknown) => {
      if (!isConditionFailure(error)) throw error;
    });
}

export type AttemptResult = 'sent' | 'retry_scheduled' | 'rescheduled' | 'noop' | 'busy' | 'dead';

/**
 * Handles one message of the webhookDelivery queue. Returns what happened; throws DeadLetter for
 * the message of the attempt that made the delivery dead (so it lands in the DLQ).
 */
export async function processAttemptMessage(message: AttemptMessage): Promise<AttemptResult> {
  const now = clock.now();
  const dueAt = new Date(message.due_at);
  if (dueAt.getTime() - now.getTime() > 1000) {
    // Not due yet (a wait longer than SQS's 15-minute delay): come back later.
    await sendMessage('webhookDelivery', message, { delaySeconds: sqsDelayFor(dueAt, now) });
    return 'rescheduled';
  }
  // The normal case — attempt n of a pending delivery that made n - 1 attempts, with nobody else
  // holding it — is exactly the claim's condition: claim it straight away. Anything else fails the
  // condition and is decided on a read of the delivery.
  const claimed = await claim(
    { workspaceId: message.workspace_id, deliveryId: message.delivery_id },
    message.attempt,
  );
  if (!claimed) {
    const delivery = await getDelivery(message.workspace_id, message.delivery_id);
    if (!delivery) return 'noop';
    if (delivery.state === 'dead' && delivery.deadLetterAttempt === message.attempt) {
      throw new DeadLetter(delivery.deliveryId, delivery.deadReason ?? 'dead');
    }
    if (delivery.state !== 'pending') return 'noop';
    if (delivery.scheduledAttempts >= message.attempt) {
      // This attempt was made already; make sure the next one was queued (a crash may have lost it).
      const enqueued = delivery.enqueuedAttempt ?? 0;
      if (
        delivery.scheduledAttempts === message.attempt &&
        delivery.nextAttemptAt &&
        enqueued <= message.attempt
      ) {
        await enqueueAttempt(delivery, message.attempt + 1, new Date(delivery.nextAttemptAt));
      }
      return 'noop';
    }
    if (delivery.scheduledAttempts < message.attempt - 1) return 'noop';
    // Its turn, but someone holds a live claim on it (a duplicate message being handled): look again
    // once the claim expires.
    const retryAt = new Date(Math.max(Date.parse(delivery.claimExpiresAt ?? '') || 0, now.getTime()) + 1000);
    await sendMessage('webhookDelivery', message, { delaySeconds: sqsDelayFor(retryAt, clock.now()) });
    return 'busy';
  }
  return attemptClaimed(claimed.delivery, claimed.token, message.attempt);
}

/**
 * Makes scheduled attempt n of a delivery under our claim `token` and records it with the state it
 * leads to: sent, a retry queued, or dead (DeadLetter thrown, for the attempt's message).
 */
export async function attemptClaimed(
  current: WebhookDelivery,
  token: string,
  attempt: number,
  /** Known already (the caller checked the URL and read the secrets); read here otherwise. */
  known?: { inactive: string | undefined; secrets: string[] },
): Promise<'sent' | 'retry_scheduled'> {
  const { inactive, secrets } = known ?? (await attemptContext(current));
  if (inactive) {
    await finishScheduled(
      current,
      token,
      attempt,
      undefined,
      { kind: 'dead', reason: 'exhausted' },
      inactive,
    );
    throw new DeadLetter(current.deliveryId, inactive);
  }

  const { http, at } = await send(current, secrets);
  const outcome = outcomeOf(http, at);
  const last = attempt >= current.maxAttempts;
  let step: NextStep = nextStep(outcome, attempt, retrySchedule());
  if (step.kind === 'retry' && last) step = { kind: 'dead', reason: 'exhausted' };
  if (outcome.kind === 'gone') await disableEndpoint(current);
  const updated = await finishScheduled(
    current,
    token,
    attempt,
    attemptRecord(http, at, attempt, false),
    step,
  );
  if (step.kind === 'succeeded') return 'sent';
  if (step.kind === 'retry') {
    await enqueueAttempt(updated, attempt + 1, new Date(updated.nextAttemptAt ?? clock.now().toISOString()));
    return 'retry_scheduled';
  }
  logger.warn('webhook delivery dead', {
    deliveryId: current.deliveryId,
    reason: step.reason,
    url: current.url,
  });
  throw new DeadLetter(current.deliveryId, step.reason);
}

/** Records scheduled attempt n under our claim, and the state it leads to. */
async function finishScheduled(
  delivery: WebhookDelivery,
  token: string,
  attempt: number,
  record: DeliveryAttempt | undefined,
  step: NextStep,
  deadReasonOverride?: string,
): Promise<WebhookDelivery> {
  const now = clock.now();
  const base = WebhookDeliveryEntity.patch({
    workspaceId: delivery.workspaceId,
    deliveryId: delivery.deliveryId,
  });
  const withAttempt = record ? base.append({ attempts: [record] }) : base;
  const set: Record<string, unknown> = {
    updatedAt: now.toISOString(),
    scheduledAttempts: record ? attempt : delivery.scheduledAttempts,
  };
  const remove: ('claimToken' | 'claimExpiresAt' | 'nextAttemptAt')[] = ['claimToken', 'claimExpiresAt'];
  if (step.kind === 'succeeded') {
    set.state = 'succeeded';
    remove.push('nextAttemptAt');
  } else if (step.kind === 'retry') {
    set.nextAttemptAt = new Date(now.getTime() + step.delaySeconds * 1000).toISOString();
  } else {
    set.state = 'dead';
    set.deadReason = deadReasonOverride ?? step.reason;
    set.deadLetterAttempt = attempt;
    remove.push('nextAttemptAt');
  }
  const updated = await withAttempt
    .set(set as never)
    .remove(remove)
    .where((attr, op) => op.eq(attr.claimToken, token))
    .go({ response: 'all_new' });
  return updated.data as WebhookDelivery;
}

/**
 * One attempt now, outside the schedule: a resend by hand, or a test payload. Same `webhook-id`.
 * A 2xx makes the delivery `succeeded` (and enables an endpoint a 410 had disabled); a failure
 * leaves a scheduled delivery's state as it was, and makes a test delivery `dead` (tests are not retried).
 */
export async function attemptNow(delivery: WebhookDelivery): Promise<WebhookDelivery> {
  const claimed = await claim(delivery);
  if (!claimed) throw conflict('A delivery attempt is already in progress');
  const { token } = claimed;
  const { http, at } = await send(claimed.delivery);
  const outcome = outcomeOf(http, at);
  if (outcome.kind === 'gone') await disableEndpoint(claimed.delivery);
  if (outcome.kind === 'succeeded') await enableEndpoint(delivery.workspaceId, delivery.url);
  const set: Record<string, unknown> = { updatedAt: clock.now().toISOString() };
  const remove: ('claimToken' | 'claimExpiresAt' | 'nextAttemptAt')[] = ['claimToken', 'claimExpiresAt'];
  if (outcome.kind === 'succeeded') {
    set.state = 'succeeded';
    remove.push('nextAttemptAt');
  } else if (claimed.delivery.kind === 'test') {
    set.state = 'dead';
    set.deadReason = outcome.kind === 'retryable' ? 'test_failed' : outcome.kind;
    remove.push('nextAttemptAt');
  }
  const updated = await WebhookDeliveryEntity.patch({
    workspaceId: delivery.workspaceId,
    deliveryId: delivery.deliveryId,
  })
    .append({ attempts: [attemptRecord(http, at, 0, true)] })
    .set(set as never)
    .remove(remove)
    .where((attr, op) => op.eq(attr.claimToken, token))
    .go({ response: 'all_new' });
  return updated.data as WebhookDelivery;
}
