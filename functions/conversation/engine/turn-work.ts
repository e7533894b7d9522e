import {
  LanguageModelError,
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
  type HandoffSwitch,
  type QuotedListingRecord,
  type ToolCallRecord,
  type TranscriptEntry,
} from './model.js';
import type { StoredConversation } from './store.js';
import { TurnGuard } from './turn-guard.js';
import {
  MAX_KEPT_TOOL_RESULT_CHARS,
  MAX_TOOL_CALLS_A_CALL,
  MAX_TOOL_CALLS_A_ROUND,
  MAX_TOOL_ROUNDS,
  type EngineDeps,
  type ToolOutcome,
  type TurnResult,
} from './ports.js';
import { applyHandoff, handoffTool } from './handoff.js';
import { serviceLines, type ServiceLines } from './lines.js';
import { offset } from './turn-start.js';
import { logger } from '../../platform/logger.js';
import { recordMetrics } from '../../platform/metrics.js';
import { errorName, surfaceProgrammingErrorInTests } from '../../platform/programming-errors.js';

/** How often a turn reads its generation while a tool runs (an interruption aborts the tool). */
const TOOL_WATCH_INTERVAL_MS = 300;

const iso = (ms: number) => new Date(ms).toISOString();

/** A switch the closing write stored: its generation, and the conversation as that write left it. */
export interface HandedOver {
  handoff: HandoffSwitch;
  generation: number;
  stored: StoredConversation;
}

/**
 * The work of one turn (turn.ts runs it): model rounds, tools, sending, and what is kept of it at the
 * end. Whether it may still send or act is its `TurnGuard`'s answer (turn-guard.ts).
 */
export class TurnWork {
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
  /** A handoff's target made ready while the words before the call were proven and sent. */
  private readonly earlyHandoffs = new Map<string, Promise<ToolOutcome>>();
  /** The model called `handoff_to_agent` and the target is ready: nothing more of this reply is said. */
  private handoff: HandoffSwitch | undefined;
  /** The switch was written (by the closing write, which found the turn current), with its generation. */
  private switched: HandedOver | undefined;
  /** The history the model was first asked on (the state's, with the turn's start). */
  private askedHistory: LlmMessage[] = [];
  private readonly guard: TurnGuard;
  private readonly offeredHandoff: LlmTool | undefined;
  /** Tool calls the call made before this turn (at most MAX_TOOL_CALLS_A_CALL in all). */
  private readonly earlierToolCalls: number;

  constructor(
    private readonly deps: EngineDeps,
    private readonly setup: ConversationSetup,
    /** The turn's generation once its start is stored; undefined when the state it was asked on did not hold. */
    startGeneration: Promise<number | undefined>,
    private readonly receivedAt: number,
    private readonly deadline: number,
    /** The state the turn is asked on (its tool calls so far, its handoffs). */
    private readonly askedOn: ConversationState,
    /** Nothing is sent before it resolves (a handoff's target: after the handing agent's `last`). */
    private readonly sendingOpens: Promise<void> = Promise.resolve(),
  ) {
    this.guard = new TurnGuard(startGeneration, () => deps.store.generation());
    this.earlierToolCalls = askedOn.toolCalls.length;
    this.offeredHandoff = handoffTool(setup, askedOn);
  }

  get handedOver(): HandedOver | undefined {
    return this.switched;
  }

  /**
   * The switch this turn's closing write will store if it finds the turn current, worked out now: the
   * target's setup and the state it starts on. While the turn is current no other frame changes the
   * history, so the stored switch is this one (turn.ts checks it against what the write returned).
   */
  get switchAhead():
    { handoff: HandoffSwitch; setup: ConversationSetup; state: ConversationState } | undefined {
    if (!this.handoff || this.ended || this.superseded) return undefined;
    const state = applyHandoff(
      {
        ...this.askedOn,
        history: [...this.askedHistory, ...this.added.filter(keepMessage)],
        toolCalls: [...this.askedOn.toolCalls, ...this.toolCalls],
      },
      this.handoff,
    );
    return { handoff: this.handoff, setup: state.activeSetup ?? this.handoff.setup, state };
  }

  get agentLanguage(): string | undefined {
    return this.setup.language;
  }

  get turnDeadline(): number {
    return this.deadline;
  }

  /** Asked on a state that did not hold: nothing of it is sent, run or kept. */
  get dropped(): boolean {
    return this.guard.dropped;
  }

  private get superseded(): boolean {
    return this.guard.stopped;
  }

  /** The service's own lines, in the agent's language. */
  private get lines(): ServiceLines {
    return serviceLines(this.setup.language);
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
    await this.sendingOpens;
    if (this.guard.dropped) return;
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
    if (!this.guard.mayClose) return false;
    await this.emit(token, true);
    return true;
  }

  async run(history: LlmMessage[]): Promise<void> {
    this.askedHistory = history;
    const timer = setTimeout(() => this.guard.abort.abort(), Math.max(0, this.deadline - this.now()));
    try {
      for (
        let round = 0;
        round < MAX_TOOL_ROUNDS + 1 &&
        !this.superseded &&
        !this.ended &&
        !this.handoff &&
        !this.failureSpoken;
        round += 1
      ) {
        const toolCalls = await this.modelRound([...history, ...this.added], round < MAX_TOOL_ROUNDS);
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
      await this.send(spaced(this.spoken + this.queued.join(''), this.lines.modelTrouble).trimEnd(), false);
    } finally {
      clearTimeout(timer);
    }
    if (this.superseded || !(await this.drained())) return;
    // Handing over without a word is not silence: the target speaks next.
    if (this.spoken.trim() === '' && !this.handoff) await this.send(this.lines.notCaught, false);
  }

  /**
   * Ends the reply (`last`): after the turn was kept, so the caller's next line never races its write,
   * and only when that write found the turn current (its check stands in for a read: turn-guard.ts).
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
        ? [...this.setup.tools, ...(this.offeredHandoff ? [this.offeredHandoff] : []), ...agentTools]
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
    // Reading a handoff's target acts on nothing outside the turn: it need not wait for the words' proof.
    for (const call of calls)
      if (call.name === TOOL_NAMES.handoffToAgent && !this.handoffRefused(call))
        this.earlyHandoffs.set(call.id, this.runOne(call));
    if (!(await this.drained())) return undefined;
    this.added.push({ role: 'assistant', content: text, ...(calls.length > 0 ? { toolCalls: calls } : {}) });
    return calls;
  }

  private async runTools(calls: LlmToolCall[]): Promise<void> {
    this.deps.agentTools?.prepare?.(calls);
    for (const [index, call] of calls.entries()) if (!(await this.runToolCall(call, index))) return;
  }

  /** One tool call the model asked for: refused over a limit, or run; false once the turn stopped. */
  private async runToolCall(call: LlmToolCall, index: number): Promise<boolean> {
    const at = iso(this.now());
    const limit = this.toolLimitReached(index);
    if (limit) {
      if (!(await this.guard.mayAct())) return false;
      return this.useOutcome(call, at, refusedOutcome(limit));
    }
    if (BUILT_IN_TOOLS.has(call.name)) {
      // A built-in tool acts on nothing outside the turn, whose closing write is its own check.
      if (this.superseded) return false;
      const searching = call.name === TOOL_NAMES.searchKnowledge && this.spoken.trim() === '';
      if (searching && !(await this.send(this.lines.oneMoment, false))) return false;
      const refused = this.handoffRefused(call);
      const outcome = refused
        ? refusedOutcome(refused)
        : await (this.earlyHandoffs.get(call.id) ?? this.runOne(call));
      // Handing over ends the reply at once: nothing more of it, nor of this round's other tools.
      return (await this.useOutcome(call, at, outcome)) && !this.handoff;
    }
    // A request to the business's system goes only for a turn still current: it is made ready while
    // its proof is read (the `speak_during` line's, said first, when it has one) and waits for it.
    const lines = this.deps.agentTools?.lines(call.name);
    const proof = lines?.during ? this.send(spaced(this.spoken, lines.during), false) : this.guard.mayAct();
    const outcome = await this.runOne(call, proof);
    if (!(await proof) || !(await this.useOutcome(call, at, outcome))) return false;
    if (outcome.ok || !lines?.onFailure) return true;
    if (!(await this.send(spaced(this.spoken, lines.onFailure), false))) return false;
    this.failureSpoken = true;
    return true;
  }

  /** A handoff to an agent not offered now (not a target, the one just handed from, over the limit). */
  private handoffRefused(call: LlmToolCall): string | undefined {
    if (call.name !== TOOL_NAMES.handoffToAgent) return undefined;
    const offered = this.offeredHandoff?.parameters as
      { properties?: { agent_id?: { enum?: string[] } } } | undefined;
    const target = call.arguments.agent_id;
    return typeof target === 'string' && offered?.properties?.agent_id?.enum?.includes(target)
      ? undefined
      : 'that agent cannot take the call now';
  }

  private toolLimitReached(index: number): string | undefined {
    if (index >= MAX_TOOL_CALLS_A_ROUND) return `at most ${MAX_TOOL_CALLS_A_ROUND} tool calls a round`;
    if (this.earlierToolCalls + this.toolCalls.length >= MAX_TOOL_CALLS_A_CALL)
      return `at most ${MAX_TOOL_CALLS_A_CALL} tool calls a call`;
    return undefined;
  }

  /**
   * Records the tool call and gives its result to the model. A newer frame while it ran (an
   * interruption, a newer prompt): nothing of its result is used, but the record keeps that a request
   * went out (the business's system may have acted on it); false then.
   */
  private async useOutcome(call: LlmToolCall, at: string, ran: ToolOutcome): Promise<boolean> {
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
      agentId: this.setup.agentId,
    };
    this.toolCalls.push(record);
    if (!cancelled) {
      if (outcome.durationMs !== undefined)
        recordMetrics({ ToolDuration: outcome.durationMs }, this.deps.channel);
      if (!outcome.ok)
        this.incidents.push({ at, kind: 'tool_error', detail: `${call.name}: ${outcome.error ?? 'failed'}` });
      if (outcome.quoted) this.quoted.push(...outcome.quoted);
      if (outcome.end) this.ended = outcome.end;
      if (outcome.handoff) this.handoff = outcome.handoff;
      this.added.push({
        role: 'tool',
        toolCallId: call.id,
        name: call.name,
        content: outcome.content.slice(0, MAX_KEPT_TOOL_RESULT_CHARS),
      });
    }
    await this.deps.output.tool?.(record);
    return !cancelled;
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
            agentId: this.setup.agentId,
          }
        : undefined;
    const generation = await this.guard.startGeneration;
    let foundCurrent = false;
    let foundEnded = false;
    const closed = await this.deps.store.update((state) => {
      const current = state.generation === generation && !this.superseded;
      foundCurrent = current;
      foundEnded = state.ended !== undefined;
      const kept: ConversationState = {
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
      // The switch, with the turn's words kept first: the target's context includes them.
      return current && this.handoff && !this.ended ? applyHandoff(kept, this.handoff) : kept;
    });
    this.guard.closed(foundCurrent);
    if (foundCurrent && this.handoff && !this.ended)
      this.switched = { handoff: this.handoff, generation: closed.state.generation, stored: closed };
    return {
      spoken: this.spoken,
      superseded: this.superseded,
      ...(this.ended && !this.superseded ? { ended: this.ended } : {}),
      ...(this.switched ? { handedTo: this.switched.handoff.record.toAgentId } : {}),
      ...(foundEnded && !foundCurrent ? { keptAfterEnd: true } : {}),
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
