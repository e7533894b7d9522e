import { encodeTime } from 'ulid';
import type { z } from 'zod';
import { queryPage, type Page } from '../platform/pagination.js';
import { displayCredits } from '../billing/credits.js';
import { clock } from '../platform/clock.js';
import { conflict, notFound } from '../platform/errors.js';
import { isId } from '../platform/ids.js';
import { isConditionFailure, type TableQuery } from '../platform/table.js';
import { logger } from '../platform/logger.js';
import { objectExists, signedDownloadUrl } from '../platform/storage.js';
import { telephony, type HangupResult } from '../providers/telephony/index.js';
import { CallEntity, CallStatusEventEntity, type Call, type CallStatusEvent } from './entities.js';
import { applyTransition, readCall } from './lifecycle.js';
import { remotePhoneOf } from './remote-phone.js';
import { callHandoffs, HANDED_OFF_MARK, lineAgentId } from './handoffs.js';
import { shortUrl } from './short-codes.js';
import { storeCallSentiment } from './call-stats.js';
import {
  boundMillis,
  type CallDetailResponse,
  type CallSummaryResponse,
  type ListCallsQuery,
} from './schemas.js';
import { isTerminal, statusesMatching, wireStatus } from './status.js';
import { CALL_SHARDS, callKey } from './call-shards.js';
import { mergedPage } from './call-log-merge.js';

/** The call log: list, detail, hang-up, recordings. */
export const CALL_NOT_FOUND = 'Call not found';
export const RECORDING_NOT_FOUND = 'Recording not found';
export const CALL_ALREADY_ENDED = 'Call has already ended';
/** Signed recording URLs live this long. */
export const RECORDING_URL_SECONDS = 300;

/** A call as the detail route sees it: the record plus its status history. */
export type CallView = Call & { statusHistory: CallStatusEvent[] };

/**
 * The call with its transcript, recording key, parameters, agent, numbers, timestamps and status
 * history; undefined when there is no such call.
 */
export async function getCall(workspaceId: string, callId: string): Promise<CallView | undefined> {
  if (!isId('call', callId)) return undefined;
  const [call, history] = await Promise.all([
    readCall(workspaceId, callId),
    CallStatusEventEntity.query.byCall({ callId }).go({ pages: 'all', consistent: true }),
  ]);
  if (!call) return undefined;
  const statusHistory = history.data
    .filter((e) => e.workspaceId === workspaceId)
    .sort((a, b) => a.rank - b.rank);
  return { ...call, statusHistory };
}

/**
 * The call alone, without its status history (one read, consistent): what the post-call pipeline
 * builds its payload from (the history is the call detail's, and cost it a query per call).
 */
export async function getCallFacts(workspaceId: string, callId: string): Promise<Call | undefined> {
  if (!isId('call', callId)) return undefined;
  return readCall(workspaceId, callId);
}

/**
 * Stores the post-call pipeline's sentiment analysis on the call (shown in the call detail) and
 * counts it for analytics, once (call-stats.ts).
 */
export async function setCallSentiment(
  workspaceId: string,
  callId: string,
  sentiment: unknown,
  analysis?: unknown,
  /** The call as the caller has just read it (consistently): not read again. */
  read?: Call,
): Promise<void> {
  await storeCallSentiment(workspaceId, callId, sentiment, analysis, read);
}

type CallQuery =
  | ReturnType<typeof CallEntity.query.byWorkspace>
  | ReturnType<typeof CallEntity.query.byAgent>
  | ReturnType<typeof CallEntity.query.byRemotePhone>;

const ULID_RANDOM_MIN = '0'.repeat(16);
const ULID_RANDOM_MAX = 'Z'.repeat(16);
/** Call ids are `call_<ULID>`: the ULID's first 10 characters are its creation time. */
const callIdAt = (ms: number, edge: 'min' | 'max') =>
  `call_${encodeTime(Math.min(Math.max(ms, 0), 281474976710655), 10)}${edge === 'min' ? ULID_RANDOM_MIN : ULID_RANDOM_MAX}`;

/**
 * The call log, newest first. The key it reads is the narrowest one asked for: the other party's
 * (`phone`: calls by remote phone), the agent's, else the workspace's; dates narrow its range (call ids
 * are ULIDs), and the rest filter the page.
 */
export async function listCalls(workspaceId: string, query: ListCallsQuery): Promise<Page<Call>> {
  if (query.agent_id !== undefined && !isId('agent', query.agent_id)) return { items: [], nextCursor: null };
  if (query.campaign_id !== undefined && !isId('campaign', query.campaign_id))
    return { items: [], nextCursor: null };
  if (query.contact_id !== undefined && !isId('contact', query.contact_id))
    return { items: [], nextCursor: null };
  const low = query.from !== undefined ? callIdAt(boundMillis(query.from, 'start'), 'min') : undefined;
  const high = query.to !== undefined ? callIdAt(boundMillis(query.to, 'end'), 'max') : undefined;
  if (low && high && low > high) return { items: [], nextCursor: null };
  const statuses = query.status ? statusesMatching(query.status) : undefined;
  const answeredBy = query.answered_by;

  // By phone, the agent is a filter (the phone's key is the narrower one).
  const agentFilter = query.phone !== undefined ? query.agent_id : undefined;
  const filtered = Boolean(
    statuses ||
    query.direction ||
    query.campaign_id ||
    query.contact_id ||
    agentFilter ||
    query.end_reason ||
    query.channel ||
    answeredBy ||
    query.agent_version !== undefined ||
    query.handed_off,
  );
  /** The key range (dates, and the merge's position: below it) and the filters, on any of the keys. */
  const narrowed = (base: CallQuery, below?: string) => {
    const top = below !== undefined && (high === undefined || below < high) ? below : high;
    const ranged =
      low && top
        ? base.between({ callId: low }, { callId: top })
        : low
          ? base.gte({ callId: low })
          : top
            ? base.lte({ callId: top })
            : base;
    return filtered
      ? ranged.where((attr, op) =>
          [
            statuses ? `(${statuses.map((s) => op.eq(attr.status, s)).join(' OR ')})` : '',
            agentFilter ? op.eq(attr.agentId, agentFilter) : '',
            query.direction ? op.eq(attr.direction, query.direction) : '',
            query.campaign_id ? op.eq(attr.campaignId, query.campaign_id) : '',
            query.contact_id ? op.eq(attr.contactId, query.contact_id) : '',
            query.end_reason ? op.eq(attr.endReason, query.end_reason) : '',
            // A call stored before channels were recorded is a phone call.
            query.channel === 'web'
              ? op.eq(attr.channel, 'web')
              : query.channel === 'phone'
                ? `(${op.eq(attr.channel, 'phone')} OR ${op.notExists(attr.channel)})`
                : '',
            // Without a detection result, an inbound call's caller is a person, an outbound one unknown.
            answeredBy === 'machine'
              ? op.eq(attr.answeredBy, 'machine')
              : answeredBy
                ? `(${op.eq(attr.answeredBy, answeredBy as 'human' | 'machine' | 'unknown')} OR (${op.notExists(attr.answeredBy)} AND ${op.eq(
                    attr.direction,
                    answeredBy === 'human' ? 'inbound' : 'outbound',
                  )}))`
                : '',
            query.agent_version !== undefined ? op.eq(attr.agentVersion, query.agent_version) : '',
            // Handoffs are in the recorded conversation (handoffs.ts); a call without one never had any.
            query.handed_off === 'true'
              ? op.contains(attr.conversation, HANDED_OFF_MARK)
              : query.handed_off === 'false'
                ? op.notContains(attr.conversation, HANDED_OFF_MARK)
                : '',
          ]
            .filter(Boolean)
            .join(' AND '),
        )
      : ranged;
  };

  if (query.phone === undefined && query.agent_id === undefined) {
    return mergedPage({
      workspaceId,
      limit: query.limit,
      cursor: query.cursor,
      filtered,
      build: (callShard, below) =>
        narrowed(CallEntity.query.byWorkspace({ workspaceId, callShard }), below).params<TableQuery>({
          order: 'desc',
        }),
    });
  }
  if (query.phone === undefined && query.agent_id !== undefined) {
    const agentId = query.agent_id;
    // The agent's index is sharded as the calls are; calls written before keep its one old key.
    const keys = Array.from(
      { length: CALL_SHARDS },
      (_, n) => `WS#${workspaceId}#AGENT#${agentId}#CALLS#${n}`,
    );
    return mergedPage({
      workspaceId,
      limit: query.limit,
      cursor: query.cursor,
      filtered,
      keys: [...keys, `WS#${workspaceId}#AGENT#${agentId}#CALLS`],
      build: (callShard, below) =>
        narrowed(CallEntity.query.byAgent({ workspaceId, agentId, callShard }), below).params<TableQuery>({
          order: 'desc',
        }),
    });
  }
  const page = await queryPage(query.cursor, (cursor) =>
    narrowed(CallEntity.query.byRemotePhone({ workspaceId, remotePhone: query.phone ?? '' })).go({
      order: 'desc',
      count: query.limit,
      cursor,
    }),
  );
  return { items: page.items as Call[], nextCursor: page.nextCursor };
}

export async function requireCall(workspaceId: string, callId: string): Promise<CallView> {
  const call = await getCall(workspaceId, callId);
  if (!call) throw notFound(CALL_NOT_FOUND);
  return call;
}

/**
 * Ends a call that has not ended: at the provider (best effort), then here — `completed` with end
 * reason `hangup` when it had been answered, else `failed` with `canceled`. A call not yet dialled is
 * never dialled (the dispatcher's claim fails); one being dialled is hung up once the provider names it.
 */
export async function hangupCall(workspaceId: string, callId: string, endedBy: string): Promise<CallView> {
  const call = await requireCall(workspaceId, callId);
  if (isTerminal(call.status)) throw conflict(CALL_ALREADY_ENDED);
  let ended: HangupResult = {};
  let hungUpAtProvider = false;
  if (call.providerCallId) {
    await recordHangupRequest(call, endedBy);
    try {
      ended = await telephony().hangupCall(call.providerCallId);
      hungUpAtProvider = true;
    } catch (error) {
      logger.warn('provider hangup failed; ending the call here', { callId, error: String(error) });
    }
  }
  const answered =
    call.connectedAt !== undefined || call.inprogressAt !== undefined || (ended.durationSeconds ?? 0) > 0;
  const { moved } = await applyTransition(workspaceId, callId, {
    status: answered ? 'completed' : 'failed',
    endReason: answered ? 'hangup' : 'canceled',
    at: ended.endedAt ?? clock.now().toISOString(),
    providerSeconds: ended.durationSeconds,
    source: 'hangup',
    endedBy,
  });
  const after = await requireCall(workspaceId, callId);
  if (!moved && after.endedBy !== endedBy && !hungUpAtProvider) {
    // The provider's own terminal callback won the race: the call had ended already. (When the
    // provider accepted our hang-up, its terminal callback is the answer to it, not a prior end.)
    throw conflict(CALL_ALREADY_ENDED);
  }
  return after;
}

/** Marks the hang-up as asked for before the provider hears of it, so its terminal callback counts as ours. */
async function recordHangupRequest(call: Call, endedBy: string): Promise<void> {
  try {
    await CallEntity.patch(callKey(call.workspaceId, call.callId))
      .set({ hangupRequestedBy: endedBy })
      .where((attr, op) => op.eq(attr.statusRank, call.statusRank))
      .go({ response: 'none' });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // The call moved meanwhile; the transition below decides on what it is now.
  }
}

/** A short-lived signed URL of the recording; 404 when the call was not recorded or it is past retention. */
export async function recordingDownloadUrl(workspaceId: string, callId: string): Promise<string> {
  if (!isId('call', callId)) throw notFound(CALL_NOT_FOUND);
  const call = await readCall(workspaceId, callId);
  if (!call) throw notFound(CALL_NOT_FOUND);
  if (!call.recordingKey || !(await objectExists(call.recordingKey))) throw notFound(RECORDING_NOT_FOUND);
  return signedDownloadUrl(call.recordingKey, RECORDING_URL_SECONDS);
}

// ── Wire shapes ────────────────────────────────────────────────────────────────────────────────────

export function toCallSummary(call: Call): z.infer<typeof CallSummaryResponse> {
  const handedOver = callHandoffs(call);
  return {
    id: call.callId,
    workspace_id: call.workspaceId,
    agent_id: call.agentId,
    agent_name: call.agentName,
    agent_version: call.agentVersion ?? null,
    campaign_id: call.campaignId ?? null,
    contact_id: call.contactId ?? null,
    direction: call.direction,
    to_phone: call.toPhone,
    from_phone: call.fromPhone,
    remote_phone: remotePhoneOf(call) ?? null,
    record: call.record,
    status: wireStatus(call.status),
    end_reason: call.endReason ?? null,
    created_by: call.createdBy,
    created_at: call.createdAt,
    initiated_at: call.initiatedAt ?? null,
    connected_at: call.connectedAt ?? null,
    inprogress_at: call.inprogressAt ?? null,
    ended_at: call.endedAt ?? null,
    duration_seconds: call.durationSeconds ?? null,
    credits: call.chargedUnits === undefined ? null : displayCredits(call.chargedUnits),
    recording_available: call.recordingKey !== undefined,
    channel: call.channel ?? 'phone',
    answered_by: call.answeredBy ?? (call.direction === 'inbound' ? 'human' : 'unknown'),
    ...analysisBrief(call.analysis),
    handoff_count: handedOver.handoffs.length,
    active_agent_id: handedOver.active_agent_id,
  };
}

const SENTIMENTS = ['positive', 'neutral', 'negative'] as const;

/** What a list item shows of the post-call analysis (stored as the pipeline wrote it). */
function analysisBrief(analysis: unknown): {
  user_sentiment: (typeof SENTIMENTS)[number] | null;
  call_successful: boolean | null;
  summary_line: string | null;
} {
  const a = (analysis ?? {}) as { user_sentiment?: unknown; call_successful?: unknown; summary?: unknown };
  const sentiment = SENTIMENTS.find((s) => s === a.user_sentiment) ?? null;
  const line =
    typeof a.summary === 'string' ? (a.summary.split('\n').find((l) => l.trim()) ?? '').trim() : '';
  return {
    user_sentiment: sentiment,
    call_successful: typeof a.call_successful === 'boolean' ? a.call_successful : null,
    summary_line: line ? (line.length > 200 ? `${line.slice(0, 199)}…` : line) : null,
  };
}

interface StoredConversation {
  tool_calls?: {
    name: string;
    arguments: Record<string, unknown>;
    ok: boolean;
    at: string;
    error?: string;
    type?: 'builtin' | 'function' | 'mcp';
    status?: 'ok' | 'error' | 'timeout' | 'cancelled';
    http_status?: number;
    duration_ms?: number;
    agent_id?: string;
  }[];
  latency?: {
    turns: number;
    total_ms: { p50: number | null; p90: number | null };
    model_ms: { p50: number | null; p90: number | null };
    service_ms: { p50: number | null; p90: number | null };
  };
  incidents?: { at: string; kind: string; detail: string }[];
  ended_by?: 'agent_hangup' | 'transfer' | 'caller_hangup' | 'voicemail' | null;
}

const NO_PERCENTILES = { p50: null, p90: null };

function storedConversation(call: CallView): StoredConversation {
  if (!call.conversation) return {};
  try {
    return JSON.parse(call.conversation) as StoredConversation;
  } catch {
    return {};
  }
}

export function toCallDetail(call: CallView): z.infer<typeof CallDetailResponse> {
  const conversation = storedConversation(call);
  const handedOver = callHandoffs(call);
  return {
    ...toCallSummary(call),
    parameters: (call.parameters ?? {}) as Record<string, string>,
    status_history: call.statusHistory.map((event) => ({
      status: wireStatus(event.status),
      at: event.at,
      end_reason: event.endReason ?? null,
      source: event.source,
    })),
    transcript: (call.transcript ?? []).map((t) => ({
      role: t.role,
      text: t.text,
      offset_seconds: t.offsetSeconds,
      ...(t.role === 'agent' ? { agent_id: lineAgentId(call, t) } : {}),
    })),
    quoted_listings: (call.quotedListings ?? []).map((l) => ({
      listing_id: l.listingId,
      item_id: l.itemId ?? null,
      address: l.address,
      price: l.price,
    })),
    recording: call.recordingKey
      ? {
          url: `/api/v1/workspaces/${call.workspaceId}/calls/${call.callId}/recording`,
          duration_seconds: call.recordingDurationSeconds ?? null,
        }
      : null,
    sentiment: call.sentiment ?? null,
    analysis: (call.analysis ?? null) as z.infer<typeof CallDetailResponse>['analysis'],
    short_url: call.shortCode ? shortUrl(call.shortCode) : null,
    provider_call_id: call.providerCallId ?? null,
    tool_calls: (conversation.tool_calls ?? []).map((c) => ({ ...c, agent_id: c.agent_id ?? call.agentId })),
    latency: conversation.latency ?? {
      turns: 0,
      total_ms: NO_PERCENTILES,
      model_ms: NO_PERCENTILES,
      service_ms: NO_PERCENTILES,
    },
    conversation_incidents: conversation.incidents ?? [],
    conversation_ended_by: conversation.ended_by ?? null,
    transferred_to: call.agentEnded === 'transfer' ? (call.transferTo ?? null) : null,
    handoffs: handedOver.handoffs,
    voicemail_message_left: call.voicemailMessageLeft === true,
    pii_redacted: call.piiRedacted === true,
    transfer: call.transfer
      ? {
          mode: call.transfer.mode,
          to: call.transfer.to,
          summary: call.transfer.summary ?? null,
          status: call.transfer.status ?? null,
        }
      : call.agentEnded === 'transfer' && call.transferTo
        ? { mode: 'cold', to: call.transferTo, summary: null, status: null }
        : null,
  };
}
