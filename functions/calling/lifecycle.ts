import { BUCKET } from '../platform/resources.js';
import { isConditionFailure } from '../platform/table.js';
import { clock } from '../platform/clock.js';
import { logger } from '../platform/logger.js';
import { recordMetrics } from '../platform/metrics.js';
import { sendMessage } from '../platform/queue.js';
import { publishWorkspaceEvent, type NewWorkspaceEvent } from '../platform/workspace-events.js';
import { putObject } from '../platform/storage.js';
import { telephony } from '../providers/telephony/index.js';
import type { EndReason, QuotedListing, TranscriptTurn } from '../providers/telephony/twilio-format.js';
import { releaseConcurrencySlot } from './concurrency.js';
import { newShortCode } from './short-codes.js';
import { chargeAndCountCall, countHandoffs } from './call-stats.js';
import { CallEntity, callingService, type Call } from './entities.js';
import {
  callDurationSeconds,
  canMove,
  isMissedCall,
  isTerminal,
  RANK,
  readyForPostCall,
  STATUS_TIME,
  wireStatus,
  type InternalStatus,
} from './status.js';
import { moveFromOldKey } from '../platform/key-moves.js';
import { callKey, callTarget, oldCallKeys } from './call-shards.js';

/**
 * Moving calls along their lifecycle. Every transition is one conditional transaction with its status
 * event, so duplicate, late or concurrent callbacks change nothing a second time:
 *   - a forward step (`initiated`, `connected`, `inprogress`) needs nothing of the call: it is written
 *     at once, conditioned on the stored rank being lower (`statusRank < new`); a refusal returns the
 *     call as it is (ReturnValuesOnConditionCheckFailure), which says why (ended already, unknown);
 *   - the end is decided on the call as read (its end reason and duration depend on what it holds) and
 *     conditioned on that read: the same rank, and no recording or transcript when it had none, so what
 *     the transition saw is what the call held when it was written. It also frees the workspace's
 *     concurrency slot, in the same transaction.
 * After the end, two idempotent steps: charge and count the call (one ledger transaction), then tell
 * the post-call pipeline once the recording and transcript are in — both re-run on any later callback
 * or by the sweeper, so a crash between them loses nothing.
 */

export type TransitionSource = 'provider' | 'dispatcher' | 'hangup' | 'sweeper';

export interface Transition {
  status: Exclude<InternalStatus, 'created' | 'dialling'>;
  /** When it happened (provider time); default now. */
  at?: string;
  endReason?: EndReason;
  /** The provider's duration (answer to end) for a terminal status. */
  providerSeconds?: number;
  transcript?: TranscriptTurn[];
  quotedListings?: QuotedListing[];
  source: TransitionSource;
  endedBy?: string;
}

export const recordingKey = (workspaceId: string, callId: string): string =>
  `${BUCKET.recordingsPrefix}${workspaceId}/${callId}.wav`;

/**
 * The call, read consistently at its shard's key; until `migrate calls` has run, a call still at its
 * old single key is moved to its shard on the way (functions/table-migration.ts), so what is written next finds it.
 */
export async function readCall(workspaceId: string, callId: string): Promise<Call | undefined> {
  const read = async () => (await CallEntity.get(callKey(workspaceId, callId)).go({ consistent: true })).data;
  const data = await read();
  if (data) return data;
  let moved = false;
  for (const oldKey of oldCallKeys(workspaceId, callId))
    if (!moved && (await moveFromOldKey(oldKey, callTarget))) moved = true;
  if (!moved) return undefined;
  return (await read()) ?? undefined;
}

const toStoredTranscript = (turns: TranscriptTurn[]) =>
  turns.map((t) => ({ role: t.role, text: t.text, offsetSeconds: t.offset_seconds }));
const toStoredListings = (listings: QuotedListing[]) =>
  listings.map((l) => ({ listingId: l.listing_id, address: l.address, price: l.price }));

const cancellationCodes = (data: { rejected?: boolean; code?: string }[]) =>
  data.map((d) => d.code ?? 'None');

/**
 * Applies a status to a call if it moves the call forward; otherwise changes nothing (a late
 * terminal callback may still bring the transcript the call lacks). Returns whether it moved, and the
 * call when known (`unknown`: there is no such call). `read` is the call as the caller has just read it
 * (consistently, as readCall does): an end decides on it instead of reading it again. A forward step
 * reads nothing (`moveForward`); `providerCallId`, when given, must be the call's (a callback of
 * another provider call changes nothing).
 */
export async function applyTransition(
  workspaceId: string,
  callId: string,
  transition: Transition,
  read?: Call,
  providerCallId?: string,
): Promise<TransitionResult> {
  if (!isTerminal(transition.status)) return moveForward(workspaceId, callId, transition, providerCallId);
  let skipWorkspace = false;
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const call = attempt === 0 && read ? read : await readCall(workspaceId, callId);
    if (!call) return { moved: false, unknown: true };
    if (!canMove(call.status, transition.status)) return notMoved(call, transition);
    const now = clock.now().toISOString();
    const at = transition.at ?? now;
    const set: Partial<Call> = {
      status: transition.status,
      statusRank: RANK[transition.status],
      updatedAt: now,
      ...endOf(call, transition, at),
    };
    const result = await callingService.transaction
      .write(({ call: calls, callStatusEvent, workspace }) => [
        withoutLiveWhisper(call, calls.patch(callKey(workspaceId, callId)).set(set))
          .where((attr, op) => asRead(call, attr, op))
          .commit(),
        callStatusEvent
          .create({
            callId,
            workspaceId,
            rank: RANK[transition.status],
            status: transition.status,
            at,
            endReason: set.endReason,
            source: transition.source,
            recordedAt: now,
          })
          .commit(),
        ...(!skipWorkspace ? [releaseConcurrencySlot(workspace, workspaceId)] : []),
      ])
      .go();
    if (!result.canceled) {
      const moved = { ...call, ...set } as Call;
      // Written on the call as read (asRead): whatever comes after the end finishes the call itself.
      await finishCall(moved, { asWritten: true });
      return { moved: true, call: moved };
    }
    const codes = cancellationCodes(result.data);
    if (codes[0] === 'None' && codes[1] === 'None' && codes[2] === 'ConditionalCheckFailed') {
      // The workspace is gone or its counter is already 0: end the call without touching it.
      logger.warn('workspace active-call counter not lowered', { workspaceId, callId });
      skipWorkspace = true;
    }
    // Otherwise another request moved the call, or stored its recording or transcript (or a
    // transaction conflict): read again and decide again.
    recordMetrics({ CallWriteConflicts: 1 });
    await new Promise((r) => setTimeout(r, 10 * (attempt + 1)));
  }
  throw new Error(`call ${callId}: status ${transition.status} could not be applied`);
}

export interface TransitionResult {
  moved: boolean;
  /** The call as the transition left or found it, when known (a forward step that moved: not known). */
  call?: Call;
  /** No such call. */
  unknown?: boolean;
  /** The callback's provider call is not the call's: nothing changed. */
  otherProviderCall?: boolean;
}

type Condition = Parameters<Parameters<ReturnType<ReturnType<typeof CallEntity.patch>['set']>['where']>[0]>;

/**
 * The condition of an end: the call is still as it was read — the same rank, and no recording or
 * transcript when it had none (each would make it ready for the post-call pipeline: storeRecording and
 * the conversation's record finish a call they find ended, so one of the two sees the other).
 */
function asRead(call: Call, attr: Condition[0], op: Condition[1]): string {
  const clauses = [op.eq(attr.statusRank, call.statusRank)];
  if (call.recordingKey === undefined) clauses.push(op.notExists(attr.recordingKey));
  if (call.transcript === undefined) clauses.push(op.notExists(attr.transcript));
  return clauses.join(' AND ');
}

/** A warm transfer's whisper with real values (PII redaction on) goes with the call's end, in its write. */
function withoutLiveWhisper<P extends { remove: (attributes: ['liveWhisper']) => P }>(
  call: Call,
  patch: P,
): P {
  return call.liveWhisper !== undefined ? patch.remove(['liveWhisper']) : patch;
}

/** How a call ends: its end reason, duration, and what the end brings (transcript, listings). */
function endOf(call: Call, transition: Transition, at: string): Partial<Call> {
  const set: Partial<Call> = {};
  const answeredAt = call.connectedAt ?? call.inprogressAt;
  set.endedAt = at;
  set.endReason = transition.endReason ?? (transition.status === 'completed' ? 'completed' : 'failed');
  if (transition.source === 'provider' && call.hangupRequestedBy) {
    // Our hang-up request reached the provider first; its terminal callback is the answer to it.
    set.endReason = answeredAt || transition.status === 'completed' ? 'hangup' : 'canceled';
    set.endedBy = call.hangupRequestedBy;
  }
  // The agent ended the conversation (its end_call): whoever then ended the call, it was the agent's doing.
  if (transition.status === 'completed' && call.agentEnded === 'agent_hangup') set.endReason = 'agent_hangup';
  // Answering-machine detection found a machine (amd.ts): the call ended on its voicemail.
  if (transition.status === 'completed' && call.answeredBy === 'machine') set.endReason = 'voicemail';
  // A warm transfer's person was not connected (transfer.ts): the caller was told, and the call ended.
  if (transition.status === 'completed' && call.transfer?.status && call.transfer.status !== 'connected')
    set.endReason = 'transfer_failed';
  set.durationSeconds = callDurationSeconds({
    answeredAt,
    endedAt: at,
    providerSeconds: transition.providerSeconds,
  });
  if (transition.transcript) set.transcript = toStoredTranscript(transition.transcript);
  if (transition.quotedListings) set.quotedListings = toStoredListings(transition.quotedListings);
  if (transition.endedBy) set.endedBy = transition.endedBy;
  return set;
}

/**
 * A transition that does not move the call: an ended call may still take the transcript it lacks, and
 * is finished again (charge, post-call: each once) — a late callback is one more chance for them.
 */
async function notMoved(call: Call, transition: Transition): Promise<TransitionResult> {
  let current = call;
  if (isTerminal(call.status) && transition.transcript && !call.transcript)
    current = await fillTranscript(call, transition);
  if (isTerminal(current.status)) await finishCall(current);
  return { moved: false, call: current };
}

/**
 * A forward step, read-free: one transaction of the call's status (conditioned on its stored rank being
 * lower, and on the provider call being the call's when a callback names one) and its status event.
 * When refused, the call as it is comes back with the refusal: unknown, another provider call's
 * callback, or already there or further (an ended call is finished again, as any late callback does).
 */
async function moveForward(
  workspaceId: string,
  callId: string,
  transition: Transition,
  providerCallId: string | undefined,
): Promise<TransitionResult> {
  const status = transition.status as Exclude<Transition['status'], 'completed' | 'failed'>;
  const rank = RANK[status];
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const now = clock.now().toISOString();
    const at = transition.at ?? now;
    const result = await callingService.transaction
      .write(({ call: calls, callStatusEvent }) => [
        calls
          .patch(callKey(workspaceId, callId))
          .set({ status, statusRank: rank, [STATUS_TIME[status]]: at, updatedAt: now })
          .where((attr, op) =>
            providerCallId === undefined
              ? op.lt(attr.statusRank, rank)
              : `${op.lt(attr.statusRank, rank)} AND ` +
                `(${op.notExists(attr.providerCallId)} OR ${op.eq(attr.providerCallId, providerCallId)})`,
          )
          .commit({ response: 'all_old' }),
        callStatusEvent
          .create({ callId, workspaceId, rank, status, at, source: transition.source, recordedAt: now })
          .commit(),
      ])
      .go();
    if (!result.canceled) return { moved: true };
    if (result.data[0]?.code === 'ConditionalCheckFailed') {
      const current = (result.data[0]?.item ?? undefined) as Call | undefined;
      if (!current) return { moved: false, unknown: true };
      if (providerCallId !== undefined && current.providerCallId && current.providerCallId !== providerCallId)
        return { moved: false, call: current, otherProviderCall: true };
      return notMoved(current, transition);
    }
    // A transaction conflict (a concurrent write of the call): try again.
    recordMetrics({ CallWriteConflicts: 1 });
    await new Promise((r) => setTimeout(r, 10 * (attempt + 1)));
  }
  throw new Error(`call ${callId}: status ${transition.status} could not be applied`);
}

async function fillTranscript(call: Call, transition: Transition): Promise<Call> {
  try {
    const { data } = await CallEntity.patch(callKey(call.workspaceId, call.callId))
      .set({
        transcript: toStoredTranscript(transition.transcript ?? []),
        ...(transition.quotedListings ? { quotedListings: toStoredListings(transition.quotedListings) } : {}),
      })
      .where((attr, op) => op.notExists(attr.transcript))
      .go({ response: 'all_new' });
    return data as Call;
  } catch (error) {
    if (isConditionFailure(error)) return (await readCall(call.workspaceId, call.callId)) ?? call;
    throw error;
  }
}

/**
 * The steps after a call ended, each safe to run again: charge its duration (once per call, by the
 * ledger's cause key) and its conversation memories when it used them, and count it for analytics
 * (once: call-stats.ts), in one transaction; then — once its recording and transcript are in, or
 * overdue — send `call.ended` to the post-call queue and take the call off the sweeper's list.
 * `asWritten`: `call` is what a write conditioned on the call as read (`asRead`) has just stored, so
 * a recording or transcript it lacks came after it — and whoever stored it finishes the call: when it
 * is not ready, it is not read again.
 */
export async function finishCall(call: Call, options: { asWritten?: boolean } = {}): Promise<void> {
  // A missed call is written ended, charged nothing, and is never reported (a late callback of the
  // provider for it changes nothing).
  if (!isTerminal(call.status) || isMissedCall(call)) return;
  // Charged once (the ledger's cause keys) and counted for analytics once (call-stats.ts), together.
  if (call.statsDay === undefined) call = await chargeAndCountCall(call);
  await countHandoffs(call);
  if (call.postCallSentAt) return;
  if (!isReady(call)) {
    if (options.asWritten) return;
    // What was passed in may predate a recording stored meanwhile: decide on a fresh read.
    const fresh = await readCall(call.workspaceId, call.callId);
    if (!fresh || fresh.postCallSentAt || !isReady(fresh)) return;
    call = fresh;
  }
  await sendMessage('postCall', {
    type: 'call.ended',
    call_id: call.callId,
    workspace_id: call.workspaceId,
    organisation_id: call.organisationId,
  });
  await publishWorkspaceEvent(callEndedEvent(call));
  await callingService.transaction
    .write(({ call: calls, openCall }) => [
      calls
        .patch(callKey(call.workspaceId, call.callId))
        .set({ postCallSentAt: clock.now().toISOString() })
        .commit(),
      openCall.delete({ shard: call.openShard, createdAt: call.createdAt, callId: call.callId }).commit(),
    ])
    .go();
}

/**
 * The workspace event `call.ended` (functions/platform/workspace-events.ts), published with the
 * post-call message; its id is the call's, so a second publish after a crash is the same event.
 */
function callEndedEvent(call: Call): NewWorkspaceEvent {
  // Read safely: a call placed by a campaign carries the campaign's id.
  const campaignId = (call as { campaignId?: unknown }).campaignId;
  return {
    id: `evt_call_ended_${call.callId}`,
    type: 'call.ended',
    workspaceId: call.workspaceId,
    organisationId: call.organisationId,
    occurredAt: call.endedAt ?? clock.now().toISOString(),
    data: {
      call_id: call.callId,
      agent_id: call.agentId,
      campaign_id: typeof campaignId === 'string' ? campaignId : null,
      direction: call.direction,
      status: wireStatus(call.status),
      end_reason: call.endReason ?? null,
      duration_seconds: call.durationSeconds ?? 0,
      from_phone: call.fromPhone,
      to_phone: call.toPhone,
      created_at: call.createdAt,
      ended_at: call.endedAt ?? null,
    },
  };
}

function isReady(call: Call): boolean {
  return readyForPostCall(
    {
      status: call.status,
      endReason: call.endReason,
      record: call.record,
      connectedAt: call.connectedAt ?? call.inprogressAt,
      endedAt: call.endedAt,
      recordingKey: call.recordingKey,
      hasTranscript: call.transcript !== undefined,
      transcriptExpected: call.transcriptExpected ?? false,
    },
    clock.now(),
  );
}

/**
 * A finished recording the provider announced: downloaded through the port, stored under
 * `recordings/<workspace>/<call>.wav` (the bucket's lifecycle rule is the retention), then the call
 * may be ready for the post-call pipeline. A repeated callback stores the same object again. The
 * recording and its short code are written on the call as read (`asRead`: the same status, and no
 * transcript when it had none), so the call is known as it stands after without reading it again: a
 * call that ended or got its transcript meanwhile is decided again on the call as the refusal returns it.
 */
export async function storeRecording(
  read: Call,
  recordingUrl: string,
  durationSeconds: number | undefined,
): Promise<void> {
  if (read.recordingKey) {
    await finishCall(read);
    return;
  }
  if (!read.record) {
    logger.warn('recording callback for a call that is not recorded; ignored', { callId: read.callId });
    return;
  }
  const bytes = await telephony().fetchRecording(recordingUrl);
  const key = recordingKey(read.workspaceId, read.callId);
  await putObject(key, bytes, 'audio/wav');
  // The recording and its public short code are stored together (the link resolves once the call has it).
  const shortCode = newShortCode();
  const stored = {
    recordingKey: key,
    shortCode,
    ...(durationSeconds !== undefined ? { recordingDurationSeconds: durationSeconds } : {}),
  };
  let call = read;
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const result = await callingService.transaction
      .write(({ call: calls, recordingLink }) => [
        calls
          .patch(callKey(call.workspaceId, call.callId))
          .set(stored)
          .where((attr, op) => asRead(call, attr, op))
          .commit({ response: 'all_old' }),
        recordingLink
          .create({
            shortCode,
            workspaceId: call.workspaceId,
            callId: call.callId,
            createdAt: clock.now().toISOString(),
          })
          .commit(),
      ])
      .go();
    if (!result.canceled) {
      const updated = { ...call, ...stored } as Call;
      if (isTerminal(updated.status)) await finishCall(updated, { asWritten: true });
      return;
    }
    recordMetrics({ CallWriteConflicts: 1 });
    if (result.data[0]?.code === 'ConditionalCheckFailed') {
      const current = (result.data[0]?.item ?? undefined) as Call | undefined;
      if (!current) return; // the call is gone
      if (current.recordingKey) {
        // Stored by a concurrent callback: it finishes the call as this one would.
        if (isTerminal(current.status)) await finishCall(current);
        return;
      }
      call = current; // it moved on, or got its transcript: store on the call as it is now
    } else {
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 20 * 2 ** Math.min(attempt, 4)));
    }
  }
  throw new Error(`call ${read.callId}: recording not stored (conflicts); retry`);
}
