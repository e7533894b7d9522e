import { CallEntity, type Call } from '../../calling/entities.js';
import { countTurnLatencies } from '../../calling/call-stats.js';
import { finishCall, readCall } from '../../calling/lifecycle.js';
import { isTerminal } from '../../calling/status.js';
import { callKnownValues, callRegions, redactionCategories } from '../../calling/pii.js';
import { isConditionFailure } from '../../platform/table.js';
import { ConversationEntity } from './entities.js';
import { redactConversation } from './redaction.js';
import {
  callListing,
  percentile,
  type CallListing,
  type ConversationRedaction,
  type ConversationSetup,
  type ConversationState,
  type QuotedListingRecord,
} from '../engine/model.js';
import { callKey } from '../../calling/call-shards.js';

/**
 * What a call keeps of its conversation, written when the conversation ends (the agent ended it, the
 * caller hung up, the socket dropped): the transcript as spoken (cut where interrupted), the listings
 * the agent quoted, and the tool calls, latency and incidents. A call that has already ended is then
 * sent on to the post-call pipeline (which waited for its transcript).
 *
 * `listing`: the call's own listing as the conversation's setup kept it (null: none); undefined (a
 * conversation set up before the setup kept it) reads the call for it first.
 */
export async function recordConversation(
  ref: { workspaceId: string; callId: string; setup?: string; piiRedaction?: Call['piiRedaction'] },
  state: ConversationState,
  listing?: CallListing | null,
): Promise<Call | undefined> {
  const redaction = redactionOf(ref);
  let known: CallListing | null;
  if (listing === undefined) {
    const call = await readCall(ref.workspaceId, ref.callId);
    if (!call) return undefined;
    known = callListing((call.parameters ?? {}) as Record<string, string>);
  } else known = listing;
  const spoken = [...state.transcript]
    .sort((a, b) => a.offsetSeconds - b.offsetSeconds)
    .map((entry) => ({
      role: entry.role,
      text: entry.text.slice(0, 10_000),
      offsetSeconds: entry.offsetSeconds,
      // Which agent spoke (a call handed over has several; the greeting is the call's own agent's).
      ...(entry.role === 'agent' && entry.agentId ? { agentId: entry.agentId } : {}),
    }));
  const quoted = quotedListings(known, state);
  // What is stored of a call with PII redaction holds tokens; the quoted listings were found first.
  const { transcript, toolCalls, incidents } = redaction
    ? await redactConversation(ref, redaction, {
        transcript: spoken,
        toolCalls: state.toolCalls,
        incidents: state.incidents,
      })
    : { transcript: spoken, toolCalls: state.toolCalls, incidents: state.incidents };
  const totals = state.latencies.map((l) => l.totalMs);
  const models = state.latencies.map((l) => l.modelMs);
  const services = state.latencies.map((l) => Math.max(0, l.totalMs - l.modelMs));
  const conversation = {
    tool_calls: toolCalls.map((record) => ({
      name: record.name,
      arguments: record.arguments,
      ok: record.ok,
      at: record.at,
      ...(record.error ? { error: record.error } : {}),
      type: record.type ?? 'builtin',
      status: record.status ?? (record.ok ? 'ok' : 'error'),
      ...(record.httpStatus !== undefined ? { http_status: record.httpStatus } : {}),
      ...(record.durationMs !== undefined ? { duration_ms: record.durationMs } : {}),
      ...(record.agentId ? { agent_id: record.agentId } : {}),
    })),
    active_agent_id: state.activeSetup?.agentId ?? null,
    // Stringified as is: the call log's `handed_off` filter finds `"handoffs":[{` (calling/handoffs.ts).
    handoffs: (state.handoffs ?? []).map((handoff) => ({
      from_agent_id: handoff.fromAgentId,
      to_agent_id: handoff.toAgentId,
      to_agent_version: handoff.toAgentVersion,
      at: handoff.at,
      reason: handoff.reason,
      summary: handoff.summary,
    })),
    latency: {
      turns: state.latencies.length,
      service_ms: { p50: percentile(services, 50), p90: percentile(services, 90) },
      model_ms: { p50: percentile(models, 50), p90: percentile(models, 90) },
      total_ms: { p50: percentile(totals, 50), p90: percentile(totals, 90) },
    },
    incidents,
    ended_by: state.ended?.reason ?? null,
  };
  let updated: Call;
  try {
    // No read first: the write returns the call (a call that does not exist fails its condition).
    const { data } = await CallEntity.patch(callKey(ref.workspaceId, ref.callId))
      .set({
        transcript,
        quotedListings: quoted,
        conversation: JSON.stringify(conversation),
        ...(redaction ? { piiRedacted: true } : {}),
      })
      .go({ response: 'all_new' });
    updated = data as Call;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
  // The raw history the live conversation needed goes with the call's end (redaction on).
  if (redaction && 'connectionId' in ref && typeof ref.connectionId === 'string')
    await ConversationEntity.delete({ connectionId: ref.connectionId }).go({ response: 'none' });
  // The analytics' latency histogram (once per call, whatever records the conversation again).
  await countTurnLatencies(updated, totals);
  if (isTerminal(updated.status)) await finishCall(updated);
  return updated;
}

/**
 * The call's redaction: the setup's (a session's conversation item), else the call's own setting (a
 * call recorded without a session: its known values are its own); undefined when off.
 */
function redactionOf(ref: {
  setup?: string;
  piiRedaction?: Call['piiRedaction'];
}): ConversationRedaction | undefined {
  if (typeof ref.setup === 'string') return (JSON.parse(ref.setup) as ConversationSetup).redaction;
  if (!ref.piiRedaction) return undefined;
  const call = ref as Partial<Call>;
  const categories = redactionCategories(ref.piiRedaction);
  return {
    ...(categories ? { categories } : {}),
    known: callKnownValues({
      parameters: call.parameters ?? {},
      direction: call.direction ?? 'outbound',
      fromPhone: call.fromPhone ?? '',
      toPhone: call.toPhone ?? '',
    }),
    regions: callRegions({ fromPhone: call.fromPhone ?? '', toPhone: call.toPhone ?? '' }),
    ...(call.contactId ? { contactId: call.contactId } : {}),
  };
}

/**
 * The listings the agent quoted: those the knowledge tool found whose address or price the agent then
 * said, and the call's own listing (`listing_id`, `listing_address`, `listing_price` parameters) when
 * the agent said its price. One entry per listing id.
 */
function quotedListings(listing: CallListing | null, state: ConversationState): QuotedListingRecord[] {
  const said = state.transcript
    .filter((entry) => entry.role === 'agent')
    .map((entry) => entry.text.toLowerCase())
    .join('\n');
  const out = new Map<string, QuotedListingRecord>();
  for (const quoted of state.quotedListings) {
    if (said.includes(quoted.address.toLowerCase()) || said.includes(quoted.price.toLowerCase()))
      out.set(quoted.listingId, quoted);
  }
  if (listing && said.includes(listing.price.toLowerCase()) && !out.has(listing.listingId))
    out.set(listing.listingId, { ...listing, itemId: '' });
  return [...out.values()].map(({ itemId, ...rest }) =>
    itemId ? { ...rest, itemId } : rest,
  ) as QuotedListingRecord[];
}
