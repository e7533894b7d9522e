import {
  LanguageModelError,
  type LanguageModelPort,
  type LlmMessage,
  type LlmTool,
  type LlmToolCall,
} from '../../providers/llm/port.js';
import { ClauseChunker } from './clauses.js';
import {
  TOOL_NAMES,
  type ConversationEnd,
  type ConversationIncident,
  type ConversationSetup,
  type ConversationState,
  type QuotedListingRecord,
  type ToolCallRecord,
  type TranscriptEntry,
} from './model.js';
import type { ConversationStore, StoredConversation } from './store.js';
import { TurnGuard } from './turn-guard.js';
import { applyTurnStart, offset, turnStart, type TurnInput, type TurnStart } from './turn-start.js';
import { logger } from '../../platform/logger.js';
import { recordMetrics, type MetricChannel } from '../../platform/metrics.js';
import { errorName, surfaceProgrammingErrorInTests } from '../../platform/programming-errors.js';

/**
 * The conversation engine: one turn of the agent per caller prompt. No transport or AWS type here —
 * ConversationRelay (a phone call), the test chat and an evaluation's scripted caller
 * (../transports/) drive the same turns through `ConversationOutput`, on a `ConversationStore`
 * (store.ts; the table's in ../storage/).
 *
 * A turn: the prompt is recorded and the call's generation bumped, while the model is already asked;
 * the model streams the reply, which leaves in clause-sized pieces as each clause completes; tool calls
 * run between model rounds (at most MAX_TOOL_ROUNDS); the last piece carries `last`, after the turn
 * is kept. Whether the turn may still send or act is its `TurnGuard`'s answer (turn-guard.ts: the
 * generation, the version, the proof each piece needs). The model failing, a tool failing or the
 * turn's deadline passing: the caller hears a short apology, never silence. Interruptions and hang-ups
 * are interruption.ts.
 */

export interface ConversationOutput {
  /** A piece of the agent's words; `last` ends the reply. */
  text(token: string, last: boolean): Promise<void>;
  /** A tool the agent used (the test chat shows it inline; a phone call ignores it). */
  tool?(record: ToolCallRecord): Promise<void>;
  /** The agent ended the conversation (hung up, or handed the call to a person). */
  end(end: ConversationEnd): Promise<void>;
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
/** How often a turn reads its generation while a tool runs (an interruption aborts the tool). */
const TOOL_WATCH_INTERVAL_MS = 300;
export const DEFAULT_TURN_DEADLINE_MS = 24_000;

export const APOLOGY_MODEL = "I'm sorry, I'm having trouble answering right now. Could you say that again?";
export const APOLOGY_SILENT = "I'm sorry, I didn't catch that. Could you say it again?";
export const FILLER_LINE = 'One moment while I check that. ';

export interface TurnResult {
  /** What was sent, in order. */
  spoken: string;
  superseded: boolean;
  ended?: ConversationEnd;
}

/**
 * One turn: the caller said `input.text` (or pressed a key); the agent answers. `begun`: the turn's
 * start as the frame computed it, and, when it was already written (the store's `beginTurn`, one
 * write returning the item: the frame read nothing before it), what it stored.
 */
export async function runTurn(
  deps: EngineDeps,
  input: TurnInput,
  begun?: { start: TurnStart; stored?: StoredConversation },
): Promise<TurnResult> {
  const now = deps.now ?? Date.now;
  const start = begun?.start ?? turnStart(input, now());
  const { receivedAt } = start;
  const deadline = receivedAt + (deps.turnDeadlineMs ?? DEFAULT_TURN_DEADLINE_MS);
  const begin = (state: ConversationState, setup: ConversationSetup): ConversationState =>
    applyTurnStart(state, setup, start);

  if (begun?.stored) {
    // The start is stored, and the state it returned holds: the model is asked on it.
    const { stored } = begun;
    if (stored.state.ended) return { spoken: '', superseded: true };
    return closeTurn(deps, await runOnStored(deps, stored, receivedAt, deadline));
  }

  // The model is asked at once, on the state as this frame read it, while the turn's start is written:
  // the write is then off the caller's wait. Had another frame changed the state in between (the write
  // had to read again), that request is dropped unheard and the model asked again on what was stored.
  const loaded = await deps.store.load();
  if (!loaded) throw new Error('conversation not found');
  const starting = deps.store.beginTurn
    ? deps.store.beginTurn(start).then((stored) => {
        if (!stored) throw new Error('conversation not found');
        return stored;
      })
    : deps.store.update(begin);
  if (loaded.state.ended) {
    await starting;
    return { spoken: '', superseded: true };
  }
  const held = starting.then((stored) =>
    stored.version === loaded.version + 1 ? stored.state.generation : undefined,
  );
  const speculative = new TurnWork(
    deps,
    loaded.setup,
    held,
    receivedAt,
    deadline,
    loaded.state.toolCalls.length,
  );
  held.then(
    (generation) => generation === undefined && speculative.drop(),
    () => speculative.drop(),
  );
  const [stored] = await Promise.all([starting, speculative.run(begin(loaded.state, loaded.setup).history)]);
  if (stored.state.ended) return { spoken: '', superseded: true };
  const turn = speculative.dropped ? await runOnStored(deps, stored, receivedAt, deadline) : speculative;
  return closeTurn(deps, turn);
}

/** A turn asked on the state its stored start returned (that write is its generation's proof). */
async function runOnStored(
  deps: EngineDeps,
  stored: StoredConversation,
  receivedAt: number,
  deadline: number,
): Promise<TurnWork> {
  const turn = new TurnWork(
    deps,
    stored.setup,
    Promise.resolve(stored.state.generation),
    receivedAt,
    deadline,
    stored.state.toolCalls.length,
  );
  await turn.run(stored.state.history);
  return turn;
}

/** Keeps the turn, then ends its reply and, when the agent ended the call, says so. */
async function closeTurn(deps: EngineDeps, turn: TurnWork): Promise<TurnResult> {
  const result = await turn.finish();
  if (!result.superseded) await turn.sendLast();
  // Kept before it is said: the session's end (a socket closing at once) finds the conversation ended.
  if (result.ended) await deps.output.end(result.ended);
  return result;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The work of one turn: model rounds, tools, sending, and what is kept of it at the end. */
class TurnWork {
  private spoken = '';
  private firstSentAt: number | undefined;
  private modelMs = 0;
  private ended: ConversationEnd | undefined;
  private readonly added: LlmMessage[] = [];
  private readonly toolCalls: ToolCallRecord[] = [];
  private readonly incidents: ConversationIncident[] = [];
  private readonly quoted: QuotedListingRecord[] = [];
  /** Pieces waiting for the proof being read; one proof covers every piece that became ready meanwhile. */
  private queued: string[] = [];
  private flushing: Promise<boolean> | undefined;
  private sendFailure: { error: unknown } | undefined;
  /** A tool failed and said its own line: the model is not asked again this turn. */
  private failureSpoken = false;
  /** The model's first round ended before the turn's start write was answered (turn-guard.ts `readAhead`). */
  private modelOutpacedStart = false;
  private readonly guard: TurnGuard;

  constructor(
    private readonly deps: EngineDeps,
    private readonly setup: ConversationSetup,
    /** The turn's generation once its start is stored; undefined when the state it was asked on did not hold. */
    startGeneration: Promise<number | undefined>,
    private readonly receivedAt: number,
    private readonly deadline: number,
    /** Tool calls the call made before this turn (at most MAX_TOOL_CALLS_A_CALL in all). */
    private readonly earlierToolCalls: number,
  ) {
    this.guard = new TurnGuard(startGeneration, () => deps.store.generation());
  }

  /** Asked on a state that did not hold: nothing of it is sent, run or kept. */
  get dropped(): boolean {
    return this.guard.dropped;
  }

  private get superseded(): boolean {
    return this.guard.stopped;
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  drop(): void {
    this.guard.drop();
  }

  /**
   * Queues a piece of the reply without waiting: it is sent once a proof read after it was ready
   * finds the turn current (turn-guard.ts). Pieces that become ready while a proof is being read wait
   * for it and go together — a model streaming faster than a read costs one read, not one a piece.
   */
  private say(piece: string): void {
    this.queued.push(piece);
    this.flushing ??= this.flush();
  }

  private async flush(): Promise<boolean> {
    try {
      while (this.queued.length > 0) {
        if (!(await this.guard.mayAct())) {
          this.queued = [];
          return false;
        }
        for (const piece of this.queued.splice(0)) await this.emit(piece, false);
      }
      return true;
    } catch (error) {
      this.queued = [];
      this.sendFailure ??= { error };
      return false;
    } finally {
      this.flushing = undefined;
    }
  }

  /** Every queued piece sent (or dropped, the turn stopped); a failure to send surfaces here. */
  private async drained(): Promise<boolean> {
    const sent = await (this.flushing ?? true);
    if (this.sendFailure) throw this.sendFailure.error;
    return sent && !this.superseded;
  }

  private async emit(token: string, last: boolean): Promise<void> {
    await this.deps.output.text(token, last);
    this.firstSentAt ??= this.now();
    this.spoken += token;
  }

  /** Sends a piece if the turn is still current, after those queued; false (the turn stopped) when it is not. */
  private async send(token: string, last: boolean): Promise<boolean> {
    if (!last) {
      this.say(token);
      return this.drained();
    }
    if (!(await this.drained())) return false;
    if (!(await this.guard.mayEnd())) return false;
    await this.emit(token, true);
    return true;
  }

  async run(history: LlmMessage[]): Promise<void> {
    const timer = setTimeout(() => this.guard.abort.abort(), Math.max(0, this.deadline - this.now()));
    try {
      for (
        let round = 0;
        round < MAX_TOOL_ROUNDS + 1 && !this.superseded && !this.ended && !this.failureSpoken;
        round += 1
      ) {
        if (round > 0 && this.modelOutpacedStart) this.guard.readAhead();
        const toolCalls = await this.modelRound([...history, ...this.added], round < MAX_TOOL_ROUNDS);
        if (round === 0) this.modelOutpacedStart = this.guard.startStillOut;
        if (toolCalls === undefined || toolCalls.length === 0) break;
        await this.runTools(toolCalls);
      }
    } catch (error) {
      if (this.superseded) return;
      const timedOut = this.now() >= this.deadline;
      if (error instanceof LanguageModelError) recordMetrics({ ModelErrors: 1 }, this.deps.channel);
      this.incidents.push({
        at: iso(this.now()),
        kind: timedOut ? 'turn_deadline' : 'model_error',
        detail: error instanceof LanguageModelError ? `${error.kind}: ${error.message}` : 'unexpected error',
      });
      if (!(error instanceof LanguageModelError) && !timedOut) throw error;
      await this.send(spaced(this.spoken + this.queued.join(''), APOLOGY_MODEL).trimEnd(), false);
    } finally {
      clearTimeout(timer);
    }
    if (this.superseded || !(await this.drained())) return;
    if (this.spoken.trim() === '') await this.send(APOLOGY_SILENT, false);
  }

  /**
   * Ends the reply (`last`): after the turn was kept, so the caller's next line never races its write
   * (that write's own check stands in for a read: turn-guard.ts).
   */
  async sendLast(): Promise<void> {
    await this.send('', true);
  }

  /** One model request, streamed; returns the tool calls it asked for (undefined: superseded). */
  private async modelRound(
    messages: LlmMessage[],
    toolsAllowed: boolean,
  ): Promise<LlmToolCall[] | undefined> {
    const requestedAt = this.now();
    let firstTokenAt: number | undefined;
    const chunker = new ClauseChunker();
    const calls: LlmToolCall[] = [];
    let text = '';
    const agentTools: LlmTool[] = [];
    if (toolsAllowed && this.deps.agentTools) {
      const offer = await this.deps.agentTools.offered();
      agentTools.push(...offer.tools);
      for (const incident of offer.incidents) this.incidents.push({ at: iso(this.now()), ...incident });
    }
    recordMetrics({ ModelRequests: 1 }, this.deps.channel);
    const stream = this.deps.model.stream({
      system: this.setup.system,
      messages,
      tools: toolsAllowed
        ? [...this.setup.tools, ...agentTools]
        : this.setup.tools.filter((t) => t.name === TOOL_NAMES.endCall),
      maxTokens: 400,
      signal: this.guard.abort.signal,
    });
    for await (const event of stream) {
      if (this.superseded) return undefined;
      if (event.type === 'text') {
        if (firstTokenAt === undefined) {
          firstTokenAt = this.now();
          if (this.firstSentAt === undefined) this.modelMs += firstTokenAt - requestedAt;
        }
        text += event.text;
        for (const piece of chunker.push(event.text)) this.say(piece);
      } else if (event.type === 'tool_call') {
        calls.push(event.call);
      }
    }
    if (firstTokenAt === undefined && this.firstSentAt === undefined)
      this.modelMs += this.now() - requestedAt;
    const rest = chunker.flush();
    if (rest.trim() !== '') this.say(rest);
    if (!(await this.drained())) return undefined;
    this.added.push({ role: 'assistant', content: text, ...(calls.length > 0 ? { toolCalls: calls } : {}) });
    return calls;
  }

  private async runTools(calls: LlmToolCall[]): Promise<void> {
    this.deps.agentTools?.prepare?.(calls);
    for (const [index, call] of calls.entries()) {
      const builtIn = BUILT_IN_TOOLS.has(call.name);
      const limit =
        index >= MAX_TOOL_CALLS_A_ROUND
          ? `at most ${MAX_TOOL_CALLS_A_ROUND} tool calls a round`
          : this.earlierToolCalls + this.toolCalls.length >= MAX_TOOL_CALLS_A_CALL
            ? `at most ${MAX_TOOL_CALLS_A_CALL} tool calls a call`
            : undefined;
      // A built-in tool acts on nothing outside the turn, whose closing write is its own check.
      if (builtIn && this.superseded) return;
      if (builtIn && call.name === TOOL_NAMES.searchKnowledge && this.spoken.trim() === '')
        if (!(await this.send(FILLER_LINE, false))) return;
      const lines = this.deps.agentTools?.lines(call.name);
      // A request to the business's system goes only for a turn still current: it is made ready while
      // its proof is read (the `speak_during` line's, said first, when it has one) and waits for it.
      const current =
        builtIn || limit
          ? undefined
          : lines?.during
            ? this.send(spaced(this.spoken, lines.during), false)
            : this.guard.mayAct();
      const at = iso(this.now());
      const ran = limit ? refusedOutcome(limit) : await this.runOne(call, current);
      if (limit ? !(await this.guard.mayAct()) : current && !(await current)) return;
      // An interruption or a newer prompt while the tool ran: nothing of its result is used, but the
      // record keeps that a request went out (the business's system may have acted on it).
      const cancelled = this.superseded;
      const outcome: ToolOutcome = cancelled ? cancelledOutcome(ran) : ran;
      const record: ToolCallRecord = {
        name: call.name,
        arguments: call.arguments,
        ok: outcome.ok,
        at,
        ...(outcome.error ? { error: outcome.error } : {}),
        type: outcome.type ?? 'builtin',
        status: outcome.status ?? (outcome.ok ? 'ok' : 'error'),
        ...(outcome.httpStatus !== undefined ? { httpStatus: outcome.httpStatus } : {}),
        ...(outcome.durationMs !== undefined ? { durationMs: outcome.durationMs } : {}),
      };
      this.toolCalls.push(record);
      if (cancelled) {
        await this.deps.output.tool?.(record);
        return;
      }
      if (outcome.durationMs !== undefined)
        recordMetrics({ ToolDuration: outcome.durationMs }, this.deps.channel);
      if (!outcome.ok)
        this.incidents.push({ at, kind: 'tool_error', detail: `${call.name}: ${outcome.error ?? 'failed'}` });
      if (outcome.quoted) this.quoted.push(...outcome.quoted);
      if (outcome.end) this.ended = outcome.end;
      this.added.push({
        role: 'tool',
        toolCallId: call.id,
        name: call.name,
        content: outcome.content.slice(0, MAX_KEPT_TOOL_RESULT_CHARS),
      });
      await this.deps.output.tool?.(record);
      if (!outcome.ok && !limit && lines?.onFailure) {
        if (!(await this.send(spaced(this.spoken, lines.onFailure), false))) return;
        this.failureSpoken = true;
      }
    }
  }

  /** Runs a tool; with `current`, its request goes only once that proof finds the turn current. */
  private async runOne(call: LlmToolCall, current?: Promise<boolean>): Promise<ToolOutcome> {
    // While the request is out, the turn watches for a newer frame (which aborts it).
    const watching = (current ?? Promise.resolve(true)).then(
      (ok) => (ok ? this.guard.watch(TOOL_WATCH_INTERVAL_MS) : () => undefined),
      () => () => undefined,
    );
    try {
      return await this.deps.runTool(call, this.setup, this.guard.abort.signal, current);
    } catch (error) {
      surfaceProgrammingErrorInTests(error);
      const failure = errorName(error);
      logger.error('a tool threw; the model is told it failed', { tool: call.name, error: failure });
      return {
        ok: false,
        content: JSON.stringify({ error: 'the tool failed' }),
        error: `the tool failed (${failure})`,
      };
    } finally {
      (await watching)();
    }
  }

  /** Keeps the turn: its messages and words when it was not superseded; its tool calls always. */
  async finish(): Promise<TurnResult> {
    const latency =
      this.firstSentAt !== undefined
        ? {
            totalMs: this.firstSentAt - this.receivedAt,
            modelMs: Math.min(this.modelMs, this.firstSentAt - this.receivedAt),
          }
        : undefined;
    if (latency)
      recordMetrics(
        {
          TurnLatency: latency.totalMs,
          ModelFirstToken: latency.modelMs,
          ServicePart: latency.totalMs - latency.modelMs,
        },
        this.deps.channel,
      );
    const agentLine = this.spoken.trim();
    const entry: TranscriptEntry | undefined =
      agentLine !== ''
        ? {
            role: 'agent',
            text: agentLine,
            offsetSeconds: offset(this.setup, this.firstSentAt ?? this.now()),
            ...(this.superseded ? { interrupted: true } : {}),
          }
        : undefined;
    const generation = await this.guard.startGeneration;
    const kept = await this.deps.store.update((state) => {
      const current = state.generation === generation && !this.superseded;
      return {
        ...state,
        history: current ? [...state.history, ...this.added.filter(keepMessage)] : state.history,
        // An interruption already recorded what was heard of a superseded turn.
        transcript: current && entry ? [...state.transcript, entry] : state.transcript,
        toolCalls: [...state.toolCalls, ...this.toolCalls],
        latencies: latency ? [...state.latencies, latency] : state.latencies,
        incidents: [...state.incidents, ...this.incidents],
        quotedListings: [...state.quotedListings, ...this.quoted],
        ...(current && this.ended ? { ended: this.ended } : {}),
      };
    });
    this.guard.closingWriteFound(kept.state.generation, generation);
    return {
      spoken: this.spoken,
      superseded: this.superseded,
      ...(this.ended && !this.superseded ? { ended: this.ended } : {}),
    };
  }
}

const BUILT_IN_TOOLS: ReadonlySet<string> = new Set(Object.values(TOOL_NAMES));

const refusedOutcome = (error: string): ToolOutcome => ({
  ok: false,
  content: JSON.stringify({ error }),
  error,
  status: 'error',
});

const cancelledOutcome = (ran: ToolOutcome): ToolOutcome => ({
  ...ran,
  ok: false,
  content: JSON.stringify({ error: 'cancelled' }),
  error: 'cancelled: the caller spoke before it answered',
  status: 'cancelled',
  httpStatus: undefined,
});

/** `line` after what was said, with a space between. */
const spaced = (said: string, line: string) => `${said && !said.endsWith(' ') ? ' ' : ''}${line} `;

/** An assistant message with neither words nor tool calls says nothing to the model. */
const keepMessage = (message: LlmMessage) =>
  message.role !== 'assistant' || message.content.trim() !== '' || (message.toolCalls?.length ?? 0) > 0;
