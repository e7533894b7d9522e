import type { LlmMessage, LlmTool } from '../../providers/llm/port.js';
import { BUILT_IN_TOOLS } from '../../agents/built-in-tools.js';
import type { PiiCategory } from '../../platform/pii/categories.js';
import type { KnownValue } from '../../platform/pii/redactor.js';

/**
 * A conversation between a caller and an agent, independent of how it is carried (a phone call's
 * ConversationRelay socket, the dashboard's test chat, an evaluation's scripted caller). What is fixed
 * when it starts (`ConversationSetup`) and what each turn changes (`ConversationState`).
 */

/** The built-in tools' names: the one list the agents' schema checks too (agents/built-in-tools.ts). */
export const TOOL_NAMES = BUILT_IN_TOOLS;

/** At most this many handoffs a call (then `handoff_to_agent` is not offered). */
export const MAX_HANDOFFS_A_CALL = 3;

/** An agent the call's active agent may hand the caller to (the agent's `handoffs` setting). */
export interface HandoffTarget {
  agentId: string;
  name: string;
  /** When to hand over (the agent's words). */
  description: string;
  /** What of the conversation the target is given: the words so far, only the note, or nothing. */
  context: 'full' | 'summary' | 'none';
}

/** A handoff as the call records it. */
export interface HandoffRecord {
  fromAgentId: string;
  toAgentId: string;
  toAgentVersion: number | null;
  at: string;
  reason: string;
  summary: string;
}

/** What a `handoff_to_agent` call hands over to, made ready before the switch is written. */
export interface HandoffSwitch {
  /** The target's setup: its prompt (with the note), tools, knowledge, language. */
  setup: ConversationSetup;
  record: HandoffRecord;
  context: HandoffTarget['context'];
}

export interface ConversationSetup {
  workspaceId: string;
  agentId: string;
  callId: string;
  /** The system prompt: the agent's prompt with parameters filled, memories, time zone and time. */
  system: string;
  /** What the agent says first (already spoken by the transport: Twilio's welcomeGreeting). */
  greeting: string;
  tools: LlmTool[];
  knowledgeBaseIds: string[];
  transferPhoneNumber?: string;
  /**
   * The agent's transfer is warm: the person dialled first hears a summary of the call (written when
   * the model calls transfer_call, conversation/transfer.ts), through `transferWhisper` when set.
   */
  transferMode?: 'warm';
  /** A warm transfer's whisper template (`{{summary}}` and the call's parameters). */
  transferWhisper?: string;
  /** The agent has tools of its own (kept beside the conversation, not here: tools/agent-toolbox.ts). */
  agentTools?: boolean;
  /**
   * The call's own listing (its `listing_id`, `listing_address`, `listing_price` or `price`
   * parameters; null: none): kept as quoted when the agent said its price (storage/record.ts).
   */
  callListing?: CallListing | null;
  /** The agent's name and language (BCP 47): a handoff's target says a `language` frame first when it differs. */
  agentName?: string;
  language?: string;
  /** The agents this one may hand the caller to (absent: none). */
  handoffs?: HandoffTarget[];
  /** What a handoff's target needs of the call to make its own setup (present with `handoffs`). */
  callContext?: {
    parameters: Record<string, string>;
    memories: string[];
    channel: 'phone' | 'web';
    agentVersion: number | null;
    direction: 'inbound' | 'outbound' | null;
    fromPhone: string | null;
    toPhone: string | null;
  };
  /** Where the agent's own tools are kept for the call (absent: under the session's connection id). */
  toolsKey?: string;
  /**
   * PII redaction of what the call stores (storage/redaction.ts); absent: off. The live
   * conversation is not redacted.
   */
  redaction?: ConversationRedaction;
  /** When the conversation started (ISO). Transcript offsets count from here. */
  startedAt: string;
  /** Call seconds per wall-clock second (the local telephony simulator plays calls faster). */
  timeScale: number;
}

export interface ConversationRedaction {
  /** Absent: every category. */
  categories?: PiiCategory[];
  /** The values always found (the call's parameters and numbers). */
  known: KnownValue[];
  /** Regions of the call's numbers (national phone formats). */
  regions: string[];
  /** The call's contact, whose name, phone and e-mail are known values too. */
  contactId?: string;
  /** The agent's language (BCP 47), for an outside detector of names and addresses. */
  language?: string;
}

export interface CallListing {
  listingId: string;
  address: string;
  price: string;
}

/** The listing the call is about, from its parameters (`listing_price`, else `price`); null: none. */
export function callListing(parameters: Record<string, string>): CallListing | null {
  const listingId = parameters.listing_id?.trim();
  const price = (parameters.listing_price ?? parameters.price)?.trim();
  return listingId && price ? { listingId, address: (parameters.listing_address ?? '').trim(), price } : null;
}

export interface TranscriptEntry {
  role: 'agent' | 'user';
  text: string;
  offsetSeconds: number;
  /** The agent was cut off here (the text is what the caller heard). */
  interrupted?: boolean;
  /** Which agent spoke the line (a call handed over has several). */
  agentId?: string;
}

export interface ToolCallRecord {
  name: string;
  /** The model's arguments (an agent tool's static arguments are never among them). */
  arguments: Record<string, unknown>;
  ok: boolean;
  at: string;
  /** Why it failed (unknown tool, an error): never personal data. */
  error?: string;
  type?: 'builtin' | 'function' | 'mcp';
  status?: 'ok' | 'error' | 'timeout' | 'cancelled';
  httpStatus?: number;
  durationMs?: number;
  /** Which agent called the tool. */
  agentId?: string;
}

/** A turn's latency: from the caller's prompt to the agent's first words sent. */
export interface TurnLatency {
  /** Prompt received → first text frame sent. */
  totalMs: number;
  /** The model's part: request → first token (summed over tool rounds before the first words). */
  modelMs: number;
}

export interface ConversationIncident {
  at: string;
  kind:
    | 'model_error'
    | 'tool_error'
    | 'turn_deadline'
    | 'prompt_truncated'
    | 'mcp_tool_skipped'
    | 'mcp_server_failed'
    | 'redaction_failed';
  detail: string;
}

export interface QuotedListingRecord {
  listingId: string;
  itemId: string;
  address: string;
  price: string;
}

export type ConversationEnd =
  | { reason: 'agent_hangup' }
  | { reason: 'transfer'; transferTo: string; mode?: 'cold' | 'warm' }
  | { reason: 'caller_hangup' }
  /** Answering-machine detection found a machine (conversation/voicemail.ts). */
  | { reason: 'voicemail' };

export interface ConversationState {
  /** Bumped by every new prompt and every interruption: a turn speaks only while it is current. */
  generation: number;
  history: LlmMessage[];
  transcript: TranscriptEntry[];
  toolCalls: ToolCallRecord[];
  latencies: TurnLatency[];
  incidents: ConversationIncident[];
  quotedListings: QuotedListingRecord[];
  ended?: ConversationEnd;
  /**
   * When the frame that began the latest turn reached the socket (ms since the epoch). Frames are
   * handled in parallel, so an interruption may be handled after a newer prompt: one that reached the
   * socket no later than that prompt concerns the reply before it, and does not stop the newer turn.
   */
  turnFrameAt?: number;
  /** The agent speaking now, once a handoff switched it (absent: the call's own agent, the item's setup). */
  activeSetup?: ConversationSetup;
  handoffs?: HandoffRecord[];
  /** The agent the call was just handed from: not offered back until the caller has spoken again. */
  handedFromAgentId?: string;
}

export const emptyState = (greeting: string): ConversationState => ({
  generation: 0,
  history: greeting.trim() ? [{ role: 'assistant', content: greeting.trim() }] : [],
  transcript: greeting.trim() ? [{ role: 'agent', text: greeting.trim(), offsetSeconds: 0 }] : [],
  toolCalls: [],
  latencies: [],
  incidents: [],
  quotedListings: [],
});

/** p50 / p90 of a list of numbers (nearest rank). */
export function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return Math.round(sorted[rank - 1]);
}
