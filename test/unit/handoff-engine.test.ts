import { applyHandoff, handoffTool, targetHistory } from '../../functions/conversation/engine/handoff.js';
import { interrupt } from '../../functions/conversation/engine/interruption.js';
import {
  emptyState,
  MAX_HANDOFFS_A_CALL,
  TOOL_NAMES,
  type ConversationSetup,
  type HandoffSwitch,
} from '../../functions/conversation/engine/model.js';
import {
  MemoryConversationStore,
  type ConversationStore,
} from '../../functions/conversation/engine/store.js';
import { runTurn } from '../../functions/conversation/engine/turn.js';
import {
  type AgentToolBox,
  type ConversationOutput,
  type ToolRunner,
} from '../../functions/conversation/engine/ports.js';
import { applyTurnStart, turnStart } from '../../functions/conversation/engine/turn-start.js';
import {
  LanguageModelError,
  type LanguageModelPort,
  type LlmRequest,
  type LlmStreamEvent,
} from '../../functions/providers/llm/port.js';
import { serviceLines } from '../../functions/conversation/engine/lines.js';

/** The engine's handoff alone: a scripted model, the memory store, a recording transport. */

const reception: ConversationSetup = {
  workspaceId: 'ws_1',
  agentId: 'ag_reception',
  callId: 'call_1',
  system: 'You are the receptionist.',
  greeting: 'Hi, Harbour Realty.',
  tools: [{ name: 'end_call', description: 'end', parameters: { type: 'object' } }],
  knowledgeBaseIds: [],
  agentName: 'Reception',
  language: 'en-AU',
  handoffs: [
    { agentId: 'ag_sales', name: 'Sales', description: 'buying or a listing price', context: 'full' },
    { agentId: 'ag_lettings', name: 'Lettings', description: 'renting', context: 'summary' },
  ],
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

const sales: ConversationSetup = {
  ...reception,
  agentId: 'ag_sales',
  agentName: 'Sales',
  language: 'es-ES',
  system: 'You are Sales.\n\n## You are taking over this call\nYou are Sales.',
  handoffs: [{ agentId: 'ag_reception', name: 'Reception', description: 'anything else', context: 'full' }],
};

const switchTo = (setup: ConversationSetup, context: HandoffSwitch['context'] = 'full'): HandoffSwitch => ({
  setup,
  context,
  record: {
    fromAgentId: 'ag_reception',
    toAgentId: setup.agentId,
    toAgentVersion: 3,
    at: '2026-12-07T00:00:00.000Z',
    reason: 'wants to buy',
    summary: 'asked about 12 Harbour St',
  },
});

/** A model that answers by whose prompt it is: the receptionist hands over, the target answers. */
function model(
  receptionScript: LlmStreamEvent[],
  /** Awaited between the target's two pieces (its first words heard before its next are ready). */
  betweenSalesPieces?: () => Promise<void>,
): LanguageModelPort & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  return {
    provider: 'openai',
    model: 'scripted',
    requests,
    async *stream(request: LlmRequest) {
      requests.push(request);
      const script: LlmStreamEvent[] = request.system.startsWith('You are Sales.')
        ? [
            { type: 'text', text: 'Hola, soy Sales. ' },
            { type: 'text', text: 'Le ayudo con la casa.' },
            { type: 'end', stopReason: 'end_turn' },
          ]
        : request.messages.at(-1)?.role === 'tool'
          ? [
              { type: 'text', text: 'This should never be said.' },
              { type: 'end', stopReason: 'end_turn' },
            ]
          : receptionScript;
      for (const [index, event] of script.entries()) {
        if (index === 1 && request.system.startsWith('You are Sales.')) await betweenSalesPieces?.();
        yield event;
      }
    },
    complete: () => Promise.reject(new Error('not used')),
  };
}

const handsOver: LlmStreamEvent[] = [
  { type: 'text', text: 'Let me put you through to Sales. ' },
  {
    type: 'tool_call',
    call: {
      id: 't1',
      name: TOOL_NAMES.handoffToAgent,
      arguments: { agent_id: 'ag_sales', reason: 'buy', summary: 's' },
    },
  },
  { type: 'end', stopReason: 'tool_use' },
];

function recorder(): ConversationOutput & { frames: string[] } {
  const frames: string[] = [];
  return {
    frames,
    text: (token, last) => {
      frames.push(last ? `<last>${token}` : token);
      return Promise.resolve();
    },
    end: (end) => {
      frames.push(`<end ${end.reason}>`);
      return Promise.resolve();
    },
    language: (language) => {
      frames.push(`<language ${language}>`);
      return Promise.resolve();
    },
  };
}

const runner =
  (handoff: HandoffSwitch | { error: string }): ToolRunner =>
  (call) =>
    Promise.resolve(
      call.name !== TOOL_NAMES.handoffToAgent
        ? { ok: false, content: '{}' }
        : 'error' in handoff
          ? { ok: false, content: JSON.stringify(handoff), error: handoff.error }
          : { ok: true, content: '{}', handoff },
    );

test("a handoff: the current reply stops at once, the switch is kept, the target speaks first — a language frame before its words — on the caller's line, and every line and tool call says which agent", async () => {
  const store = new MemoryConversationStore(reception, emptyState(reception.greeting));
  const out = recorder();
  const llm = model(handsOver);
  const result = await runTurn(
    { store, model: llm, output: out, runTool: runner(switchTo(sales)) },
    { kind: 'prompt', text: 'I want to buy the house on Harbour Street.' },
  );
  expect(result.handedTo).toBe('ag_sales');
  expect(out.frames).toEqual([
    'Let me put you through to Sales.',
    // The reception's model is not asked again after the tool: the handoff ends its reply at once.
    '<last>',
    '<language es-ES>',
    'Hola, soy Sales.',
    ' Le ayudo con la casa.',
    '<last>',
  ]);
  // The reception's model offered the tool with both targets; the target's request ends on the caller's line.
  const offered = llm.requests[0].tools?.find((t) => t.name === TOOL_NAMES.handoffToAgent);
  expect(offered?.description).toContain('- ag_sales (Sales): buying or a listing price');
  const target = llm.requests[1];
  expect(target.system).toContain('The caller\'s last line: "I want to buy the house on Harbour Street."');
  expect(target.messages.at(-1)).toEqual({
    role: 'user',
    content: 'I want to buy the house on Harbour Street.',
  });
  expect(target.messages.some((m) => m.role === 'tool' || ('toolCalls' in m && m.toolCalls))).toBe(false);
  // It is offered its own targets, but not the agent it was just handed from.
  expect(target.tools?.some((t) => t.name === TOOL_NAMES.handoffToAgent)).toBe(false);

  const { state, setup } = await store.load();
  expect(setup.agentId).toBe('ag_sales');
  expect(state.handoffs).toEqual([switchTo(sales).record]);
  expect(state.handedFromAgentId).toBe('ag_reception');
  expect(state.transcript.filter((t) => t.role === 'agent').map((t) => [t.agentId, t.text])).toEqual([
    [undefined, 'Hi, Harbour Realty.'],
    ['ag_reception', 'Let me put you through to Sales.'],
    ['ag_sales', 'Hola, soy Sales. Le ayudo con la casa.'],
  ]);
  expect(state.toolCalls).toEqual([
    expect.objectContaining({ name: TOOL_NAMES.handoffToAgent, agentId: 'ag_reception', ok: true }),
  ]);
});

test('a target gone since: the tool answers {error} and the current agent goes on; the call is not handed over', async () => {
  const store = new MemoryConversationStore(reception, emptyState(reception.greeting));
  const out = recorder();
  const result = await runTurn(
    {
      store,
      model: model(handsOver),
      output: out,
      runTool: runner({ error: 'that agent is no longer available' }),
    },
    { kind: 'prompt', text: 'Sales please.' },
  );
  expect(result.handedTo).toBeUndefined();
  const { state, setup } = await store.load();
  expect(setup.agentId).toBe('ag_reception');
  expect(state.handoffs ?? []).toEqual([]);
  expect(out.frames.at(-1)).toBe('<last>');
  expect(out.frames.join('')).toContain('This should never be said.'); // the model went on after the error
});

test('an interruption during the target’s first words cuts them; the handoff stands', async () => {
  const store = new MemoryConversationStore(reception, emptyState(reception.greeting));
  const frames: string[] = [];
  let heard!: () => void;
  const firstWordsHeard = new Promise<void>((resolve) => (heard = resolve));
  const output: ConversationOutput = {
    text: async (token, last) => {
      frames.push(last ? '<last>' : token);
      // The caller speaks over the target's first piece, before its next is ready.
      if (token.startsWith('Hola')) {
        await interrupt(store, 'Hola', Date.now() + 5);
        heard();
      }
    },
    end: () => Promise.resolve(),
  };
  await runTurn(
    { store, model: model(handsOver, () => firstWordsHeard), output, runTool: runner(switchTo(sales)) },
    { kind: 'prompt', text: 'I want to buy.', at: Date.now() },
  );
  expect(frames).toEqual(['Let me put you through to Sales.', '<last>', 'Hola, soy Sales.']);
  const { state, setup } = await store.load();
  expect(setup.agentId).toBe('ag_sales');
  expect(state.transcript.at(-1)).toMatchObject({ text: 'Hola', interrupted: true, agentId: 'ag_sales' });
});

test('the target is asked while the switch is written; its words wait for the switch and the handing agent’s last', async () => {
  const store = new MemoryConversationStore(reception, emptyState(reception.greeting));
  const scripted = model(handsOver);
  const salesAsked = () => scripted.requests.some((r) => r.system.startsWith('You are Sales.'));
  const order: string[] = [];
  let writes = 0;
  const gated: ConversationStore = {
    load: () => store.load(),
    generation: () => store.generation(),
    update: async (change) => {
      writes += 1;
      // The receptionist's closing write (the switch) is held until the target's model was asked.
      if (writes === 2) {
        for (let i = 0; i < 100 && !salesAsked(); i += 1) await new Promise((r) => setImmediate(r));
        order.push(salesAsked() ? 'switch written after the target was asked' : 'switch written first');
      }
      return store.update(change);
    },
  };
  const out = recorder();
  const result = await runTurn(
    { store: gated, model: scripted, output: out, runTool: runner(switchTo(sales)) },
    { kind: 'prompt', text: 'I want to buy.' },
  );
  expect(result.handedTo).toBe('ag_sales');
  expect(order).toEqual(['switch written after the target was asked']);
  expect(out.frames).toEqual([
    'Let me put you through to Sales.',
    '<last>',
    '<language es-ES>',
    'Hola, soy Sales.',
    ' Le ayudo con la casa.',
    '<last>',
  ]);
  expect(scripted.requests.filter((r) => r.system.startsWith('You are Sales.'))).toHaveLength(1);
});

test('the target’s first reply offers its own tools, not the handing agent’s', async () => {
  const store = new MemoryConversationStore(reception, emptyState(reception.greeting));
  const scripted = model(handsOver);
  const toolBox = (name: string): AgentToolBox => ({
    offered: () =>
      Promise.resolve({
        tools: [{ name, description: name, parameters: { type: 'object' } }],
        incidents: [],
      }),
    lines: () => undefined,
  });
  const asked: string[] = [];
  await runTurn(
    {
      store,
      model: scripted,
      output: recorder(),
      runTool: runner(switchTo(sales)),
      agentTools: toolBox('check_opening_hours'),
      forAgent: (setup) => {
        asked.push(setup.agentId);
        return Promise.resolve({ runTool: runner(switchTo(sales)), agentTools: toolBox('book_viewing') });
      },
    },
    { kind: 'prompt', text: 'I want to buy.' },
  );
  const offered = (system: string) =>
    scripted.requests.find((r) => r.system.startsWith(system))?.tools?.map((t) => t.name) ?? [];
  expect(asked).toEqual(['ag_sales']);
  expect(offered('You are the receptionist.')).toContain('check_opening_hours');
  expect(offered('You are Sales.')).toContain('book_viewing');
  expect(offered('You are Sales.')).not.toContain('check_opening_hours');
});

test('handing over without a word: the caller hears no apology, the target speaks next', async () => {
  const store = new MemoryConversationStore(reception, emptyState(reception.greeting));
  const out = recorder();
  await runTurn(
    { store, model: model(handsOver.slice(1)), output: out, runTool: runner(switchTo(sales)) },
    { kind: 'prompt', text: 'I want to buy.' },
  );
  expect(out.frames).toEqual([
    '<last>',
    '<language es-ES>',
    'Hola, soy Sales.',
    ' Le ayudo con la casa.',
    '<last>',
  ]);
});

test('the target’s model failing on its first reply: the apology in the target’s language; the call goes on with the target', async () => {
  const store = new MemoryConversationStore(reception, emptyState(reception.greeting));
  const out = recorder();
  const scripted = model(handsOver);
  const failingSales: LanguageModelPort = {
    ...scripted,
    stream: (request) =>
      request.system.startsWith('You are Sales.')
        ? (async function* (): AsyncGenerator<LlmStreamEvent> {
            yield* [];
            throw new LanguageModelError('the model failed', 'unavailable');
          })()
        : scripted.stream(request),
  };
  const result = await runTurn(
    { store, model: failingSales, output: out, runTool: runner(switchTo(sales)) },
    { kind: 'prompt', text: 'I want to buy.' },
  );
  expect(result.handedTo).toBe('ag_sales');
  expect(out.frames).toEqual([
    'Let me put you through to Sales.',
    '<last>',
    '<language es-ES>',
    serviceLines('es-ES').modelTrouble,
    '<last>',
  ]);
  const { state, setup } = await store.load();
  expect(setup.agentId).toBe('ag_sales');
  expect(state.incidents.map((i) => i.kind)).toEqual(['model_error']);
});

test('guards: at most 3 handoffs a call; the agent just handed from is offered again once the caller has spoken; context modes', () => {
  let state = emptyState(reception.greeting);
  expect(handoffTool(reception, state)?.parameters).toMatchObject({
    properties: { agent_id: { enum: ['ag_sales', 'ag_lettings'] } },
  });
  state = applyHandoff(
    { ...state, history: [...state.history, { role: 'user', content: 'Hi' }] },
    switchTo(sales),
  );
  // Sales may not hand straight back to reception…
  expect(handoffTool(sales, state)).toBeUndefined();
  // …until the caller has spoken again.
  state = applyTurnStart(state, sales, turnStart({ kind: 'prompt', text: 'Actually, renting.' }, Date.now()));
  expect(handoffTool(sales, state)?.parameters).toMatchObject({
    properties: { agent_id: { enum: ['ag_reception'] } },
  });
  for (let i = state.handoffs!.length; i < MAX_HANDOFFS_A_CALL; i += 1)
    state = applyHandoff(state, switchTo(sales));
  expect(handoffTool(reception, { ...state, handedFromAgentId: undefined })).toBeUndefined();

  const history = [
    { role: 'assistant' as const, content: 'Hi.' },
    { role: 'user' as const, content: 'Buy.' },
    {
      role: 'assistant' as const,
      content: 'One moment.',
      toolCalls: [{ id: 't', name: 'book', arguments: {} }],
    },
    { role: 'tool' as const, toolCallId: 't', name: 'book', content: '{}' },
    { role: 'user' as const, content: 'Sales please.' },
    { role: 'assistant' as const, content: 'Putting you through.' },
  ];
  expect(targetHistory(history, 'full')).toEqual([
    { role: 'assistant', content: 'Hi.' },
    { role: 'user', content: 'Buy.' },
    { role: 'assistant', content: 'One moment.' },
    { role: 'user', content: 'Sales please.' },
  ]);
  expect(targetHistory(history, 'summary')).toEqual([{ role: 'user', content: 'Sales please.' }]);
  expect(targetHistory(history, 'none')).toEqual([{ role: 'user', content: 'Sales please.' }]);
});
