import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenAiLanguageModel } from '../../functions/providers/llm/openai.js';
import {
  LanguageModelError,
  type LlmRequest,
  type LlmStreamEvent,
  type LlmTool,
} from '../../functions/providers/llm/port.js';
import { startLlmSimulator, type LlmSimulator } from '../../lib/local/simulators/llm/server.js';
import {
  GOODBYE_REPLY,
  GREETING_REPLY,
  LONG_REPLY,
  TOOL_FAILED_REPLY,
} from '../../lib/local/simulators/llm/replies.js';

/**
 * The OpenAI-compatible adapter against the local model simulator (started here, in-process) and
 * against a scripted server that sends exactly the bytes a test gives it: tool-call arguments split
 * in odd fragments across chunks (and SSE lines split across writes), two calls in one turn, a 500,
 * a broken stream, a stall.
 */

const TOOLS: LlmTool[] = [
  {
    name: 'search_knowledge',
    description: 'Search the agent’s knowledge bases',
    parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
  {
    name: 'end_call',
    description: 'End the call',
    parameters: { type: 'object', properties: { reason: { type: 'string' } } },
  },
];

const TIMEOUTS = { firstTokenMs: 2000, totalMs: 5000 };

async function collect(adapter: OpenAiLanguageModel, request: LlmRequest): Promise<LlmStreamEvent[]> {
  const events: LlmStreamEvent[] = [];
  for await (const event of adapter.stream(request)) events.push(event);
  return events;
}

async function failure(run: () => Promise<unknown>): Promise<LanguageModelError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof LanguageModelError) return error;
    throw error;
  }
  throw new Error('expected a LanguageModelError');
}

const textOf = (events: LlmStreamEvent[]) =>
  events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');

describe('against the local model simulator', () => {
  let simulator: LlmSimulator;
  let model: OpenAiLanguageModel;
  beforeAll(async () => {
    simulator = await startLlmSimulator({ chunkDelayMs: 40, slowMs: 1500 });
    model = new OpenAiLanguageModel({
      baseUrl: `${simulator.url}/v1`,
      model: 'simulator',
      timeouts: TIMEOUTS,
    });
  });
  afterAll(() => simulator.stop());

  test('a greeting streams back word by word, then the end with usage', async () => {
    const events = await collect(model, {
      system: 'You are a receptionist.',
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(textOf(events)).toBe(GREETING_REPLY);
    expect(events.filter((e) => e.type === 'text')).toHaveLength(GREETING_REPLY.split(' ').length);
    expect(events.at(-1)).toEqual({
      type: 'end',
      stopReason: 'end_turn',
      usage: { inputTokens: 5, outputTokens: 7 },
    });
  });

  test('a knowledge round: the search call whole, then the hit spoken', async () => {
    const said = 'Tell me about the house on Harbour Street';
    const request: LlmRequest = {
      system: 'You are an agent.',
      messages: [{ role: 'user', content: said }],
      tools: TOOLS,
    };
    const first = await collect(model, request);
    expect(first).toEqual([
      {
        type: 'tool_call',
        call: { id: expect.any(String) as string, name: 'search_knowledge', arguments: { query: said } },
      },
      { type: 'end', stopReason: 'tool_use', usage: expect.any(Object) as object },
    ]);
    const call = (first[0] as Extract<LlmStreamEvent, { type: 'tool_call' }>).call;
    const hit = {
      item_id: 'kbi_1',
      type: 'listing',
      title: '12 Harbour Street',
      passage: 'Sunny family home',
      listing: {
        external_id: 'L-1001',
        full_address: '12 Harbour Street, Manly NSW 2095',
        price_text: '$1,250,000',
        status: 'available',
        bedrooms: 3,
        bathrooms: 2,
      },
    };
    const second = await collect(model, {
      ...request,
      messages: [
        ...request.messages,
        { role: 'assistant', content: '', toolCalls: [call] },
        { role: 'tool', toolCallId: call.id, name: call.name, content: JSON.stringify({ results: [hit] }) },
      ],
    });
    expect(textOf(second)).toBe(
      "That's 12 Harbour Street, Manly NSW 2095: it is available, listed at $1,250,000. It has 3 bedrooms and 2 bathrooms.",
    );
    // The simulator saw the call and its result as OpenAI's wire shapes.
    const sent = simulator.requests().at(-1)!;
    expect(sent.messages.slice(-2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: call.id,
            type: 'function',
            function: { name: 'search_knowledge', arguments: JSON.stringify({ query: said }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: call.id, content: JSON.stringify({ results: [hit] }) },
    ]);
    const failed = await collect(model, {
      ...request,
      messages: [
        ...request.messages,
        { role: 'assistant', content: '', toolCalls: [call] },
        { role: 'tool', toolCallId: call.id, name: call.name, content: '{"error":"search failed"}' },
      ],
    });
    expect(textOf(failed)).toBe(TOOL_FAILED_REPLY);
  });

  test('goodbye: the closing words and the end_call in the same message', async () => {
    const events = await collect(model, {
      system: '',
      messages: [{ role: 'user', content: "Thanks, that's all. Bye!" }],
      tools: TOOLS,
    });
    expect(textOf(events)).toBe(GOODBYE_REPLY);
    expect(events.filter((e) => e.type === 'tool_call')).toEqual([
      {
        type: 'tool_call',
        call: {
          id: expect.any(String) as string,
          name: 'end_call',
          arguments: { reason: 'caller said goodbye' },
        },
      },
    ]);
  });

  test('structured output through complete(): response_format json_schema, a value valid for the schema', async () => {
    const completion = await model.complete({
      system: 'Analyse the call.',
      messages: [{ role: 'user', content: 'The caller wants an inspection.' }],
      responseSchema: {
        name: 'analysis',
        schema: {
          type: 'object',
          properties: {
            summary: { type: 'string' },
            sentiment: { type: 'string', enum: ['positive', 'neutral', 'negative'] },
            follow_up: { type: 'boolean' },
            score: { type: 'integer', minimum: 1 },
            callback_at: { type: ['string', 'null'] },
          },
          required: ['summary', 'sentiment', 'follow_up', 'score', 'callback_at'],
          additionalProperties: false,
        },
      },
    });
    expect(JSON.parse(completion.text)).toEqual({
      summary: 'The caller wants an inspection.',
      sentiment: 'positive',
      follow_up: false,
      score: 1,
      callback_at: null,
    });
    expect(simulator.requests().at(-1)?.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'analysis', schema: expect.any(Object) as object, strict: true },
    });
  });

  test('the simulator’s faults: a 500 is unavailable, a broken stream invalid, a slow model a timeout', async () => {
    const ask = (content: string) => ({ system: '', messages: [{ role: 'user' as const, content }] });
    expect((await failure(() => collect(model, ask('Please simulate a model error')))).kind).toBe(
      'unavailable',
    );

    const seen: LlmStreamEvent[] = [];
    const broken = await failure(async () => {
      for await (const event of model.stream(ask('simulate a broken stream'))) seen.push(event);
    });
    expect(broken.kind).toBe('invalid');
    expect(seen.length).toBeGreaterThan(0);
    expect(textOf(seen)).not.toBe(LONG_REPLY);

    const impatient = new OpenAiLanguageModel({
      baseUrl: `${simulator.url}/v1`,
      model: 'simulator',
      timeouts: { firstTokenMs: 300, totalMs: 5000 },
    });
    const started = Date.now();
    expect((await failure(() => collect(impatient, ask('simulate a slow model')))).kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1400);
  });

  test('the caller’s signal ends a long reply mid-way (aborted), and nothing more arrives', async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    const error = await failure(async () => {
      for await (const event of model.stream({
        system: '',
        messages: [{ role: 'user', content: 'Tell me everything' }],
        signal: controller.signal,
      })) {
        if (event.type === 'text') seen.push(event.text);
        if (seen.length === 5) controller.abort();
      }
    });
    expect(error.kind).toBe('aborted');
    expect(seen).toHaveLength(5);
    expect(LONG_REPLY.startsWith(seen.join(''))).toBe(true);
  });
});

describe('against a scripted server', () => {
  /** What the server writes, piece by piece (a number: wait that many ms), or a status and body. */
  type Script = { writes: (string | number | 'destroy')[] } | { status: number; body: string };
  let server: Server;
  let scripts: Script[] = [];
  let bodies: Record<string, unknown>[] = [];
  let headers: IncomingMessage['headers'][] = [];
  let model: OpenAiLanguageModel;

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
    headers.push(req.headers);
    const script = scripts.shift() ?? { status: 500, body: '{}' };
    if ('status' in script) {
      res.writeHead(script.status, { 'content-type': 'application/json' });
      res.end(script.body);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    for (const piece of script.writes) {
      if (piece === 'destroy') return void res.socket?.destroy();
      if (typeof piece === 'number') {
        await new Promise((r) => setTimeout(r, piece).unref());
        if (res.destroyed) return;
      } else res.write(piece);
    }
    res.end();
  }

  const sse = (chunk: unknown) => `data: ${JSON.stringify(chunk)}\n\n`;
  const delta = (d: Record<string, unknown>, finish: string | null = null) =>
    sse({
      id: 'c1',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta: d, finish_reason: finish }],
    });
  const toolDelta = (index: number, fn: Record<string, unknown>, id?: string) =>
    delta({ tool_calls: [{ index, ...(id ? { id, type: 'function' } : {}), function: fn }] });

  beforeAll(async () => {
    server = createServer((req, res) => {
      answer(req, res).catch(() => res.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    model = new OpenAiLanguageModel({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`,
      model: 'gpt-test',
      apiKey: 'sk-test',
      timeouts: TIMEOUTS,
    });
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    scripts = [];
    bodies = [];
    headers = [];
  });

  test('two tool calls in one turn, their arguments in odd fragments across chunks, lines split across writes', async () => {
    const stream =
      delta({ role: 'assistant', content: '' }) +
      delta({ content: 'One moment.' }) +
      toolDelta(0, { name: 'search_knowledge', arguments: '' }, 'call_A') +
      toolDelta(0, { arguments: '{"qu' }) +
      toolDelta(1, { name: 'end_call', arguments: '{' }, 'call_B') +
      toolDelta(0, { arguments: 'ery":"3 bed' }) +
      toolDelta(1, { arguments: '"reason":"do' }) +
      toolDelta(0, { arguments: 'rooms in Bondi \\"near\\" the beach"' }) +
      toolDelta(1, { arguments: 'ne"}' }) +
      toolDelta(0, { arguments: '}' }) +
      delta({}, 'tool_calls') +
      sse({ id: 'c1', choices: [], usage: { prompt_tokens: 31, completion_tokens: 17 } }) +
      'data: [DONE]\n\n';
    // The bytes arrive in pieces of 13, cutting lines, JSON and "data:" anywhere.
    const writes: string[] = [];
    for (let at = 0; at < stream.length; at += 13) writes.push(stream.slice(at, at + 13));
    scripts.push({ writes });

    const events = await collect(model, {
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Any 3 bedrooms in Bondi?' }],
      tools: TOOLS,
      maxTokens: 200,
      temperature: 0,
    });
    expect(events).toEqual([
      { type: 'text', text: 'One moment.' },
      {
        type: 'tool_call',
        call: {
          id: 'call_A',
          name: 'search_knowledge',
          arguments: { query: '3 bedrooms in Bondi "near" the beach' },
        },
      },
      { type: 'tool_call', call: { id: 'call_B', name: 'end_call', arguments: { reason: 'done' } } },
      { type: 'end', stopReason: 'tool_use', usage: { inputTokens: 31, outputTokens: 17 } },
    ]);
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toEqual({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Any 3 bedrooms in Bondi?' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      tools: TOOLS.map((tool) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.parameters },
      })),
      max_tokens: 200,
      temperature: 0,
    });
    expect(headers[0].authorization).toBe('Bearer sk-test');
  });

  test('servers that differ: a whole call without index finished as "stop", [DONE] without a finish reason', async () => {
    // Ollama's way: the call whole in one chunk, no index, the message finished as 'stop'.
    scripts.push({
      writes: [
        delta({
          tool_calls: [{ id: 'call_O', function: { name: 'end_call', arguments: '{"reason":"bye"}' } }],
        }),
        delta({}, 'stop'),
        'data: [DONE]\n\n',
      ],
    });
    expect(
      await collect(model, { system: '', messages: [{ role: 'user', content: 'bye' }], tools: TOOLS }),
    ).toEqual([
      { type: 'tool_call', call: { id: 'call_O', name: 'end_call', arguments: { reason: 'bye' } } },
      { type: 'end', stopReason: 'tool_use', usage: undefined },
    ]);
    scripts.push({ writes: [delta({ content: 'Hi.' }), 'data: [DONE]\n\n'] });
    expect(await collect(model, { system: '', messages: [{ role: 'user', content: 'hi' }] })).toEqual([
      { type: 'text', text: 'Hi.' },
      { type: 'end', stopReason: 'end_turn', usage: undefined },
    ]);
  });

  test('arguments that never parse are invalid', async () => {
    scripts.push({
      writes: [
        toolDelta(0, { name: 'search_knowledge', arguments: '{"query": "Bon' }, 'call_X'),
        delta({}, 'tool_calls'),
        'data: [DONE]\n\n',
      ],
    });
    const error = await failure(() =>
      collect(model, { system: '', messages: [{ role: 'user', content: 'x' }], tools: TOOLS }),
    );
    expect(error.kind).toBe('invalid');
  });

  test('HTTP errors: 500 and 429 unavailable, 401 and 400 refused, each with the server’s message, each asked once', async () => {
    const cases: [number, string][] = [
      [500, 'unavailable'],
      [429, 'unavailable'],
      [401, 'refused'],
      [400, 'refused'],
    ];
    for (const [status, kind] of cases) {
      bodies = [];
      scripts.push({ status, body: JSON.stringify({ error: { message: `scripted ${status}` } }) });
      const error = await failure(() =>
        collect(model, { system: '', messages: [{ role: 'user', content: 'x' }] }),
      );
      expect([error.kind, error.message]).toEqual([kind, `The model answered ${status}: scripted ${status}`]);
      expect(bodies).toHaveLength(1);
    }
  });

  test('a broken stream (the connection dropped mid-answer, or closed without finishing) is invalid, after the text sent', async () => {
    scripts.push({ writes: [delta({ content: 'Hello' }), delta({ content: ' there' }), 50, 'destroy'] });
    const seen: LlmStreamEvent[] = [];
    const error = await failure(async () => {
      for await (const event of model.stream({ system: '', messages: [{ role: 'user', content: 'x' }] }))
        seen.push(event);
    });
    expect(error.kind).toBe('invalid');
    expect(textOf(seen)).toBe('Hello there');

    scripts.push({ writes: [delta({ content: 'Hello' })] });
    expect(
      (await failure(() => collect(model, { system: '', messages: [{ role: 'user', content: 'x' }] }))).kind,
    ).toBe('invalid');
  });

  test('timeouts: no first token in time, or a stream that stalls past the whole request’s limit', async () => {
    const quick = new OpenAiLanguageModel({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      model: 'gpt-test',
      timeouts: { firstTokenMs: 200, totalMs: 600 },
    });
    scripts.push({ writes: [delta({ role: 'assistant', content: '' }), 1500, delta({ content: 'late' })] });
    let started = Date.now();
    expect(
      (await failure(() => collect(quick, { system: '', messages: [{ role: 'user', content: 'x' }] }))).kind,
    ).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(500);

    scripts.push({ writes: [delta({ content: 'early' }), 1500, delta({}, 'stop'), 'data: [DONE]\n\n'] });
    started = Date.now();
    const seen: LlmStreamEvent[] = [];
    const error = await failure(async () => {
      for await (const event of quick.stream({ system: '', messages: [{ role: 'user', content: 'x' }] }))
        seen.push(event);
    });
    expect(error.kind).toBe('timeout');
    expect(seen).toEqual([{ type: 'text', text: 'early' }]);
    expect(Date.now() - started).toBeLessThan(1200);
  });

  test('a server that cannot be reached is unavailable', async () => {
    const nowhere = new OpenAiLanguageModel({
      baseUrl: 'http://127.0.0.1:9/v1',
      model: 'm',
      timeouts: TIMEOUTS,
    });
    expect(
      (await failure(() => collect(nowhere, { system: '', messages: [{ role: 'user', content: 'x' }] })))
        .kind,
    ).toBe('unavailable');
  });
});
