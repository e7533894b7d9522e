import { ClauseChunker } from '../../functions/conversation/engine/clauses.js';
import { runTurn } from '../../functions/conversation/engine/turn.js';
import {
  APOLOGY_MODEL,
  APOLOGY_SILENT,
  FILLER_LINE,
  MAX_TOOL_ROUNDS,
  type ConversationOutput,
  type ToolRunner,
} from '../../functions/conversation/engine/ports.js';
import { interrupt } from '../../functions/conversation/engine/interruption.js';
import { emptyState, type ConversationSetup } from '../../functions/conversation/engine/model.js';
import {
  MemoryConversationStore,
  type ConversationStore,
} from '../../functions/conversation/engine/store.js';
import {
  LanguageModelError,
  type LanguageModelPort,
  type LlmRequest,
  type LlmStreamEvent,
} from '../../functions/providers/llm/port.js';

/** The engine alone: a scripted model, the memory store, a recording transport. No AWS, no socket. */

const setup: ConversationSetup = {
  workspaceId: 'ws_1',
  agentId: 'ag_1',
  callId: 'call_1',
  system: 'You are Ava.',
  greeting: 'Hi, this is Ava.',
  tools: [{ name: 'end_call', description: 'end', parameters: { type: 'object' } }],
  knowledgeBaseIds: [],
  startedAt: new Date().toISOString(),
  timeScale: 1,
};

type Step = LlmStreamEvent | { type: 'wait'; until: () => Promise<void> } | { type: 'throw'; error: Error };

/** A model that answers each request with the next script, event by event. */
function scriptedModel(scripts: Step[][]): LanguageModelPort & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  return {
    provider: 'openai',
    model: 'scripted',
    requests,
    async *stream(request: LlmRequest) {
      requests.push(request);
      const script = scripts.shift() ?? [
        { type: 'text', text: 'Fallback.' },
        { type: 'end', stopReason: 'end_turn' },
      ];
      for (const step of script) {
        if (request.signal?.aborted) throw new LanguageModelError('aborted', 'aborted');
        if (step.type === 'wait') await step.until();
        else if (step.type === 'throw') throw step.error;
        else yield step;
      }
    },
    complete: () => Promise.reject(new Error('not used')),
  };
}

const words = (text: string): Step[] => [
  ...text.split(/(?<= )/).map((piece): Step => ({ type: 'text', text: piece })),
  { type: 'end', stopReason: 'end_turn' },
];

function recorder(): ConversationOutput & { frames: { token: string; last: boolean }[]; ends: unknown[] } {
  const frames: { token: string; last: boolean }[] = [];
  const ends: unknown[] = [];
  return {
    frames,
    ends,
    text: (token, last) => {
      frames.push({ token, last });
      return Promise.resolve();
    },
    end: (end) => {
      ends.push(end);
      return Promise.resolve();
    },
  };
}

const noTools: ToolRunner = () => Promise.reject(new Error('no tools'));
const store = () => new MemoryConversationStore(setup, emptyState(setup.greeting));

test('clauses: a piece leaves when a clause completes, never a token at a time, never the whole reply at once', () => {
  const chunker = new ClauseChunker();
  const out: string[] = [];
  for (const token of 'The home is at 12 Harbour St. It has three bedrooms, two bathrooms and a view; open homes are Saturdays'.split(
    /(?<= )/,
  ))
    out.push(...chunker.push(token));
  expect(out).toEqual(['The home is at 12 Harbour St.', ' It has three bedrooms, two bathrooms and a view;']);
  expect(chunker.flush()).toBe(' open homes are Saturdays');
  expect(new ClauseChunker().push('Yes, ')).toEqual([]); // a short clause waits for more
});

test('a turn: the reply streams in clause-sized pieces, the last one carries last, the history and transcript keep it', async () => {
  const s = store();
  const out = recorder();
  const model = scriptedModel([words('Sure. Open homes are on Saturdays at 10am. See you then')]);
  const result = await runTurn(
    { store: s, model, output: out, runTool: noTools },
    { kind: 'prompt', text: 'When?' },
  );
  expect(out.frames).toEqual([
    { token: 'Sure.', last: false },
    { token: ' Open homes are on Saturdays at 10am.', last: false },
    { token: ' See you then', last: false },
    { token: '', last: true },
  ]);
  expect(result).toEqual({
    spoken: 'Sure. Open homes are on Saturdays at 10am. See you then',
    superseded: false,
  });
  const { state } = await s.load();
  expect(state.history.map((m) => `${m.role}: ${m.content}`)).toEqual([
    'assistant: Hi, this is Ava.',
    'user: When?',
    'assistant: Sure. Open homes are on Saturdays at 10am. See you then',
  ]);
  expect(state.transcript.map((t) => t.text)).toEqual([
    'Hi, this is Ava.',
    'When?',
    'Sure. Open homes are on Saturdays at 10am. See you then',
  ]);
  expect(state.latencies).toHaveLength(1);
  expect(model.requests[0].system).toBe('You are Ava.');
});

/**
 * The memory store, watched: it counts generation reads, may slow them (as a table's are, against a
 * fast-streaming model) or run something first, and may hold a write. `started` settles once the
 * turn's start write (the first) is answered.
 */
function watched(
  inner: ConversationStore,
  options: {
    readMs?: number;
    beforeRead?: () => Promise<void>;
    beforeWrite?: (n: number) => Promise<void>;
  } = {},
) {
  let writes = 0;
  let startAnswered: () => void = () => undefined;
  const wrapped: ConversationStore & { reads: number; started: Promise<void> } = {
    reads: 0,
    started: new Promise((resolve) => (startAnswered = resolve)),
    load: () => inner.load(),
    update: async (change) => {
      writes += 1;
      const n = writes;
      await options.beforeWrite?.(n);
      const stored = await inner.update(change);
      if (n === 1) startAnswered();
      return stored;
    },
    generation: async () => {
      wrapped.reads += 1;
      await options.beforeRead?.();
      if (options.readMs) await new Promise((resolveRead) => setTimeout(resolveRead, options.readMs));
      return inner.generation();
    },
  };
  return wrapped;
}

/** The model's words, once the turn's start write was answered (so it cannot stand in for a read). */
const afterStart = (s: { started: Promise<void> }, text: string): Step[] => [
  { type: 'wait', until: () => s.started },
  ...words(text),
];

/** A turn answering "When?" with `text` once its start write is answered: what it sent, and its result. */
async function whenTurn(s: ReturnType<typeof watched>, text: string) {
  const out = recorder();
  const result = await runTurn(
    { store: s, model: scriptedModel([afterStart(s, text)]), output: out, runTool: noTools },
    { kind: 'prompt', text: 'When?' },
  );
  return { frames: out.frames, result };
}

test("the generation is read before each piece; the reply's `last` goes on the closing write's own check, or not at all when that write found the turn superseded", async () => {
  const s = watched(store());
  const { frames } = await whenTurn(s, 'Sure. Open homes are on Saturdays.');
  expect(frames).toEqual([
    { token: 'Sure.', last: false },
    { token: ' Open homes are on Saturdays.', last: false },
    { token: '', last: true },
  ]);
  expect(s.reads).toBe(2); // one per piece, none for `last`

  // A newer prompt lands between the reply's last piece and its closing write: no `last` for this turn.
  const inner = store();
  const raced = watched(inner, {
    beforeWrite: (n) =>
      n === 2
        ? inner.update((state) => ({ ...state, generation: state.generation + 1 })).then(() => undefined)
        : Promise.resolve(),
  });
  const { frames: racedFrames, result } = await whenTurn(raced, 'Sure.');
  expect(racedFrames).toEqual([{ token: 'Sure.', last: false }]);
  expect(result.spoken).toBe('Sure.');
  expect(raced.reads).toBe(1); // the piece's; `last` needs none: the closing write found the turn superseded
});

test("every act is read for, the turn's first too: while the start write is still out, the proof waits for the generation it stores", async () => {
  // The start write answers only after the model's first clause is ready.
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const s = watched(store(), { beforeWrite: (n) => (n === 1 ? held : Promise.resolve()) });
  const out = recorder();
  const model = scriptedModel([
    [
      { type: 'text', text: 'Sure. ' },
      { type: 'wait', until: async () => release() },
      { type: 'wait', until: () => s.started },
      ...words('Open homes are on Saturdays.'),
    ],
  ]);
  await runTurn({ store: s, model, output: out, runTool: noTools }, { kind: 'prompt', text: 'When?' });
  expect(out.frames).toEqual([
    { token: 'Sure.', last: false },
    { token: ' Open homes are on Saturdays.', last: false },
    { token: '', last: true },
  ]);
  expect(s.reads).toBe(2); // one a piece: the first waited for the start write, then read

  // That start write found the state changed (another frame wrote first): nothing of the reply is sent.
  const inner = store();
  let releaseRaced: () => void = () => undefined;
  const heldRaced = new Promise<void>((resolve) => (releaseRaced = resolve));
  const raced = watched(inner, {
    beforeWrite: async (n) => {
      if (n !== 1) return;
      await heldRaced;
      await inner.update((state) => ({ ...state, generation: state.generation + 1 }));
    },
  });
  const racedOut = recorder();
  await runTurn(
    {
      store: raced,
      model: scriptedModel([
        [
          { type: 'text', text: 'Sure. ' },
          { type: 'wait', until: async () => releaseRaced() },
          ...words('Yes.'),
        ],
        words('Asked again.'),
      ]),
      output: racedOut,
      runTool: noTools,
    },
    { kind: 'prompt', text: 'When?' },
  );
  expect(racedOut.frames.map((f) => f.token)).toEqual(['Asked again.', '']);
});

/** The model asks for the agent's function tool `book`. */
const bookCall: Step[] = [
  { type: 'tool_call', call: { id: 't1', name: 'book', arguments: { day: 'Saturday' } } },
  { type: 'end', stopReason: 'tool_use' },
];
/** The agent's own tools: `book`, with a `speak_during` line when given. */
const box = (during?: string) => ({
  offered: () =>
    Promise.resolve({
      tools: [{ name: 'book', description: 'Book.', parameters: { type: 'object' } }],
      incidents: [],
    }),
  lines: () => (during ? { during } : {}),
});
/** A tool runner that sends only when its proof says so, as the function tool's request does. */
const gatedRunner = (onRun?: () => void) => {
  const sent: string[] = [];
  const runTool: ToolRunner = async (call, _setup, _signal, current) => {
    onRun?.();
    if (!current || !(await current)) return { ok: false, content: '{}', status: 'cancelled' };
    sent.push(call.name);
    return { ok: true, content: '{"booked":true}', type: 'function', status: 'ok' };
  };
  return { runTool, sent };
};

test("an agent tool's request waits for its proof (the speak_during line's when it has one): a turn superseded meanwhile sends nothing, records nothing, asks the model nothing more", async () => {
  for (const during of [undefined, 'One moment.']) {
    // Current: the request goes after its proof, the answer reaches the model.
    const s = watched(store());
    const ok = gatedRunner();
    const out = recorder();
    const model = scriptedModel([[{ type: 'wait', until: () => s.started }, ...bookCall], words('Booked.')]);
    await runTurn(
      { store: s, model, output: out, runTool: ok.runTool, agentTools: box(during) },
      { kind: 'prompt', text: 'Book it.' },
    );
    expect(ok.sent).toEqual(['book']);
    expect(out.frames.map((f) => f.token).join('')).toBe(`${during ? `${during} ` : ''}Booked.`);
    expect(s.reads).toBe(2); // the tool's proof (the line's, when it has one, is the tool's), and the reply's

    // A newer frame moves the generation while the proof is read: nothing is sent or kept of the tool.
    const inner = store();
    const raced = watched(inner, {
      beforeRead: () => interrupt(inner, '', Date.now() + 1_000).then(() => undefined),
    });
    const stopped = gatedRunner();
    const racedModel = scriptedModel([
      [{ type: 'wait', until: () => raced.started }, ...bookCall],
      words('Booked.'),
    ]);
    const racedOut = recorder();
    const result = await runTurn(
      {
        store: raced,
        model: racedModel,
        output: racedOut,
        runTool: stopped.runTool,
        agentTools: box(during),
      },
      { kind: 'prompt', text: 'Book it.' },
    );
    expect(stopped.sent).toEqual([]);
    expect(racedOut.frames).toEqual([]);
    expect(result.superseded).toBe(true);
    expect(racedModel.requests).toHaveLength(1);
    expect((await inner.load()).state.toolCalls).toEqual([]);
  }
});

test('after a tool, the next piece is read for when it is ready, whether the model or the table answered first', async () => {
  const run = async (options: { modelFirst: boolean; aheadAnswersFirst?: boolean }) => {
    const events: string[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const inner = store();
    const s = watched(inner, {
      // The start write waits for the model's first round when the model is the faster.
      beforeWrite: (n) => (n === 1 && options.modelFirst ? held : Promise.resolve()),
      // A read takes 20 ms, as a table's does against a model answering at once.
      readMs: 20,
      beforeRead: async () => {
        events.push('read');
      },
    });
    // Released once the model's first round is over (the tool is being made ready).
    const runner = gatedRunner(() => release());
    const model = scriptedModel([
      options.modelFirst ? bookCall : [{ type: 'wait', until: () => s.started }, ...bookCall],
      [
        {
          type: 'wait',
          until: async () => {
            events.push('round two asked');
          },
        },
        ...(options.aheadAnswersFirst
          ? [{ type: 'wait' as const, until: () => new Promise<void>((r) => setTimeout(r, 60)) }]
          : []),
        ...words('Booked.'),
      ],
    ]);
    const out = recorder();
    await runTurn(
      { store: s, model, output: out, runTool: runner.runTool, agentTools: box() },
      { kind: 'prompt', text: 'Book it.' },
    );
    return { events, reads: s.reads, spoken: out.frames.map((f) => f.token).join(''), sent: runner.sent };
  };

  // Each act reads when it needs to (the tool's, then the piece's), whichever of the model and the
  // start write answered first; a read that answered before the piece was ready is never taken for it.
  for (const options of [
    { modelFirst: true },
    { modelFirst: false },
    { modelFirst: true, aheadAnswersFirst: true },
  ])
    expect(await run(options)).toEqual({
      events: ['read', 'round two asked', 'read'],
      reads: 2,
      spoken: 'Booked.',
      sent: ['book'],
    });
});

test('pieces ready while a proof is being read go with it: one read for a reply streamed faster than a read, and none of them once a newer frame moved the generation', async () => {
  const s = watched(store(), { readMs: 20 });
  const { frames, result } = await whenTurn(s, 'Sure. Open homes are on Saturdays. Bring photo ID.');
  expect(frames).toEqual([
    { token: 'Sure.', last: false },
    { token: ' Open homes are on Saturdays.', last: false },
    { token: ' Bring photo ID.', last: false },
    { token: '', last: true },
  ]);
  expect(result.spoken).toBe('Sure. Open homes are on Saturdays. Bring photo ID.');
  expect(s.reads).toBe(1);

  // An interruption moves the generation while that read is out: none of the queued pieces is sent.
  const inner = store();
  let moved = false;
  const raced = watched(inner, {
    readMs: 20,
    beforeRead: async () => {
      if (moved) return;
      moved = true;
      await interrupt(inner, '', Date.now() + 1_000);
    },
  });
  const { frames: racedFrames, result: stopped } = await whenTurn(
    raced,
    'Sure. Open homes are on Saturdays. Bring photo ID.',
  );
  expect(racedFrames).toEqual([]);
  expect(stopped).toMatchObject({ spoken: '', superseded: true });
  expect(raced.reads).toBe(1);
});

test('an interruption mid-reply: nothing more of it is sent, the history keeps only what was heard', async () => {
  const s = store();
  const out = recorder();
  let release!: () => void;
  const held = new Promise<void>((resolveHeld) => (release = resolveHeld));
  const model = scriptedModel([
    [
      { type: 'text', text: 'The home has three bedrooms. ' },
      { type: 'wait', until: () => held },
      { type: 'text', text: 'It also has a pool. ' },
      { type: 'text', text: 'And a garden.' },
      { type: 'end', stopReason: 'end_turn' },
    ],
  ]);
  const turn = runTurn(
    { store: s, model, output: out, runTool: noTools },
    { kind: 'prompt', text: 'Tell me.' },
  );
  await new Promise((r) => setTimeout(r, 20));
  await interrupt(s, 'The home has three');
  release();
  const result = await turn;
  expect(result.superseded).toBe(true);
  expect(out.frames.map((f) => f.token)).toEqual(['The home has three bedrooms.']);
  expect(out.frames.some((f) => f.last)).toBe(false);
  const { state } = await s.load();
  expect(state.history.at(-1)).toEqual({ role: 'assistant', content: 'The home has three' });
  expect(state.transcript.at(-1)).toMatchObject({
    role: 'agent',
    text: 'The home has three',
    interrupted: true,
  });
  expect(JSON.stringify(state)).not.toContain('pool');
});

const historyLines = (state: { history: { role: string; content: string }[] }) =>
  state.history.map((m) => `${m.role}: ${m.content}`);

/** Two turns' history where what was heard of the first reply is kept before the second line. */
const heardBeforeOpenHomes = (heard: string) => [
  'assistant: Hi, this is Ava.',
  'user: Tell me.',
  `assistant: ${heard}`,
  'user: When are the open homes?',
  'assistant: Open homes are on Saturdays.',
];

test('an interruption handled after a newer prompt it came before: that turn goes on, and what was heard of the reply before it is kept before its line', async () => {
  const s = store();
  await runTurn(
    {
      store: s,
      model: scriptedModel([words('The home has three bedrooms and a pool.')]),
      output: recorder(),
      runTool: noTools,
    },
    { kind: 'prompt', text: 'Tell me.', at: 1_000 },
  );
  let release!: () => void;
  const held = new Promise<void>((resolveHeld) => (release = resolveHeld));
  const out = recorder();
  const turn = runTurn(
    {
      store: s,
      model: scriptedModel([[{ type: 'wait', until: () => held }, ...words('Open homes are on Saturdays.')]]),
      output: out,
      runTool: noTools,
    },
    { kind: 'prompt', text: 'When are the open homes?', at: 5_000 },
  );
  await new Promise((r) => setTimeout(r, 20));
  // The caller spoke over the first reply (4.9 s), then asked (5 s); the interruption is handled last.
  await interrupt(s, 'The home has three', 4_900);
  release();
  const result = await turn;
  expect(result.superseded).toBe(false);
  expect(out.frames).toEqual([
    { token: 'Open homes are on Saturdays.', last: false },
    { token: '', last: true },
  ]);
  const { state } = await s.load();
  expect(historyLines(state)).toEqual(heardBeforeOpenHomes('The home has three'));
  expect(state.transcript.find((t) => t.text === 'The home has three')).toMatchObject({ interrupted: true });

  // One that reached the socket after the turn's prompt stops that turn, as always.
  const later = recorder();
  const stopped = runTurn(
    {
      store: s,
      model: scriptedModel([
        [{ type: 'wait', until: () => new Promise((r) => setTimeout(r, 30)) }, ...words('Too late.')],
      ]),
      output: later,
      runTool: noTools,
    },
    { kind: 'prompt', text: 'And the price?', at: 9_000 },
  );
  await new Promise((r) => setTimeout(r, 10));
  await interrupt(s, '', 9_500);
  expect((await stopped).superseded).toBe(true);
  expect(later.frames).toEqual([]);
});

test('an interruption in the same millisecond as the next prompt, handled after that turn finished: the finished reply is kept whole, what was heard of the one before goes before its line', async () => {
  const s = store();
  const turnOf = (text: string, reply: string, at: number) =>
    runTurn(
      { store: s, model: scriptedModel([words(reply)]), output: recorder(), runTool: noTools },
      { kind: 'prompt', text, at },
    );
  await turnOf('Tell me.', 'Of course, here is everything about the home.', 1_000);
  // Both frames reached the socket at 5 s; the interruption's handler ran last (frames run in parallel).
  await turnOf('When are the open homes?', 'Open homes are on Saturdays.', 5_000);
  await interrupt(s, 'Of course, here is', 5_000);
  const { state } = await s.load();
  expect(historyLines(state)).toEqual(heardBeforeOpenHomes('Of course, here is'));

  // In the same millisecond, words the finished reply begins with are that reply's: it is cut to them.
  await turnOf('And the price?', 'It is listed at one point two five million.', 9_000);
  await interrupt(s, 'It is listed', 9_000);
  const after = (await s.load()).state;
  expect(after.history.at(-1)).toEqual({ role: 'assistant', content: 'It is listed' });
  expect(after.transcript.at(-1)).toMatchObject({ role: 'agent', text: 'It is listed', interrupted: true });
});

test('the model is asked before the turn is stored; if another frame changed the state first, that request goes unheard and the model is asked again on what was stored', async () => {
  const s = store();
  await runTurn(
    {
      store: s,
      model: scriptedModel([words('The home has three bedrooms.')]),
      output: recorder(),
      runTool: noTools,
    },
    { kind: 'prompt', text: 'Tell me.' },
  );
  // The frame read the state (as the relay handler does), then an interruption was stored before its turn began.
  const readByTheFrame = await s.load();
  await interrupt(s, 'The home has');
  const frameStore: ConversationStore = {
    load: () => Promise.resolve(structuredClone(readByTheFrame)),
    update: (change) => s.update(change),
    generation: () => s.generation(),
  };
  const out = recorder();
  const model = scriptedModel([
    words('A reply to what was never heard.'),
    words('A reply to what was heard.'),
  ]);
  const result = await runTurn(
    { store: frameStore, model, output: out, runTool: noTools },
    { kind: 'prompt', text: 'And the garden?' },
  );
  expect(model.requests).toHaveLength(2);
  expect(model.requests[0].signal?.aborted).toBe(true);
  expect(model.requests[0].messages.at(-2)).toEqual({
    role: 'assistant',
    content: 'The home has three bedrooms.',
  });
  expect(model.requests[1].messages.slice(-2)).toEqual([
    { role: 'assistant', content: 'The home has' },
    { role: 'user', content: 'And the garden?' },
  ]);
  expect(out.frames.map((f) => f.token).join('')).toBe('A reply to what was heard.');
  expect(out.frames.filter((f) => f.last)).toHaveLength(1);
  expect(result).toEqual({ spoken: 'A reply to what was heard.', superseded: false });
  const { state } = await s.load();
  expect(state.history.map((m) => m.content)).toEqual([
    'Hi, this is Ava.',
    'Tell me.',
    'The home has',
    'And the garden?',
    'A reply to what was heard.',
  ]);
  expect(state.latencies).toHaveLength(2);
});

test('a newer prompt supersedes a reply still being generated', async () => {
  const s = store();
  const out = recorder();
  let release!: () => void;
  const held = new Promise<void>((resolveHeld) => (release = resolveHeld));
  const model = scriptedModel([
    [{ type: 'wait', until: () => held }, ...words('The stale answer.')],
    words('The fresh answer.'),
  ]);
  const deps = { store: s, model, output: out, runTool: noTools };
  const first = runTurn(deps, { kind: 'prompt', text: 'First?' });
  await new Promise((r) => setTimeout(r, 10));
  const second = await runTurn(deps, { kind: 'prompt', text: 'Second?' });
  release();
  await first;
  expect(second.spoken).toBe('The fresh answer.');
  expect(out.frames.map((f) => f.token).join('')).not.toContain('stale');
});

test('tools: rounds are bounded, a failing or unknown tool gets a spoken apology, never silence; end_call ends after the words', async () => {
  const s = store();
  const out = recorder();
  const call = (name: string, id: string): Step => ({ type: 'tool_call', call: { id, name, arguments: {} } });
  const endTool = { type: 'end', stopReason: 'tool_use' } as const;
  const model = scriptedModel(
    Array.from({ length: MAX_TOOL_ROUNDS + 2 }, (_, i) => [call('no_such_tool', `t${i}`), endTool]),
  );
  const runTool: ToolRunner = (c) =>
    Promise.resolve(
      c.name === 'end_call'
        ? { ok: true, content: '{}', end: { reason: 'agent_hangup' } }
        : { ok: false, content: '{"error":"unknown tool"}', error: 'unknown tool' },
    );
  const result = await runTurn({ store: s, model, output: out, runTool }, { kind: 'prompt', text: 'Do it.' });
  expect(model.requests).toHaveLength(MAX_TOOL_ROUNDS + 1);
  expect(model.requests.at(-1)!.tools!.map((t) => t.name)).toEqual(['end_call']);
  expect(result.spoken).toBe(APOLOGY_SILENT);
  const { state } = await s.load();
  expect(state.toolCalls).toHaveLength(MAX_TOOL_ROUNDS + 1);
  expect(state.toolCalls.every((t) => !t.ok)).toBe(true);
  expect(state.incidents.filter((i) => i.kind === 'tool_error')).toHaveLength(MAX_TOOL_ROUNDS + 1);

  const ending = recorder();
  const bye = scriptedModel([[{ type: 'text', text: 'Goodbye!' }, call('end_call', 'e1'), endTool]]);
  const ended = await runTurn(
    { store: store(), model: bye, output: ending, runTool },
    { kind: 'prompt', text: 'Bye' },
  );
  expect(ended.ended).toEqual({ reason: 'agent_hangup' });
  expect(ending.frames).toEqual([
    { token: 'Goodbye!', last: false },
    { token: '', last: true },
  ]);
  expect(ending.ends).toEqual([{ reason: 'agent_hangup' }]);
});

test('a tool that throws: the model is told it failed, the incident names the error class, the call goes on', async () => {
  const s = store();
  const model = scriptedModel([
    [
      { type: 'tool_call', call: { id: 't1', name: 'search_knowledge', arguments: { query: 'x' } } },
      { type: 'end', stopReason: 'tool_use' },
    ],
    words('Sorry, I could not look that up.'),
  ]);
  const runTool: ToolRunner = () => Promise.reject(new Error('the index is unreachable'));
  const result = await runTurn(
    { store: s, model, output: recorder(), runTool },
    { kind: 'prompt', text: 'x?' },
  );
  expect(result.spoken).toContain('Sorry, I could not look that up.');
  expect(model.requests[1].messages.at(-1)).toMatchObject({
    role: 'tool',
    content: '{"error":"the tool failed"}',
  });
  const { state } = await s.load();
  expect(state.incidents).toEqual([
    expect.objectContaining({ kind: 'tool_error', detail: 'search_knowledge: the tool failed (Error)' }),
  ]);
  expect(state.toolCalls).toEqual([expect.objectContaining({ name: 'search_knowledge', ok: false })]);
});

test('a tool with a bug of ours (a programming error) is not hidden as "the tool failed": it surfaces under test', async () => {
  const model = scriptedModel([
    [
      { type: 'tool_call', call: { id: 't1', name: 'search_knowledge', arguments: { query: 'x' } } },
      { type: 'end', stopReason: 'tool_use' },
    ],
  ]);
  const runTool: ToolRunner = () => Promise.reject(new TypeError('x is not a function'));
  await expect(
    runTurn({ store: store(), model, output: recorder(), runTool }, { kind: 'prompt', text: 'x?' }),
  ).rejects.toThrow(TypeError);
});

test('a knowledge search asked before the agent said anything is preceded by a filler line (every search, slow or not)', async () => {
  const out = recorder();
  const model = scriptedModel([
    [
      { type: 'tool_call', call: { id: 'k1', name: 'search_knowledge', arguments: { query: 'Manly' } } },
      { type: 'end', stopReason: 'tool_use' },
    ],
    words('It is available.'),
  ]);
  const runTool: ToolRunner = () => Promise.resolve({ ok: true, content: '{"results":[]}' });
  const result = await runTurn(
    { store: store(), model, output: out, runTool },
    { kind: 'prompt', text: 'Manly?' },
  );
  expect(result.spoken).toBe(`${FILLER_LINE}It is available.`);
  expect(model.requests[1].messages.at(-1)).toEqual({
    role: 'tool',
    toolCallId: 'k1',
    name: 'search_knowledge',
    content: '{"results":[]}',
  });
});

test('the model failing before or during the reply: an apology, and the incident recorded', async () => {
  const s = store();
  const out = recorder();
  const model = scriptedModel([
    [
      { type: 'text', text: 'Let me see. ' },
      { type: 'throw', error: new LanguageModelError('boom', 'unavailable') },
    ],
  ]);
  const result = await runTurn(
    { store: s, model, output: out, runTool: noTools },
    { kind: 'prompt', text: 'Hi' },
  );
  expect(result.spoken).toBe(`Let me see. ${APOLOGY_MODEL}`);
  expect(out.frames.at(-1)).toEqual({ token: '', last: true });
  const { state } = await s.load();
  expect(state.incidents.map((i) => i.kind)).toEqual(['model_error']);
});

test('a key press reaches the model as what the caller pressed', async () => {
  const s = store();
  const model = scriptedModel([words('You pressed 5.')]);
  await runTurn({ store: s, model, output: recorder(), runTool: noTools }, { kind: 'dtmf', digit: '5' });
  expect(model.requests[0].messages.at(-1)).toEqual({
    role: 'user',
    content: 'The caller pressed the key "5".',
  });
  expect((await s.load()).state.transcript.at(-2)).toMatchObject({ role: 'user', text: '(pressed 5)' });
});

test("a turn is timed from when its frame reached the socket (the gateway's time), not from its handler's start", async () => {
  const s = store();
  const at = Date.now() - 300; // the frame waited 300 ms before its handler ran (a cold start)
  await runTurn(
    { store: s, model: scriptedModel([words('Yes.')]), output: recorder(), runTool: noTools },
    { kind: 'prompt', text: 'Hello?', at },
  );
  const { state } = await s.load();
  expect(state.latencies).toHaveLength(1);
  expect(state.latencies[0].totalMs).toBeGreaterThanOrEqual(300);
  // A time from another clock (far in the past) is not a wait: the turn is timed from its handler.
  const t = store();
  await runTurn(
    { store: t, model: scriptedModel([words('Yes.')]), output: recorder(), runTool: noTools },
    { kind: 'prompt', text: 'Hello?', at: 5_000 },
  );
  expect((await t.load()).state.latencies[0].totalMs).toBeLessThan(1_000);
});
