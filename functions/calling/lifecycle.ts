import { BUCKET } from '../platform/resources.js';
import { isConditionFailure } from '../platform/table.js';
import { chargeCallUsage } from '../billing/metering.js';
import { clock } from '../platform/clock.js';
import { logger } from '../platform/logger.js';
import { sendMessage } from '../platform/queue.js';
import { publishWorkspaceEvent, type NewWorkspaceEvent } from '../platform/workspace-events.js';
import { putObject } from '../platform/storage.js';
import { telephony } from '../providers/telephony/index.js';
import type { EndReason, QuotedListing, TranscriptTurn } from '../providers/telephony/twilio-format.js';
import { releaseConcurrencySlot } from './concurrency.js';
import { newShortCode } from './short-codes.js';
import { countFinishedCall, writeRetryingConflicts } from './call-stats.js';
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

/**
 * Moving calls along their lifecycle. Every transition is one conditional transaction guarded by the
 * status that was read (optimistic concurrency), so duplicate, late or concurrent callbacks change
 * nothing a second time. The terminal transition also frees the workspace's concurrency slot in the
 * same transaction. After it, two idempotent steps: charge the call, then tell the post-call
 * pipeline — both re-run on any later callback or by the sweeper, so a crash between them loses nothing.
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

export async function readCall(workspaceId: string, callId: string): Promise<Call | undefined> {
  const { data } = await CallEntity.get({ workspaceId, callId }).go({ consistent: true });
  return data ?? undefined;
}

const toStoredTranscript = (turns: TranscriptTurn[]) =>
  turns.map((t) => ({ role: t.role, text: t.text, offsetSeconds: t.offset_seconds }));
const toStoredListings = (listings: QuotedListing[]) =>
  listings.map((l) => ({ listingId: l.listing_id, address: l.address, price: l.price }));

const cancellationCodes = (data: { rejected?: boolean; code?: string }[]) =>
  data.map((d) => d.code ?? 'None');

/**
 * Applies a status to a call if it moves the call forward; otherwise changes nothing (a late
 * terminal callback may still bring the transcript the call lacks). Returns whether it moved.
 * `read` is the call as the caller has just read it (consistently, as readCall does): the first
 * attempt decides on it instead of reading it again — the transaction is conditioned on the status
 * it saw, so a call that moved meanwhile is read afresh on the next attempt.
 */
export async function applyTransition(
  workspaceId: string,
  callId: string,
  transition: Transition,
  read?: Call,
): Promise<{ moved: boolean; call?: Call }> {
  let skipWorkspace = false;
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const call = attempt === 0 && read ? read : await readCall(workspaceId, callId);
    if (!call) return { moved: false };
    if (!canMove(call.status, transition.status)) {
      let current = call;
      if (isTerminal(call.status) && transition.transcript && !call.transcript)
        current = await fillTranscript(call, transition);
      if (isTerminal(call.status)) await finishCall(current);
      return { moved: false, call: current };
    }
    const now = clock.now().toISOString();
    const at = transition.at ?? now;
    const terminal = isTerminal(transition.status);
    const set: Partial<Call> = {
      status: transition.status,
      statusRank: RANK[transition.status],
      updatedAt: now,
    };
    if (terminal) {
      const answeredAt = call.connectedAt ?? call.inprogressAt;
      set.endedAt = at;
      set.endReason = transition.endReason ?? (transition.status === 'completed' ? 'completed' : 'failed');
      if (transition.source === 'provider' && call.hangupRequestedBy) {
        // Our hang-up request reached the provider first; its terminal callback is the answer to it.
        set.endReason = answeredAt || transition.status === 'completed' ? 'hangup' : 'canceled';
        set.endedBy = call.hangupRequestedBy;
      }
      // The agent ended the conversation (its end_call): whoever then ended the call, it was the agent's doing.
      if (transition.status === 'completed' && call.agentEnded === 'agent_hangup')
        set.endReason = 'agent_hangup';
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
    } else {
      set[STATUS_TIME[transition.status]] = at;
    }
    const result = await callingService.transaction
      .write(({ call: calls, callStatusEvent, workspace }) => [
        calls
          .patch({ workspaceId, callId })
          .set(set)
          .where((attr, op) => op.eq(attr.statusRank, call.statusRank))
          .commit(),
        callStatusEvent
          .create({
            callId,
            workspaceId,
            rank: RANK[transition.status],
            status: transition.status,
            at,
            endReason: terminal ? set.endReason : undefined,
            source: transition.source,
            recordedAt: now,
          })
          .commit(),
        ...(terminal && !skipWorkspace ? [releaseConcurrencySlot(workspace, workspaceId)] : []),
      ])
      .go();
    if (!result.canceled) {
      const moved = { ...call, ...set } as Call;
      if (terminal) await finishCall(moved);
      return { moved: true, call: moved };
    }
    const codes = cancellationCodes(result.data);
    if (terminal && codes[0] === 'None' && codes[1] === 'None' && codes[2] === 'ConditionalCheckFailed') {
      // The workspace is gone or its counter is already 0: end the call without touching it.
      logger.warn('workspace active-call counter not lowered', { workspaceId, callId });
      skipWorkspace = true;
    }
    // Otherwise another request moved the call (or a transaction conflict): read again and decide again.
    await new Promise((r) => setTimeout(r, 10 * (attempt + 1)));
  }
  throw new Error(`call ${callId}: status ${transition.status} could not be applied`);
}

async function fillTranscript(call: Call, transition: Transition): Promise<Call> {
  try {
    const { data } = await CallEntity.patch({ workspaceId: call.workspaceId, callId: call.callId })
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
 * ledger's cause key) and its conversation memories when it used them, count it for analytics (once:
 * call-stats.ts), then — once its recording and transcript are in, or overdue — send
 * `call.ended` to the post-call queue and take the call off the sweeper's list.
 */
export async function finishCall(call: Call): Promise<void> {
  // A missed call is written ended, charged nothing, and is never reported (a late callback of the
  // provider for it changes nothing).
  if (!isTerminal(call.status) || isMissedCall(call)) return;
  if (call.statsDay === undefined) {
    // Charged once (the ledger's cause keys), then recorded and counted for analytics once (call-stats.ts).
    const units =
      call.chargedUnits ??
      (
        await chargeCallUsage({
          organisationId: call.organisationId,
          callId: call.callId,
          billableSeconds: call.durationSeconds ?? 0,
          memoriesUsed: call.memoriesUsed === true,
        })
      ).units;
    call = await countFinishedCall(call, units);
  }
  if (call.postCallSentAt) return;
  if (!isReady(call)) {
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
        .patch({ workspaceId: call.workspaceId, callId: call.callId })
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
 * may be ready for the post-call pipeline. A repeated callback stores the same object again.
 */
export async function storeRecording(
  call: Call,
  recordingUrl: string,
  durationSeconds: number | undefined,
): Promise<void> {
  if (call.recordingKey) {
    await finishCall(call);
    return;
  }
  if (!call.record) {
    logger.warn('recording callback for a call that is not recorded; ignored', { callId: call.callId });
    return;
  }
  const bytes = await telephony().fetchRecording(recordingUrl);
  const key = recordingKey(call.workspaceId, call.callId);
  await putObject(key, bytes, 'audio/wav');
  // The recording and its public short code are stored together (the link resolves once the call has it).
  const shortCode = newShortCode();
  await writeRetryingConflicts(() =>
    callingService.transaction
      .write(({ call: calls, recordingLink }) => [
        calls
          .patch({ workspaceId: call.workspaceId, callId: call.callId })
          .set({
            recordingKey: key,
            shortCode,
            ...(durationSeconds !== undefined ? { recordingDurationSeconds: durationSeconds } : {}),
          })
          .where((attr, op) => op.notExists(attr.recordingKey))
          .commit(),
        recordingLink
          .create({
            shortCode,
            workspaceId: call.workspaceId,
            callId: call.callId,
            createdAt: clock.now().toISOString(),
          })
          .commit(),
      ])
      .go(),
  );
  // Stored now, or by a concurrent callback: either way the call is read afresh.
  const updated = (await readCall(call.workspaceId, call.callId)) ?? call;
  if (!updated.recordingKey) throw new Error(`call ${call.callId}: recording not stored (a conflict); retry`);
  if (isTerminal(updated.status)) await finishCall(updated);
}
