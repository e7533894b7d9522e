import { clock } from '../platform/clock.js';
import { config } from '../platform/config.js';
import { newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { sendMessages } from '../platform/queue.js';
import {
  batchGetStoredItems,
  entityKey,
  entityWrite,
  isConditionFailure,
  writeStoredItems,
  type StoredItem,
  type TransactionItem,
} from '../platform/table.js';
import { analyseCall, hadConversation } from './call-analysis.js';
import {
  agentAndContact,
  callKey,
  callOf,
  endedCall,
  storeAnalysis,
  type ConfiguredAction,
} from './calls.js';
import {
  ActionRunEntity,
  PostCallRecordEntity,
  moveLegacyPostCall,
  readPostCallRecord,
  type PostCallRecordItem,
} from './entities.js';
import { CallMemoryEntity, memoryOf, rememberCall } from './memories.js';
import { buildCallRecord, type CallFacts } from './payload.js';
import { dropRecording, dropsRecording, redactRecord } from './redaction.js';
import type { ActionMessage, CallEndedMessage, CallRecordWire } from './schemas.js';

/**
 * Step 1 of the pipeline (postCall queue): a call ended. Builds the call's record once, makes one run
 * per enabled action of the agent (each action runs once per call) and remembers the call — all in
 * one transaction whose record is created with a condition — then stores the analysis on the call and
 * sends one message per action to the actions queue, so one failing action never blocks or repeats
 * another. A redelivered message, or a second `call.ended` for the same call, finds the record (the
 * idempotency key of the analysis and of every run) and only sends the actions' messages again,
 * which find their runs taken or done.
 *
 * Requests of a first delivery: one read of the record and the call, one of the agent (its version)
 * and the contact, the transaction, and the analysis stored on the call (calling's: a read and a write).
 */

export const MAX_ACTIONS_PER_CALL = 10;

export class CallNotEndedYet extends Error {
  constructor(callId: string) {
    super(`call ${callId} has not ended yet; the message will be retried`);
    this.name = 'CallNotEndedYet';
  }
}

export type CallEndedOutcome = 'processed' | 'duplicate' | 'missing';

const recordKey = (workspaceId: string, callId: string) =>
  entityKey(PostCallRecordEntity.get({ workspaceId, callId }).params());

/** A record built before records had their call's key, moved there now (until `migrate calls` has run). */
async function legacyRecord(workspaceId: string, callId: string): Promise<StoredItem | undefined> {
  if (!(await moveLegacyPostCall(workspaceId, callId))) return undefined;
  const [moved] = await batchGetStoredItems([recordKey(workspaceId, callId)]);
  return moved;
}

/** Builds the record and writes it with its runs and the call's memory; undefined when there is no call. */
async function buildRecord(
  message: CallEndedMessage,
  callItem: StoredItem | undefined,
): Promise<{ item: PostCallRecordItem; built: boolean } | undefined> {
  const loaded = await endedCall(callItem);
  if (!loaded) return undefined;
  if ('notEnded' in loaded) throw new CallNotEndedYet(message.call_id);
  const { facts } = loaded;
  const { agent, contact } = await agentAndContact(facts);
  const options = { publicBaseUrl: config().PUBLIC_BASE_URL, contact };
  const withName = {
    ...facts,
    agentName: facts.agentName ?? agent?.agentName,
    // Dropped once analysed: the record never names it.
    ...(dropsRecording(facts) ? { recordingKey: undefined, recordingDurationSeconds: undefined } : {}),
  };
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
  // With PII redaction the summary and analysis hold tokens, as the transcript they were judged on.
  const record: CallRecordWire = redactRecord(analysis ? { ...ruled, analysis } : ruled, facts, contact);
  // A test chat not asked to run them gets its record and analysis, and no action.
  const actions: ConfiguredAction[] = (facts.skipActions ? [] : (agent?.actions ?? []))
    .filter((action) => action.enabled)
    .slice(0, MAX_ACTIONS_PER_CALL)
    .map(({ actionId, type, config: actionConfig }) => ({ actionId, type, config: actionConfig }));
  const item: PostCallRecordItem = {
    workspaceId: facts.workspaceId,
    callId: facts.callId,
    organisationId: facts.organisationId,
    agentId: facts.agentId,
    record: JSON.stringify(record),
    actions: JSON.stringify(actions),
    builtAt: clock.now().toISOString(),
    runsCreated: true,
  };
  const memory = memoryOf(record);
  const written = await writeStoredItems([
    entityWrite('Put', PostCallRecordEntity.create(item).params()),
    ...actions.map((action) => entityWrite('Put', ActionRunEntity.create(newRun(facts, action)).params())),
    ...(memory ? [entityWrite('Put', CallMemoryEntity.put(memory).params())] : []),
  ] satisfies TransactionItem[]);
  if (!written.canceled) return { item, built: true };
  // Built concurrently by a duplicate message (its record is there): go on from that one.
  const winner = (await readPostCallRecord(facts.workspaceId, facts.callId)).data;
  if (!winner)
    throw new Error(`post-call record of ${facts.callId} not written (${written.codes.join(', ')})`);
  return { item: winner, built: false };
}

/** A new run of the action (the ids of its SMS / delivery fixed here, once). */
function newRun(
  facts: Pick<CallFacts, 'workspaceId' | 'callId' | 'organisationId' | 'agentId'>,
  action: ConfiguredAction,
) {
  const now = clock.now().toISOString();
  return {
    workspaceId: facts.workspaceId,
    callId: facts.callId,
    actionId: action.actionId,
    organisationId: facts.organisationId,
    agentId: facts.agentId,
    type: action.type,
    config: JSON.stringify(action.config ?? {}),
    state: 'queued' as const,
    ...(action.type === 'sms_owner' || action.type === 'sms_caller' ? { smsId: newId('message') } : {}),
    ...(action.type === 'webhook' ? { deliveryId: newId('delivery') } : {}),
    tries: 0,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * One run per action, created unless it exists: for a record built before runs were written with it
 * (no `runsCreated`), found by a redelivery.
 */
async function createRuns(item: PostCallRecordItem, actions: ConfiguredAction[]): Promise<void> {
  await Promise.all(
    actions.map(async (action) => {
      try {
        await ActionRunEntity.create(newRun(item, action)).go();
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }),
  );
}

export async function processCallEnded(message: CallEndedMessage): Promise<CallEndedOutcome> {
  // One read first, of the record and the call together: a redelivery, a duplicate or a retry after
  // a failure finds the record built and goes on from it without asking the model again; a first
  // delivery builds it (analysis included) from the call, in a transaction conditioned on the record,
  // and a concurrent duplicate that lost the race goes on from the winner's record.
  const call = callKey(message.workspace_id, message.call_id);
  const [readItem, callItem] = call
    ? await batchGetStoredItems([recordKey(message.workspace_id, message.call_id), call])
    : [undefined, undefined];
  const builtItem =
    readItem ??
    // A record built before is one whose analysis the call holds already (stored right after it).
    (callOf(callItem)?.sentiment !== undefined
      ? await legacyRecord(message.workspace_id, message.call_id)
      : undefined);
  const found = builtItem
    ? ((PostCallRecordEntity.parse({ Item: builtItem }).data as PostCallRecordItem | null) ?? undefined)
    : undefined;
  const result = found ? { item: found, built: false } : await buildRecord(message, callItem);
  if (!result) {
    logger.warn('call.ended for a call that does not exist; nothing to do', {
      callId: message.call_id,
      workspaceId: message.workspace_id,
    });
    return 'missing';
  }
  const { item, built } = result;
  if (item.actionsEnqueuedAt) return 'duplicate';
  const record = JSON.parse(item.record) as CallRecordWire;
  await storeAnalysis(item.workspaceId, item.callId, record.sentiment, record.analysis, callOf(callItem));
  await dropRecording(callOf(callItem));
  const actions = JSON.parse(item.actions) as ConfiguredAction[];
  if (!item.runsCreated) {
    await rememberCall(record);
    await createRuns(item, actions);
  }
  const messages: ActionMessage[] = actions.map((action) => ({
    type: 'post_call.action',
    workspace_id: item.workspaceId,
    organisation_id: item.organisationId,
    call_id: item.callId,
    action_id: action.actionId,
    action_type: action.type,
  }));
  if (messages.length > 0) await sendMessages('postCallActions', messages);
  if (built) {
    logger.info('post-call record built', { callId: item.callId, actions: actions.map((a) => a.type) });
    return 'processed';
  }
  // Found built: after this, a redelivery has nothing left to do (the first delivery saves this write).
  await PostCallRecordEntity.patch({ workspaceId: item.workspaceId, callId: item.callId })
    .set({ actionsEnqueuedAt: clock.now().toISOString() })
    .go({ response: 'none' });
  return 'duplicate';
}

/** The call's record (sentiment, summary, properties, …) once the pipeline built it. */
export async function getCallRecord(
  workspaceId: string,
  callId: string,
): Promise<CallRecordWire | undefined> {
  const { data } = await readPostCallRecord(workspaceId, callId);
  return data ? (JSON.parse(data.record) as CallRecordWire) : undefined;
}
