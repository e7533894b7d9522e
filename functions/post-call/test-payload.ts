import { findAgent } from '../agents/service.js';
import { clock } from '../platform/clock.js';
import { config } from '../platform/config.js';
import { conflict, notFound } from '../platform/errors.js';
import { isId } from '../platform/ids.js';
import { deliveryToWire, sendTestDelivery } from '../webhook-deliveries/deliveries.js';
import { ACTION_CONFIGS } from './schemas.js';
import { buildCallRecord, sampleAnalysis, sampleCall, webhookPayload } from './payload.js';

export const ACTION_NOT_FOUND = 'Post-call action not found';

/**
 * `POST …/agents/{agent_id}/post-call-actions/{action_id}/test`: sends the webhook action's endpoint
 * a test payload now (event type `webhook.test`, a fictional call in the same shape as a real one),
 * signed like every delivery, one attempt, never retried. Returns the delivery and that attempt.
 */
export async function sendTestPayload(input: {
  workspaceId: string;
  organisationId: string;
  agentId: string;
  actionId: string;
}) {
  const agent = await findAgent(input.workspaceId, input.agentId, { consistent: true });
  if (!agent) throw notFound('Agent');
  const actions = (agent.postCallActions ?? []) as { actionId: string; type: string; config?: unknown }[];
  const action = isId('action', input.actionId)
    ? actions.find((a) => a.actionId === input.actionId)
    : undefined;
  if (!action) throw notFound(ACTION_NOT_FOUND);
  if (action.type !== 'webhook') throw conflict('Only webhook actions can send a test payload');
  const parsed = ACTION_CONFIGS.webhook.safeParse(action.config ?? {});
  if (!parsed.success) throw conflict('The webhook action has no valid URL');
  const now = clock.now();
  const record = buildCallRecord(
    sampleCall({
      workspaceId: input.workspaceId,
      organisationId: input.organisationId,
      agentId: agent.agentId,
      agentName: agent.name,
      ...(agent.version !== undefined ? { agentVersion: agent.version } : {}),
      at: now,
    }),
    {
      publicBaseUrl: config().PUBLIC_BASE_URL,
      analysis: sampleAnalysis(
        ((agent.analysisFields ?? []) as { name: string; type: string; enumValues?: string[] }[]).map(
          (f) => ({ name: f.name, type: f.type, enumValues: f.enumValues }),
        ),
      ),
    },
  );
  const delivery = await sendTestDelivery({
    workspaceId: input.workspaceId,
    organisationId: input.organisationId,
    agentId: agent.agentId,
    actionId: action.actionId,
    url: parsed.data.url,
    eventType: 'webhook.test',
    payload: JSON.stringify(webhookPayload('webhook.test', record, now.toISOString())),
  });
  const wire = deliveryToWire(delivery);
  return { delivery: wire, attempt: wire.attempts[wire.attempts.length - 1] };
}
