import fc from 'fast-check';
import { endByCaller, interrupt } from '../../functions/conversation/engine/interruption.js';
import {
  emptyState,
  TOOL_NAMES,
  type ConversationEnd,
  type ConversationSetup,
  type ConversationState,
} from '../../functions/conversation/engine/model.js';
import { runTurn } from '../../functions/conversation/engine/turn.js';
import { type ToolOutcome } from '../../functions/conversation/engine/ports.js';
import { turnStart, type TurnStart } from '../../functions/conversation/engine/turn-start.js';
import type { ConversationItem } from '../../functions/conversation/storage/entities.js';
import {
  TableConversationStore,
  toStored,
  type ConversationItems,
  type StartWritten,
} from '../../functions/conversation/storage/table-store.js';
import { LanguageModelError, type LanguageModelPort } from '../../functions/providers/llm/port.js';

/**
 * The turn protocol under every interleaving (turn-guard.ts's header). Two or three frames of one call
 * — prompts (with the conversation in hand, stale, or not at all, as a fresh container), an
 * interruption, the caller hanging up — run at once on the table's own store (TableConversationStore)
 * over a memory table with DynamoDB's semantics, and fast-check's scheduler picks the order of every
 * request's arrival and answer, every model piece, every tool answer and every frame sent. Whatever the
 * order:
 *  - a turn sends a piece, or a request to a business's tool, only if its own generation was still the
 *    stored one when it last acted (its proof was read after that): a superseded turn sends nothing;
 *  - `end` reaches the transport only when the turn's closing write stored that end (bug: an overtaken
 *    turn's `end` went out while `ended` stayed unstored — the call transferred and hung up at once);
 *  - a turn's generation is the one its own start write stored (bug: a start that had to read again
 *    adopted a later frame's generation, so an interruption in between no longer stopped it);
 *  - the history and the transcript keep only what was sent.
 */

const setup: ConversationSetup = {
  workspaceId: 'ws_1',
  agentId: 'ag_1',
  callId: 'call_1',
  system: 'You are Ava.',
  greeting: 'Hi, this is Ava.',
  tools: [
    { name: TOOL_NAMES.endCall, description: 'end', parameters: { type: 'object' } },
    { name: TOOL_NAMES.transferCall, description: 'transfer', parameters: { type: 'object' } },
    { name: 'book_inspection', description: 'book', parameters: { type: 'object' } },
  ],
  knowledgeBaseIds: [],
  agentName: 'Ava',
  handoffs: [{ agentId: 'ag_2', name: 'Sales', description: 'the caller asks for sales', context: 'full' }],
  callContext: {
    parameters: {},
    memories: [],
    channel: 'phone',
    agentVersion: 1,
    direction: 'inbound',
    fromPhone: null,
    toPhone: null,
  },
  startedAt: new Date().toISOString(),
  timeScale: 1,
};

/** The handoff's target: another agent, which speaks first on the switch's generation. */
const salesSetup: ConversationSetup = {
  ...setup,
  agentId: 'ag_2',
  agentName: 'Sales',
  system: 'You are Sales.',
  handoffs: undefined,
};

type Reply = 'words' | 'end_call' | 'transfer' | 'tool' | 'handoff' | 'model_error';
type Frame =
  | { kind: 'prompt'; reply: Reply; inHand: 'none' | 'now' | 'initial' }
  | { kind: 'interrupt'; inHand: 'now' | 'initial' }
  | { kind: 'hangup' };

type Event =
  | { kind: 'generation'; value: number }
  | { kind: 'send'; turn: number; token: string; last: boolean }
  | { kind: 'end'; turn: number; end: ConversationEnd }
  | { kind: 'tool_request'; turn: number }
  | { kind: 'switch'; generation: number };

/** One call's conversation item in memory; every request arrives and is answered at the scheduler's pick. */
class World implements ConversationItems {
  readonly events: Event[] = [];
  /** Each turn's own generation, as its start write stored it. */
  readonly generationOf = new Map<number, number>();
  /** What each prompt's model replies. */
  readonly replies = new Map<number, Reply>();
  readonly initial: ConversationItem;
  private item: ConversationItem;

  constructor(private readonly s: fc.Scheduler) {
    this.item = {
      connectionId: 'conn_1',
      workspaceId: 'ws_1',
      callId: 'call_1',
      channel: 'phone',
      setup: JSON.stringify(setup),
      state: JSON.stringify(emptyState(setup.greeting)),
      generation: 0,
      version: 0,
      createdAt: setup.startedAt,
      expiresAt: 0,
    };
    this.initial = structuredClone(this.item);
    this.events.push({ kind: 'generation', value: 0 });
  }

  private async request<T>(label: string, execute: () => T): Promise<T> {
    await this.s.schedule(Promise.resolve(), `${label} arrives`);
    const result = execute();
    return this.s.schedule(Promise.resolve(result), `${label} answered`);
  }

  private moved(generation: number): void {
    if (generation !== this.currentGeneration) this.events.push({ kind: 'generation', value: generation });
  }

  get currentGeneration(): number {
    return this.item.generation;
  }

  get snapshot(): ConversationItem {
    return structuredClone(this.item);
  }

  get(): Promise<ConversationItem | undefined> {
    return this.request('get', () => structuredClone(this.item));
  }

  replaceIfVersion(
    _connectionId: string,
    next: Pick<ConversationItem, 'state' | 'generation' | 'version' | 'pending'>,
    expectedVersion: number,
  ): Promise<boolean> {
    return this.request('replace', () => {
      if (this.item.version !== expectedVersion) return false;
      const handoffs = (s: string) => (JSON.parse(s) as ConversationState).handoffs?.length ?? 0;
      const switches = handoffs(next.state) > handoffs(this.item.state);
      this.moved(next.generation);
      if (switches) this.events.push({ kind: 'switch', generation: next.generation });
      this.item = { ...this.item, ...structuredClone(next) };
      return true;
    });
  }

  appendStart(connectionId: string, start: string, all: true): Promise<ConversationItem | undefined>;
  appendStart(connectionId: string, start: string, all: false): Promise<StartWritten | undefined>;
  appendStart(
    _connectionId: string,
    start: string,
    all: boolean,
  ): Promise<ConversationItem | StartWritten | undefined> {
    return this.request('append', () => {
      this.moved(this.item.generation + 1);
      this.item = {
        ...this.item,
        pending: [...(this.item.pending ?? []), start],
        generation: this.item.generation + 1,
        version: this.item.version + 1,
      };
      const turn = Number(/line (\d+)/.exec((JSON.parse(start) as TurnStart).userText)![1]);
      this.generationOf.set(turn, this.item.generation);
      const { pending, generation, version } = this.item;
      return all ? structuredClone(this.item) : structuredClone({ pending, generation, version });
    });
  }

  generation(): Promise<number | undefined> {
    return this.request('generation', () => this.item.generation);
  }

  /** The generation stored just after event `index` (the latest generation event at or before it). */
  generationAt(index: number): number {
    for (let i = index; i >= 0; i -= 1) {
      const event = this.events[i];
      if (event.kind === 'generation') return event.value;
    }
    return 0;
  }

  get state(): ConversationState {
    return toStored(this.item).state;
  }
}

/** The model: each frame's reply, piece by piece at the scheduler's pick; after a tool, a short line. */
function model(s: fc.Scheduler, replies: Map<number, Reply>): LanguageModelPort {
  return {
    provider: 'openai',
    model: 'scheduled',
    async *stream(request) {
      const lastUser = request.messages.findLast((m) => m.role === 'user')?.content ?? '';
      const turn = Number(/line (\d+)/.exec(lastUser)?.[1] ?? -1);
      const afterTool = request.messages.at(-1)?.role === 'tool';
      const target = request.system === salesSetup.system;
      const reply = afterTool || target ? 'words' : (replies.get(turn) ?? 'words');
      const piece = async () => {
        await s.schedule(Promise.resolve(), `model piece of ${turn}`);
        if (request.signal?.aborted) throw new LanguageModelError('aborted', 'aborted');
      };
      await piece();
      if (reply === 'model_error') throw new LanguageModelError('the model failed', 'unavailable');
      if (reply === 'words' || reply === 'tool') {
        yield { type: 'text', text: `Reply ${turn}, ` };
        await piece();
        yield { type: 'text', text: afterTool ? 'booked. ' : 'one moment. ' };
      }
      if (!afterTool && reply !== 'words') {
        const name =
          reply === 'end_call'
            ? TOOL_NAMES.endCall
            : reply === 'transfer'
              ? TOOL_NAMES.transferCall
              : reply === 'handoff'
                ? TOOL_NAMES.handoffToAgent
                : 'book_inspection';
        await piece();
        const args =
          reply === 'handoff' ? { agent_id: 'ag_2', reason: 'sales', summary: 'wants to buy' } : {};
        yield { type: 'tool_call', call: { id: `tc_${turn}`, name, arguments: args } };
      }
      yield { type: 'end', stopReason: 'end_turn' };
    },
    complete: () => Promise.reject(new Error('not used')),
  };
}

async function runFrame(world: World, s: fc.Scheduler, frame: Frame, index: number): Promise<void> {
  await s.schedule(Promise.resolve(), `frame ${index} reaches its handler`);
  const at = Date.now() - 1_000 + index;
  if (frame.kind === 'hangup') {
    await endByCaller(new TableConversationStore('conn_1', undefined, undefined, world));
    return;
  }
  const inHand =
    frame.inHand === 'now' ? world.snapshot : frame.inHand === 'initial' ? world.initial : undefined;
  const store = new TableConversationStore('conn_1', inHand, undefined, world);
  if (frame.kind === 'interrupt') {
    await interrupt(store, '', at);
    return;
  }
  const turn = index;
  const output = {
    text: async (token: string, last: boolean) => {
      world.events.push({ kind: 'send', turn, token, last });
      await s.schedule(Promise.resolve(), `frame of ${turn} delivered`);
    },
    end: async (end: ConversationEnd) => {
      world.events.push({ kind: 'end', turn, end });
      await s.schedule(Promise.resolve(), `end of ${turn} delivered`);
    },
  };
  const runTool = async (
    call: { name: string },
    _setup: ConversationSetup,
    signal?: AbortSignal,
    current?: Promise<boolean>,
  ): Promise<ToolOutcome> => {
    if (call.name === TOOL_NAMES.endCall) return { ok: true, content: '{}', end: { reason: 'agent_hangup' } };
    if (call.name === TOOL_NAMES.transferCall)
      return { ok: true, content: '{}', end: { reason: 'transfer', transferTo: '+61491570156' } };
    if (call.name === TOOL_NAMES.handoffToAgent) {
      await s.schedule(Promise.resolve(), `target of ${turn} read`);
      return {
        ok: true,
        content: '{}',
        handoff: {
          setup: salesSetup,
          context: 'full',
          record: {
            fromAgentId: 'ag_1',
            toAgentId: 'ag_2',
            toAgentVersion: 1,
            at: new Date().toISOString(),
            reason: 'sales',
            summary: 'wants to buy',
          },
        },
      };
    }
    if (current && !(await current))
      return { ok: false, type: 'function', status: 'cancelled', content: '{"error":"cancelled"}' };
    world.events.push({ kind: 'tool_request', turn });
    await s.schedule(Promise.resolve(), `tool of ${turn} answers`);
    if (signal?.aborted) return { ok: false, type: 'function', status: 'cancelled', content: '{}' };
    return { ok: true, type: 'function', status: 'ok', content: '{"booked":true}' };
  };
  world.replies.set(turn, frame.reply);
  const deps = { store, model: model(s, world.replies), output, runTool };
  const input = { kind: 'prompt' as const, text: `line ${turn}`, at };
  if (frame.inHand === 'none') {
    // A fresh container: the start is written first, and the turn runs on what that write returned.
    const start = turnStart(input, Date.now());
    const written = await store.beginTurn(start);
    if (!written) return;
    await runTurn(deps, input, { start, written });
    return;
  }
  await runTurn(deps, input);
}

/** The invariants of turn-guard.ts, on what happened. */
function check(world: World): void {
  const { events } = world;
  const state = world.state;
  const sentBy = new Map<number, string>();
  const replyFrames = new Map<number, boolean[]>();
  const closedReplies = new Set<number>();
  const lastActAt = new Map<number, number>();
  // A handoff is written only by a turn that asked for one, on its own generation (an overtaken turn
  // hands over nothing); the target then speaks as that turn's frame, on the switch's generation.
  const switched = new Map<number, { at: number; generation: number }>();
  events.forEach((event, index) => {
    if (event.kind !== 'switch') return;
    const turn = [...world.generationOf].find(([, generation]) => generation === event.generation - 1)?.[0];
    expect(turn).toBeDefined();
    expect(world.replies.get(turn!)).toBe('handoff');
    expect(switched.has(turn!)).toBe(false);
    switched.set(turn!, { at: index, generation: event.generation });
  });
  events.forEach((event, index) => {
    // The end's proof is the closing write (checked below, on what it stored), before the reply's `last`.
    if (event.kind === 'generation' || event.kind === 'end' || event.kind === 'switch') return;
    const handedOver = switched.get(event.turn);
    if (handedOver && index > handedOver.at && lastActAt.get(event.turn)! < handedOver.at)
      lastActAt.set(event.turn, handedOver.at);
    const own =
      handedOver && index > handedOver.at ? handedOver.generation : world.generationOf.get(event.turn);
    expect(own).toBeDefined();
    // Its proof was read after its previous act: the stored generation was still its own then.
    const since =
      lastActAt.get(event.turn) ?? events.findIndex((e) => e.kind === 'generation' && e.value === own);
    if (world.generationAt(since) !== own)
      throw new Error(`turn ${event.turn} acted (${event.kind}) after generation ${own} was overtaken`);
    lastActAt.set(event.turn, index);
    // A reply by the turn's frame: its own (its `last` comes after the switch), then the target's.
    const reply = handedOver && closedReplies.has(event.turn) ? event.turn + 0.5 : event.turn;
    if (event.kind === 'send' && event.last && reply === event.turn) closedReplies.add(event.turn);
    if (event.kind === 'send') {
      sentBy.set(reply, (sentBy.get(reply) ?? '') + event.token);
      replyFrames.set(reply, [...(replyFrames.get(reply) ?? []), event.last]);
    }
  });
  // `end` goes out only when the closing write stored it; a stored end of the agent's went out once.
  const ends = events.filter((e) => e.kind === 'end');
  expect(ends.length).toBeLessThanOrEqual(1);
  for (const end of ends) expect(state.ended).toEqual(end.end);
  if (state.ended && state.ended.reason !== 'caller_hangup') expect(ends).toHaveLength(1);
  // Nothing of a reply sent after its `last`.
  for (const frames of replyFrames.values()) {
    const lastIndex = frames.indexOf(true);
    if (lastIndex >= 0) expect(lastIndex).toBe(frames.length - 1);
  }
  // A reply that said something and ended (its `last` went out) was kept: the transcript has a line
  // for each (an interruption after it may cut its text to what was heard, never drop it). A handing
  // agent may end its reply without a word.
  const ended = [...replyFrames.entries()].filter(
    ([reply, frames]) => frames.includes(true) && (sentBy.get(reply) ?? '').trim() !== '',
  ).length;
  const agentLines = state.transcript.filter((t) => t.role === 'agent' && t.text !== setup.greeting).length;
  expect(agentLines).toBeGreaterThanOrEqual(ended);
  // The history and the transcript keep only what was sent.
  const spoken = [...sentBy.values()].map((text) => text.trim());
  for (const message of state.history)
    if (message.role === 'assistant' && message.content.trim() !== '' && message.content !== setup.greeting)
      expect(spoken.some((text) => text.includes(message.content.trim()))).toBe(true);
  for (const line of state.transcript)
    if (line.role === 'agent' && line.text !== setup.greeting && line.text !== '')
      expect(spoken).toContain(line.text);
}

const reply = fc.constantFrom<Reply>('words', 'end_call', 'transfer', 'tool', 'handoff', 'model_error');
const frame: fc.Arbitrary<Frame> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('prompt' as const),
      reply,
      inHand: fc.constantFrom('none' as const, 'now' as const, 'initial' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('interrupt' as const),
      inHand: fc.constantFrom('now' as const, 'initial' as const),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'hangup' as const }) },
);

test('the turn protocol holds under every ordering of two and three frames: an overtaken turn ends and transfers nothing, a start that had to read again keeps its own generation (seeded, bounded)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.scheduler(),
      fc
        .array(frame, { minLength: 2, maxLength: 3 })
        .filter((frames) => frames.some((f) => f.kind === 'prompt')),
      async (s, frames) => {
        const world = new World(s);
        await s.waitFor(Promise.all(frames.map((f, i) => runFrame(world, s, f, i))));
        check(world);
      },
    ),
    { seed: 20261207, numRuns: 1000, interruptAfterTimeLimit: 50_000 },
  );
}, 60_000);
