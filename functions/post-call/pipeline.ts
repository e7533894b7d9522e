import { isConditionFailure } from '../platform/table.js';
import { findContactByPhone, getContact } from '../contacts/lookup.js';
import { clock } from '../platform/clock.js';
import { config } from '../platform/config.js';
import { newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { sendMessages } from '../platform/queue.js';
import { analyseCall, hadConversation } from './call-analysis.js';
import { loadAgentActions, loadEndedCall, storeAnalysis, type ConfiguredAction } from './calls.js';
import {
  ActionRunEntity,
  PostCallRecordEntity,
  readPostCallRecord,
  type PostCallRecordItem,
} from './entities.js';
import { rememberCall } from './memories.js';
import { buildCallRecord, otherParty, type CallFacts, type ContactFacts } from './payload.js';
import type { ActionMessage, CallEndedMessage, CallRecordWire } from './schemas.js';

/**
 * Step 1 of the pipeline (postCall queue): a call ended. Builds the call's record once (a
 * conditional create), makes one run per enabled action of the agent (conditional creates: each
 * action runs once per call), and sends one message per action to the actions queue, so one
 * failing action never blocks or repeats another. A redelivered message, or a second `call.ended`
 * for the same call, finds the work done and changes nothing.
 */

export const MAX_ACTIONS_PER_CALL = 10;

export class CallNotEndedYet extends Error {
  constructor(callId: string) {
    super(`call ${callId} has not ended yet; the message will be retried`);
    this.name = 'CallNotEndedYet';
  }
}

export type CallEndedOutcome = 'processed' | 'duplicate' | 'missing';

async function contactFor(facts: CallFacts): Promise<ContactFacts | undefined> {
  // The contact linked when the call was made; by the number when there was none (or it was deleted).
  const contact =
    (facts.contactId ? await getContact(facts.workspaceId, facts.contactId) : null) ??
    (await findContactByPhone(facts.workspaceId, otherParty(facts)));
  if (!contact) return undefined;
  return { contactId: contact.contactId, name: contact.name, phone: contact.phone, email: contact.email };
}

async function buildRecord(message: CallEndedMessage): Promise<PostCallRecordItem | undefined> {
  const loaded = await loadEndedCall(message.workspace_id, message.call_id);
  if (!loaded) return undefined;
  if ('notEnded' in loaded) throw new CallNotEndedYet(message.call_id);
  const { facts } = loaded;
  const agent = await loadAgentActions(facts.workspaceId, facts.agentId, facts.agentVersion);
  const contact = await contactFor(facts);
  const options = { publicBaseUrl: config().PUBLIC_BASE_URL, contact };
  const withName = { ...facts, agentName: facts.agentName ?? agent?.agentName };
  const ruled = buildCallRecord(withName, options);
  const analysis = hadConversation(facts.transcript)
    ? await analyseCall({
        transcript: facts.transcript,
        status: facts.status,
        agentPrompt: agent?.prompt ?? '',
        successCriteria: agent?.successCriteria,
        fields: agent?.analysisFields ?? [],
        rules: { summary: ruled.summary, sentiment: ruled.sentiment.label },
      })
    : undefined;
  const record = analysis ? { ...ruled, analysis } : ruled;
  // A test chat not asked to run them gets its record and analysis, and no action.
  const actions: ConfiguredAction[] = (facts.skipActions ? [] : (agent?.actions ?? []))
    .filter((action) => action.enabled)
    .slice(0, MAX_ACTIONS_PER_CALL)
    .map(({ actionId, type, config: actionConfig }) => ({ actionId, type, config: actionConfig }));
  try {
    const { data } = await PostCallRecordEntity.create({
      workspaceId: facts.workspaceId,
      callId: facts.callId,
      organisationId: facts.organisationId,
      agentId: facts.agentId,
      record: JSON.stringify(record),
      actions: JSON.stringify(actions),
      builtAt: clock.now().toISOString(),
    }).go();
    return data as PostCallRecordItem;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // Built concurrently by a duplicate message: use that one.
    return (await readPostCallRecord(facts.workspaceId, facts.callId)).data ?? undefined;
  }
}

/** One run per action, created unless it exists (ids of the SMS / delivery are fixed here, once). */
async function createRuns(item: PostCallRecordItem, actions: ConfiguredAction[]): Promise<void> {
  const now = clock.now().toISOString();
  await Promise.all(
    actions.map(async (action) => {
      try {
        await ActionRunEntity.create({
          workspaceId: item.workspaceId,
          callId: item.callId,
          actionId: action.actionId,
          organisationId: item.organisationId,
          agentId: item.agentId,
          type: action.type,
          config: JSON.stringify(action.config ?? {}),
          state: 'queued',
          ...(action.type === 'sms_owner' || action.type === 'sms_caller' ? { smsId: newId('message') } : {}),
          ...(action.type === 'webhook' ? { deliveryId: newId('delivery') } : {}),
          tries: 0,
          createdAt: now,
          updatedAt: now,
        }).go();
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }),
  );
}

export async function processCallEnded(message: CallEndedMessage): Promise<CallEndedOutcome> {
  // One read first: a redelivery, a duplicate or a retry after a failure finds the record built
  // and goes on from it (or stops once its actions are queued) without asking the model again; a
  // first delivery builds it (analysis included) with a conditional create, and a concurrent
  // duplicate that lost the race reads the winner's record.
  const built = (await readPostCallRecord(message.workspace_id, message.call_id)).data;
  const item = built ?? (await buildRecord(message));
  if (!item) {
    logger.warn('call.ended for a call that does not exist; nothing to do', {
      callId: message.call_id,
      workspaceId: message.workspace_id,
    });
    return 'missing';
  }
  if (item.actionsEnqueuedAt) return 'duplicate';
  const record = JSON.parse(item.record) as CallRecordWire;
  await storeAnalysis(item.workspaceId, item.callId, record.sentiment, record.analysis);
  await rememberCall(record);
  const actions = JSON.parse(item.actions) as ConfiguredAction[];
  await createRuns(item, actions);
  const messages: ActionMessage[] = actions.map((action) => ({
    type: 'post_call.action',
    workspace_id: item.workspaceId,
    organisation_id: item.organisationId,
    call_id: item.callId,
    action_id: action.actionId,
  }));
  if (messages.length > 0) await sendMessages('postCallActions', messages);
  await PostCallRecordEntity.patch({ workspaceId: item.workspaceId, callId: item.callId })
    .set({ actionsEnqueuedAt: clock.now().toISOString() })
    .go({ response: 'none' });
  logger.info('post-call record built', { callId: item.callId, actions: actions.map((a) => a.type) });
  return 'processed';
}

/** The call's record (sentiment, summary, properties, …) once the pipeline built it. */
export async function getCallRecord(
  workspaceId: string,
  callId: string,
): Promise<CallRecordWire | undefined> {
  const { data } = await readPostCallRecord(workspaceId, callId);
  return data ? (JSON.parse(data.record) as CallRecordWire) : undefined;
}
