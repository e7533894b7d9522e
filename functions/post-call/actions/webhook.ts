import {
  deliveryToWrite,
  queueFirstAttemptIfNone,
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
 * action (run.ts): the delivery is created in the transaction that records the run's success, and its
 * first attempt is queued after it; a redelivered message of the run makes good a lost queueing.
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
  prepare: ({ run, record, config }) => {
    const input = delivery(run, record, config);
    const write = deliveryToWrite(input);
    return {
      result: resultOf(write.delivery),
      items: [write.item],
      afterWrite: write.afterWrite,
      fallback: async () => resultOf(await startDelivery(input)),
    };
  },
  resume: async (run) => {
    if (run.deliveryId) await queueFirstAttemptIfNone(run.workspaceId, run.deliveryId);
  },
};

/** The same as a plain action (a run claimed by a try before): the delivery started unless it was. */
export const webhook: PostCallAction<'webhook'> = async ({ run, record, config }) =>
  resultOf(await startDelivery(delivery(run, record, config)));
