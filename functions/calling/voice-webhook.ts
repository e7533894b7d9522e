import type { Agent } from '../agents/entities.js';
import { callPiiRedaction } from './pii.js';
import { isAnswering } from '../agents/service.js';
import { renderTemplate } from '../agents/template.js';
import { PhoneClaimEntity } from '../numbers/entities.js';
import { clock } from '../platform/clock.js';
import { isId, newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { toE164 } from '../platform/phone.js';
import { telephony } from '../providers/telephony/index.js';
import { emptyTwiml, parseVoiceCallback, rejectTwiml } from '../providers/telephony/twilio-format.js';
import { callOpeningWrites } from './call-opening.js';
import { callingService, ProviderCallEntity, type Call } from './entities.js';
import { applyTransition, readCall, storeRecording } from './lifecycle.js';
import { callAdds, counterUpdates, localDay } from './call-stats.js';
import { contactIdByPhone } from './call-contact.js';
import type { MemoriesSource } from './dispatch.js';
import { relaySettings } from './relay-settings.js';
import { shardOf } from './start-call.js';
import { deadlineFor, isTerminal, RANK } from './status.js';
import { callShardOf } from './call-shards.js';

/**
 * `POST /webhooks/telephony/voice`: the provider's status callbacks, recording callbacks and inbound
 * calls, in Twilio's dialect. The signature is checked before anything else is read: a bad one is 401
 * and changes nothing. Callbacks of our outbound calls carry `call_id` and `workspace_id` in their
 * (signed) URL; those of inbound calls are found by the provider's call id. A forward status (the
 * answer, the voice runtime's `started`) is one conditioned transaction, reading nothing; an end or a
 * recording reads the call once and is written on it as read (lifecycle.ts). Outbound calls subscribe
 * to the answer and the end only (dispatch.ts STATUS_CALLBACK_EVENTS).
 */
export interface VoiceWebhookRequest {
  /** The full URL the provider requested (what it signed). */
  url: string;
  query: Record<string, string>;
  params: Record<string, string>;
  signature?: string;
}

export interface VoiceWebhookResponse {
  status: number;
  contentType: string;
  body: string;
}

const xml = (body: string): VoiceWebhookResponse => ({ status: 200, contentType: 'text/xml', body });

/**
 * `memories`: handed in by the webhook's entry point (the post-call pipeline keeps them); an inbound
 * call of an agent with conversation memories gets the caller's earlier calls' summaries, as an
 * outbound call does at dispatch.
 */
export async function handleVoiceWebhook(
  request: VoiceWebhookRequest,
  options: { memories?: MemoriesSource } = {},
): Promise<VoiceWebhookResponse> {
  const port = telephony();
  if (!(await port.verifySignature(request.url, request.params, request.signature))) {
    return { status: 401, contentType: 'application/json', body: JSON.stringify({ error: 'Unauthorized' }) };
  }
  if (request.query.event === 'incoming')
    return xml(await answerIncoming(request.params, request.url.split('?')[0], options.memories));

  const event = parseVoiceCallback(request.params);
  if (event.kind === 'ignored') {
    logger.info('voice callback ignored', { reason: event.reason, providerCallId: event.providerCallId });
    return xml(emptyTwiml());
  }
  const ids = await findCallIds(request.query, port.name, event.providerCallId);
  if (event.kind === 'status' && !isTerminal(event.status)) {
    // A forward step reads nothing: it is written conditioned on the call's rank and provider call.
    const result = ids
      ? await applyTransition(
          ids.workspaceId,
          ids.callId,
          { status: event.status, at: event.at, source: 'provider' },
          undefined,
          event.providerCallId,
        )
      : { moved: false, unknown: true };
    if (result.unknown)
      logger.warn('voice callback for an unknown call', { providerCallId: event.providerCallId });
    if (result.otherProviderCall) ignoredOtherCall(ids?.callId, event.providerCallId);
    return xml(emptyTwiml());
  }
  // An end or a recording is decided on the call as it is: read once (consistently).
  const call = ids ? await readCall(ids.workspaceId, ids.callId) : undefined;
  if (!call) {
    logger.warn('voice callback for an unknown call', { providerCallId: event.providerCallId });
    return xml(emptyTwiml());
  }
  if (call.providerCallId && call.providerCallId !== event.providerCallId) {
    ignoredOtherCall(call.callId, event.providerCallId);
    return xml(emptyTwiml());
  }
  if (event.kind === 'recording') {
    await storeRecording(call, event.recordingUrl, event.durationSeconds);
  } else {
    await applyTransition(
      call.workspaceId,
      call.callId,
      {
        status: event.status,
        at: event.at,
        endReason: event.endReason,
        providerSeconds: event.durationSeconds,
        transcript: event.transcript,
        quotedListings: event.quotedListings,
        source: 'provider',
      },
      call,
    );
  }
  return xml(emptyTwiml());
}

function ignoredOtherCall(callId: string | undefined, providerCallId: string): void {
  logger.warn('voice callback from another provider call; ignored', { callId, providerCallId });
}

/**
 * The call a callback is about: named by its (signed) URL for our outbound calls and an inbound call's
 * recording, else found by the provider's call id (an inbound call's status callbacks).
 */
async function findCallIds(
  query: Record<string, string>,
  provider: 'simulator' | 'twilio',
  providerCallId: string,
): Promise<{ workspaceId: string; callId: string } | undefined> {
  const { call_id: callId, workspace_id: workspaceId } = query;
  if (callId && workspaceId) {
    if (!isId('call', callId) || !isId('workspace', workspaceId)) return undefined;
    return { workspaceId, callId };
  }
  const { data: link } = await ProviderCallEntity.get({ provider, providerCallId }).go({ consistent: true });
  return link ? { workspaceId: link.workspaceId, callId: link.callId } : undefined;
}

/**
 * Someone dials one of our numbers. The call is taken when the number is connected to an agent whose
 * Answering-calls switch is on, the organisation has credits and the workspace a free concurrency
 * slot: it is logged as an `inbound` call and the agent answers. Otherwise a polite message, and the
 * provider hangs up; when it is the agent that was not answering (switched off, suspended by billing,
 * no credits left), the refused call is logged as a missed call (see `logMissedCall`). A repeated
 * webhook for the same provider call gets the same answer.
 */
async function answerIncoming(
  params: Record<string, string>,
  webhookUrl: string,
  memoriesSource?: MemoriesSource,
): Promise<string> {
  const port = telephony();
  const providerCallId = params.CallSid;
  const to = toE164(params.To ?? '');
  if (!providerCallId || !to) return rejectTwiml();
  const { data: existing } = await ProviderCallEntity.get({ provider: port.name, providerCallId }).go({
    consistent: true,
  });
  if (existing) return existing.twiml ?? rejectTwiml();

  const { data: claim } = await PhoneClaimEntity.get({ phoneNumber: to }).go();
  if (!claim?.agentId) return rejectTwiml();
  const { workspaceId, organisationId, agentId } = claim;
  const { data } = await callingService.transaction
    .get(({ agent, workspace, billingAccount }) => [
      agent.get({ workspaceId, agentId }).commit(),
      workspace.get({ workspaceId }).commit(),
      billingAccount.get({ organisationId }).commit(),
    ])
    .go();
  const agent = data[0]?.item as Agent | null;
  const workspace = data[1]?.item as { deletedAt?: string; timezone?: string } | null;
  const billing = data[2]?.item as { balanceUnits: number; agentsSuspended?: boolean } | null;
  if (!agent || !workspace || workspace.deletedAt || !billing) return rejectTwiml();
  const from = (params.From ?? 'unknown').slice(0, 32);
  if (!isAnswering(agent, billing.agentsSuspended === true) || billing.balanceUnits <= 0) {
    return logMissedCall({
      providerCallId,
      provider: port.name,
      organisationId,
      agent,
      from,
      to,
      timezone: workspace.timezone ?? 'UTC',
    });
  }

  const callId = newId('call');
  // The caller's earlier calls, when the agent uses conversation memories: in the runtime context, and
  // recorded on the call, which is then billed for them (lifecycle's finishCall).
  const [memories, contactId] = await Promise.all([
    memoriesSource ? memoriesSource({ workspaceId, agentId, callId, phone: from }) : [],
    contactIdByPhone(workspaceId, from),
  ]);
  const now = clock.now().toISOString();
  const record = agent.settings.callRecording;
  // This function's own URL (in the cloud a function cannot be told its own function URL).
  const callbackUrl = `${webhookUrl}?${new URLSearchParams({ call_id: callId, workspace_id: workspaceId }).toString()}`;
  const twiml = await port.answerTwiml({
    callId,
    workspaceId,
    agent: { agentId, version: agent.version },
    greeting: renderTemplate(agent.greeting, {}),
    record,
    recordingCallbackUrl: callbackUrl,
    relay: relaySettings(agent, { callId, workspaceId }),
  });
  const call: Call = {
    workspaceId,
    callId,
    callShard: callShardOf(callId),
    organisationId,
    agentId,
    ...(contactId ? { contactId } : {}),
    direction: 'inbound',
    toPhone: to,
    fromPhone: from,
    record,
    parameters: {},
    status: 'initiated',
    statusRank: 2,
    createdBy: 'inbound',
    createdAt: now,
    initiatedAt: now,
    agentName: agent.name,
    ...(agent.version !== undefined ? { agentVersion: agent.version } : {}),
    ...callPiiRedaction(agent),
    greeting: agent.greeting,
    prompt: agent.prompt,
    maxDurationSeconds: agent.settings.maxDurationSeconds,
    deadlineAt: deadlineFor(now, agent.settings.maxDurationSeconds),
    openShard: shardOf(callId),
    provider: port.name,
    providerCallId,
    transcriptExpected: true,
    ...(memories.length > 0 ? { memoriesUsed: true, memories } : {}),
    statsTimezone: workspace.timezone ?? 'UTC',
  };
  const result = await callingService.transaction
    .write((entities) => [
      entities.providerCall
        .create({ provider: port.name, providerCallId, callId, workspaceId, twiml })
        .commit(),
      ...callOpeningWrites(entities, call, 'provider'),
    ])
    .go();
  if (!result.canceled) return twiml;
  if (result.data[0]?.code === 'ConditionalCheckFailed') {
    const { data: again } = await ProviderCallEntity.get({ provider: port.name, providerCallId }).go({
      consistent: true,
    });
    return again?.twiml ?? rejectTwiml();
  }
  logger.info('inbound call refused: the workspace is at its concurrency limit', { workspaceId });
  return rejectTwiml();
}

/**
 * An inbound call refused because its agent was not answering — its Answering-calls switch is off, or
 * billing suspended it (a Free plan out of credits), or the organisation has no credits left — is
 * logged so the owner sees the missed call: direction `inbound`, from/to, status `failed`, end reason
 * `not_answering`, created and ended now, 0 seconds. Nothing else: it is written charged 0 and with no
 * open-call marker, is never reported to the post-call pipeline (no webhook, SMS or email: there was
 * no conversation), and takes no concurrency slot. The provider's link is written with it, so a
 * repeated webhook answers the same refusal without logging it twice, and a later status callback of
 * the provider finds it ended and changes nothing.
 */
async function logMissedCall(input: {
  providerCallId: string;
  provider: 'simulator' | 'twilio';
  organisationId: string;
  agent: Agent;
  from: string;
  to: string;
  /** The workspace's: the day the call is counted in (call-stats.ts). */
  timezone: string;
}): Promise<string> {
  const { providerCallId, provider, organisationId, agent, from, to } = input;
  const { workspaceId } = agent;
  const callId = newId('call');
  const now = clock.now().toISOString();
  const twiml = rejectTwiml();
  const contactId = await contactIdByPhone(workspaceId, from);
  const call: Call = {
    workspaceId,
    callId,
    callShard: callShardOf(callId),
    organisationId,
    agentId: agent.agentId,
    ...(contactId ? { contactId } : {}),
    direction: 'inbound',
    toPhone: to,
    fromPhone: from,
    record: false,
    parameters: {},
    status: 'failed',
    statusRank: RANK.failed,
    endReason: 'not_answering',
    createdBy: 'inbound',
    createdAt: now,
    endedAt: now,
    durationSeconds: 0,
    chargedUnits: 0,
    statsDay: localDay(now, input.timezone),
    agentName: agent.name,
    ...(agent.version !== undefined ? { agentVersion: agent.version } : {}),
    greeting: agent.greeting,
    prompt: agent.prompt,
    maxDurationSeconds: agent.settings.maxDurationSeconds,
    deadlineAt: now,
    openShard: shardOf(callId),
    provider,
    providerCallId,
    transcriptExpected: false,
    updatedAt: now,
  };
  const event = { callId, workspaceId, at: now, source: 'provider', recordedAt: now } as const;
  const result = await callingService.transaction
    .write((entities) => [
      entities.providerCall.create({ provider, providerCallId, callId, workspaceId, twiml }).commit(),
      entities.call.create(call).commit(),
      entities.callStatusEvent.create({ ...event, rank: RANK.created, status: 'created' }).commit(),
      entities.callStatusEvent
        .create({ ...event, rank: RANK.failed, status: 'failed', endReason: 'not_answering' })
        .commit(),
      // Counted for analytics with it (the provider link's condition makes both happen once).
      ...counterUpdates(entities, { ...call, day: call.statsDay as string }, callAdds(call, 0)),
    ])
    .go();
  if (result.canceled && result.data[0]?.code !== 'ConditionalCheckFailed') {
    throw new Error(`missed call not logged: ${JSON.stringify(result.data.map((d) => d.code))}`);
  }
  // Logged now, or by a concurrent webhook for the same provider call: the same refusal either way.
  logger.info('inbound call refused: the agent is not answering; logged as missed', {
    workspaceId,
    agentId: agent.agentId,
    callId: result.canceled ? undefined : callId,
  });
  return twiml;
}
