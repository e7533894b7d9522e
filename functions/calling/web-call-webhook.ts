import { agentForCall } from '../agents/versions.js';
import { renderTemplate } from '../agents/template.js';
import { clock } from '../platform/clock.js';
import { isId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { providerWebhookUrl } from '../platform/webhook-urls.js';
import { telephony, VOICE_WEBHOOK_PATH } from '../providers/telephony/index.js';
import { rejectLegTwiml } from '../providers/telephony/twilio-format.js';
import { webClientFrom } from '../providers/telephony/web-client.js';
import { callingService, type Call } from './entities.js';
import { readCall } from './lifecycle.js';
import { DEFAULT_RELAY_AGENT, relaySettings } from './relay-settings.js';
import { RANK } from './status.js';
import { webCallNotConnected } from './web-call.js';
import { callKey } from './call-shards.js';

/**
 * `POST /webhooks/telephony/web-call`: the TwiML App's voice URL. A browser connected with the Access
 * Token of a web call (web-call.ts) and Twilio asks what its client leg does: form `CallSid`,
 * `From=client:<identity>` and the token's outgoing parameters `call_id`, `workspace_id`. Signed like
 * every provider webhook (401 unsigned, nothing read). A call that exists, is a web call still
 * `created` (within its minute), and whose creator is the identity: one transaction binds the leg
 * (`provider_call_id` = `CallSid`, the provider's link for its status callbacks, status `connected`),
 * conditioned on the call still being so, and the answer is the same `<Connect action>
 * <ConversationRelay>` TwiML as an answered phone call (the port's one builder). Anything else is
 * `<Reject/>`, and nothing changes.
 */
export interface WebCallWebhookRequest {
  url: string;
  params: Record<string, string>;
  signature?: string;
}

const xml = (body: string) => ({ status: 200, contentType: 'text/xml', body });

export async function handleWebCallWebhook(
  request: WebCallWebhookRequest,
): Promise<{ status: number; contentType: string; body: string }> {
  const port = telephony();
  if (!(await port.verifySignature(request.url, request.params, request.signature)))
    return { status: 401, contentType: 'application/json', body: JSON.stringify({ error: 'Unauthorized' }) };
  const { CallSid: providerCallId, From: from, call_id: callId, workspace_id: workspaceId } = request.params;
  const refuse = (reason: string) => {
    logger.info(`web call leg rejected: ${reason}`, { callId, providerCallId });
    return xml(rejectLegTwiml());
  };
  if (!providerCallId || providerCallId.length > 64) return refuse('no CallSid');
  if (!callId || !workspaceId || !isId('call', callId) || !isId('workspace', workspaceId))
    return refuse('no call named');
  const call = await readCall(workspaceId, callId);
  if (!call) return refuse('unknown call');
  if (call.channel !== 'web' || call.status !== 'created' || call.providerCallId)
    return refuse('not a web call waiting to connect');
  if (webCallNotConnected(call, clock.now())) return refuse('past its minute');
  if (from !== webClientFrom(call.createdBy)) return refuse("not its creator's browser");

  const twiml = await port.answerTwiml({
    callId,
    workspaceId,
    agent: {
      agentId: call.agentId,
      ...(call.agentVersion !== undefined ? { version: call.agentVersion } : {}),
    },
    greeting: renderTemplate(call.greeting, (call.parameters ?? {}) as Record<string, string>).trim(),
    record: call.record,
    recordingCallbackUrl: recordingCallbackUrl(call),
    relay: relaySettings((await agentForCall(call)) ?? DEFAULT_RELAY_AGENT, { callId, workspaceId }),
  });
  if (!(await bindLeg(call, port.name, providerCallId))) return refuse('connected meanwhile');
  logger.info('web call leg connected', { callId, workspaceId });
  return xml(twiml);
}

/** The voice webhook's URL for this call's recording callback (as an inbound call's). */
function recordingCallbackUrl(call: Call): string {
  const url = new URL(providerWebhookUrl(VOICE_WEBHOOK_PATH));
  url.searchParams.set('call_id', call.callId);
  url.searchParams.set('workspace_id', call.workspaceId);
  return url.toString();
}

/** The leg becomes the call's, once: conditioned on the call still created and unbound. */
async function bindLeg(
  call: Call,
  provider: 'simulator' | 'twilio',
  providerCallId: string,
): Promise<boolean> {
  const { workspaceId, callId } = call;
  const now = clock.now().toISOString();
  const result = await callingService.transaction
    .write(({ call: calls, callStatusEvent, providerCall }) => [
      calls
        .patch(callKey(workspaceId, callId))
        .set({
          status: 'connected',
          statusRank: RANK.connected,
          connectedAt: now,
          updatedAt: now,
          provider,
          providerCallId,
        })
        .where(
          (attr, op) =>
            `${op.eq(attr.statusRank, RANK.created)} AND ${op.eq(attr.channel, 'web')} AND ` +
            `${op.notExists(attr.providerCallId)} AND ${op.notExists(attr.relayConnectionId)}`,
        )
        .commit(),
      callStatusEvent
        .create({
          callId,
          workspaceId,
          rank: RANK.connected,
          status: 'connected',
          at: now,
          source: 'provider',
          recordedAt: now,
        })
        .commit(),
      providerCall.create({ provider, providerCallId, callId, workspaceId }).commit(),
    ])
    .go();
  return !result.canceled;
}
