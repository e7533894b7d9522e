import {
  deliveryToWrite,
  queueFirstAttemptIfNone,
  secretFrom,
  secretKey,
  startDelivery,
  type NewDelivery,
} from '../../webhook-deliveries/deliveries.js';
import type { ActionRun } from '../entities.js';
import type { CallRecordWire } from '../schemas.js';
import { webhookPayload } from '../payload.js';
import {
  PermanentActionError,
  type ActionConfig,
  type PostCallAction,
  type WrittenAction,
} from './action.js';

/**
 * `webhook`: the `call.ended` payload to the action's URL, as a webhook delivery (signed, retried and
 * logged by webhook-deliveries). The delivery id was fixed when the run was queued. It is a written
 * action (run.ts): the delivery is created, claimed for its first attempt, in the transaction that
 * records the run's success, and that attempt is made right after it, here (no queue message, no claim
 * of its own); retries go on the delivery queue. A redelivered message of the run queues the first
 * attempt if a crash stopped it before it was recorded.
 */
function delivery(
  run: ActionRun,
  record: CallRecordWire,
  config: ActionConfig<'webhook'>,
): NewDelivery & { deliveryId: string } {
  if (!run.deliveryId) throw new PermanentActionError('the run has no delivery id');
  const payload = webhookPayload('call.ended', record, record.ended_at ?? record.created_at);
  return {
    workspaceId: run.workspaceId,
    organisationId: run.organisationId,
    deliveryId: run.deliveryId,
    eventType: 'call.ended',
    callId: run.callId,
    agentId: run.agentId,
    actionId: run.actionId,
    url: config.url,
    payload: JSON.stringify(payload),
    kind: 'post_call',
  };
}

const resultOf = (made: { deliveryId: string; webhookId: string }) => ({
  delivery_id: made.deliveryId,
  webhook_id: made.webhookId,
});

export const webhookWritten: WrittenAction<'webhook'> = {
  // The signing secret, read with the run: the transaction checks the URL, and the attempt reads nothing.
  reads: (workspaceId) => [secretKey(workspaceId)],
  prepare: ({ run, record, config }, [secret]) => {
    const input = delivery(run, record, config);
    const write = deliveryToWrite(input, secretFrom(secret));
    return {
      result: resultOf(write.delivery),
      items: write.items,
      afterWrite: async () => {
        await write.attempt();
      },
      fallback: async () => resultOf(await startDelivery(input)),
    };
  },
  resume: async (run) => {
    if (!run.deliveryId) return {};
    const { claimedUntil } = await queueFirstAttemptIfNone(run.workspaceId, run.deliveryId);
    return claimedUntil ? { busyUntil: claimedUntil } : {};
  },
};

/** The same as a plain action (a run claimed by a try before): the delivery started unless it was. */
export const webhook: PostCallAction<'webhook'> = async ({ run, record, config }) =>
  resultOf(await startDelivery(delivery(run, record, config)));
