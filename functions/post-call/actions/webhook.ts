import { startDelivery } from '../../webhook-deliveries/deliveries.js';
import { webhookPayload } from '../payload.js';
import { PermanentActionError, type PostCallAction } from './action.js';

/**
 * `webhook`: the `call.ended` payload to the action's URL, as a webhook delivery (signed, retried and
 * logged by webhook-deliveries). The delivery id was fixed when the run was queued, so a second try
 * finds the delivery already started instead of starting another.
 */
export const webhook: PostCallAction<'webhook'> = async ({ run, record, config }) => {
  if (!run.deliveryId) throw new PermanentActionError('the run has no delivery id');
  const payload = webhookPayload('call.ended', record, record.ended_at ?? record.created_at);
  const delivery = await startDelivery({
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
  });
  return { delivery_id: delivery.deliveryId, webhook_id: delivery.webhookId };
};
