import type { Call } from './entities.js';

/**
 * Agents that hand off, as a call records them. The conversation engine writes, when the conversation
 * ends, into the call's `conversation` JSON (conversation/storage/record.ts) `active_agent_id` (the agent
 * speaking at the end) and `handoffs` (each switch: from, to, the target's version, when, why, the
 * summary), each tool call's `agent_id`, and each transcript line's `agentId`. The call stays the first
 * agent's (`agentId`): these say who spoke. A call recorded before handoffs existed, or without one,
 * reads as the first agent's throughout (`active_agent_id` its agent, `handoffs` empty).
 */

export interface CallHandoff {
  from_agent_id: string;
  to_agent_id: string;
  to_agent_version: number | null;
  at: string;
  reason: string;
  summary: string;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The call's conversation JSON, parsed (an empty object when absent or unreadable). */
export function conversationOf(call: Pick<Call, 'conversation'>): Record<string, unknown> {
  if (!call.conversation) return {};
  try {
    const parsed: unknown = JSON.parse(call.conversation);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** The handoffs recorded in a call's conversation (parsed by conversationOf), in order; [] when none. */
export function handoffsOf(conversation: Record<string, unknown>): CallHandoff[] {
  const list = conversation.handoffs;
  if (!Array.isArray(list)) return [];
  return list.flatMap((entry: unknown): CallHandoff[] => {
    if (!entry || typeof entry !== 'object') return [];
    const h = entry as Record<string, unknown>;
    if (typeof h.to_agent_id !== 'string' || typeof h.from_agent_id !== 'string') return [];
    const version = h.to_agent_version;
    return [
      {
        from_agent_id: h.from_agent_id,
        to_agent_id: h.to_agent_id,
        to_agent_version: typeof version === 'number' && Number.isSafeInteger(version) ? version : null,
        at: text(h.at),
        reason: text(h.reason),
        summary: text(h.summary),
      },
    ];
  });
}

/** Who spoke last: the recorded `active_agent_id`, else the last handoff's target, else the call's agent. */
export function activeAgentOf(call: Pick<Call, 'agentId'>, conversation: Record<string, unknown>): string {
  if (typeof conversation.active_agent_id === 'string' && conversation.active_agent_id !== '')
    return conversation.active_agent_id;
  return handoffsOf(conversation).at(-1)?.to_agent_id ?? call.agentId;
}

/** The call's handoffs as its detail and the post-call payload show them. */
export function callHandoffs(call: Pick<Call, 'agentId' | 'conversation'>): {
  active_agent_id: string;
  handoffs: CallHandoff[];
} {
  const conversation = conversationOf(call);
  return { active_agent_id: activeAgentOf(call, conversation), handoffs: handoffsOf(conversation) };
}

/**
 * What a stored conversation holds when it has at least one handoff: record.ts writes it with
 * `JSON.stringify` (no spaces), so a non-empty `handoffs` list reads `"handoffs":[{`. The call log's
 * `handed_off` filter matches it in the table (a condition on the stored string, across every call
 * recorded since handoffs were), where the parsed list cannot be read.
 */
export const HANDED_OFF_MARK = '"handoffs":[{';

/** Whether the call's recorded conversation has at least one handoff (analytics' `handoffs`). */
export const wasHandedOver = (call: Pick<Call, 'conversation'>): boolean =>
  call.conversation !== undefined && handoffsOf(conversationOf(call)).length > 0;

/** A transcript line's agent: its own for the agents' side (default the call's agent); none for the caller's. */
export const lineAgentId = (
  call: Pick<Call, 'agentId'>,
  turn: { role: 'agent' | 'user'; agentId?: string },
): string | undefined => (turn.role === 'agent' ? (turn.agentId ?? call.agentId) : undefined);
