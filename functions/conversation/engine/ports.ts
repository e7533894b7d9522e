import type { LanguageModelPort, LlmTool, LlmToolCall } from '../../providers/llm/port.js';
import type { MetricChannel } from '../../platform/metrics.js';
import type {
  ConversationEnd,
  ConversationIncident,
  ConversationSetup,
  HandoffSwitch,
  QuotedListingRecord,
  ToolCallRecord,
} from './model.js';
import type { ConversationStore } from './store.js';
import { ENGLISH_LINES } from './lines.js';

/**
 * The engine's ports and bounds (turn.ts runs the turns): where its words go, the tools it runs, what
 * it runs on, how much a turn may do, and what a turn returns.
 */

export interface ConversationOutput {
  /** A piece of the agent's words; `last` ends the reply. */
  text(token: string, last: boolean): Promise<void>;
  /** A tool the agent used (the test chat shows it inline; a phone call ignores it). */
  tool?(record: ToolCallRecord): Promise<void>;
  /** The agent ended the conversation (hung up, or handed the call to a person). */
  end(end: ConversationEnd): Promise<void>;
  /** Speech recognition and synthesis switch language (a handoff's target speaks another). */
  language?(language: string): Promise<void>;
}

export interface ToolOutcome {
  ok: boolean;
  type?: 'builtin' | 'function' | 'mcp';
  status?: 'ok' | 'error' | 'timeout' | 'cancelled';
  httpStatus?: number;
  durationMs?: number;
  /** What goes back to the model (JSON text). */
  content: string;
  error?: string;
  /** Listings the result quoted (the post-call webhook's quoted properties). */
  quoted?: QuotedListingRecord[];
  /** The tool ends the conversation once the reply is spoken. */
  end?: ConversationEnd;
  /** The tool hands the caller to another agent once the reply is kept (engine/handoff.ts). */
  handoff?: HandoffSwitch;
}

export type ToolRunner = (
  call: LlmToolCall,
  setup: ConversationSetup,
  signal?: AbortSignal,
  /** The turn's proof: a request to the business's system waits for it and goes only when it is true. */
  current?: Promise<boolean>,
) => Promise<ToolOutcome>;

/**
 * The agent's own tools (function tools, MCP servers' tools) beside the built-in ones: what the
 * model is offered, and the lines said around a tool's request. Running them is `runTool`'s.
 */
export interface AgentToolBox {
  /** The tools offered now; the first call may list MCP servers, whose trouble comes back as incidents. */
  offered(): Promise<{ tools: LlmTool[]; incidents: Omit<ConversationIncident, 'at'>[] }>;
  /** `speak_during` (said before the request) and `speak_on_failure` (said instead of asking again). */
  lines(name: string): { during?: string; onFailure?: string } | undefined;
  /** The model asked for these: start reading what running them needs while the turn checks it may. */
  prepare?(calls: readonly LlmToolCall[]): void;
}

export interface EngineDeps {
  store: ConversationStore;
  model: LanguageModelPort;
  output: ConversationOutput;
  runTool: ToolRunner;
  agentTools?: AgentToolBox;
  /**
   * The ports of a handed-to agent's turns in this frame (its own tools and their runner); without it
   * the target's first reply runs on these.
   */
  forAgent?: (setup: ConversationSetup) => Promise<Pick<EngineDeps, 'runTool' | 'agentTools'>>;
  /** The channel the turn's metrics are recorded under (phone, web, evaluation). */
  channel?: MetricChannel;
  now?: () => number;
  /** How long a whole turn may take (API Gateway cuts an integration at 29 s). */
  turnDeadlineMs?: number;
}

export const MAX_TOOL_ROUNDS = 3;
export const MAX_TOOL_CALLS_A_ROUND = 5;
export const MAX_TOOL_CALLS_A_CALL = 30;
/** A tool's result as kept in the history (the item is rewritten, and billed per KB, on every turn). */
export const MAX_KEPT_TOOL_RESULT_CHARS = 4_096;
export const DEFAULT_TURN_DEADLINE_MS = 24_000;

/** The service's own lines in English (engine/lines.ts has them in the agent's language). */
export const APOLOGY_MODEL = ENGLISH_LINES.modelTrouble;
export const APOLOGY_SILENT = ENGLISH_LINES.notCaught;
export const FILLER_LINE = ENGLISH_LINES.oneMoment;

export interface TurnResult {
  /** What was sent, in order. */
  spoken: string;
  superseded: boolean;
  ended?: ConversationEnd;
  /** The agent the caller was handed to (its first reply followed). */
  handedTo?: string;
  /**
   * The turn was kept after the conversation had ended (the socket closed while it ran): what it kept
   * (its tool calls, incidents) came after the session's end wrote the call, which must be written again.
   */
  keptAfterEnd?: boolean;
}
