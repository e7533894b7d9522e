import {
  createServer,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec';
import { BedrockLanguageModel, CONVERSATION_OPENING } from '../../functions/providers/llm/bedrock.js';
import {
  LanguageModelError,
  type LlmRequest,
  type LlmStreamEvent,
  type LlmTool,
} from '../../functions/providers/llm/port.js';

/**
 * The Bedrock adapter against a local server that speaks ConverseStream: `POST
 * /model/{modelId}/converse-stream` answered with `application/vnd.amazon.eventstream`, each event
 * framed with the SDK's own event-stream codec (`:message-type` event, `:event-type`
 * contentBlockDelta…, `:content-type` application/json), reached through the SDK's
 * AWS_ENDPOINT_URL_BEDROCK_RUNTIME. The SDK itself decodes the frames; the adapter turns them into
 * text, whole tool calls and the end.
 */

const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);

type Frame =
  | { event: string; body: Record<string, unknown> }
  | { exception: string; body: Record<string, unknown> }
  /** The connection is destroyed here. */
  | { cut: true }
  /** Wait before the next frame. */
  | { waitMs: number };

interface Script {
  status?: number;
  errorType?: string;
  frames?: Frame[];
}

function frame(item: Exclude<Frame, { cut: true } | { waitMs: number }>): Uint8Array {
  const headers: MessageHeaders =
    'event' in item
      ? {
          ':message-type': { type: 'string' as const, value: 'event' },
          ':event-type': { type: 'string' as const, value: item.event },
          ':content-type': { type: 'string' as const, value: 'application/json' },
        }
      : {
          ':message-type': { type: 'string' as const, value: 'exception' },
          ':exception-type': { type: 'string' as const, value: item.exception },
          ':content-type': { type: 'string' as const, value: 'application/json' },
        };
  return codec.encode({ headers, body: new TextEncoder().encode(JSON.stringify(item.body)) });
}

const MODEL = 'amazon.nova-lite-v1:0';
let server: Http2Server;
const sessions = new Set<Http2Session>();
let scripts: Script[] = [];
let received: { path: string; body: Record<string, unknown> }[] = [];

async function answer(req: Http2ServerRequest, res: Http2ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  received.push({ path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
  const script = scripts.shift() ?? { frames: [] };
  if (script.status && script.status !== 200) {
    res.writeHead(script.status, {
      'content-type': 'application/json',
      'x-amzn-errortype': `${script.errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    });
    res.end(JSON.stringify({ message: `scripted ${script.errorType}` }));
    return;
  }
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
  for (const item of script.frames ?? []) {
    if ('cut' in item) {
      res.stream.close(2); // NGHTTP2_INTERNAL_ERROR: the stream breaks off
      return;
    }
    if ('waitMs' in item) {
      await new Promise((r) => setTimeout(r, item.waitMs).unref());
      if (res.destroyed) return;
      continue;
    }
    res.write(frame(item));
  }
  res.end();
}

const text = (contentBlockIndex: number, value: string): Frame => ({
  event: 'contentBlockDelta',
  body: { contentBlockIndex, delta: { text: value } },
});
const toolStart = (contentBlockIndex: number, toolUseId: string, name: string): Frame => ({
  event: 'contentBlockStart',
  body: { contentBlockIndex, start: { toolUse: { toolUseId, name } } },
});
const toolInput = (contentBlockIndex: number, input: string): Frame => ({
  event: 'contentBlockDelta',
  body: { contentBlockIndex, delta: { toolUse: { input } } },
});
const blockStop = (contentBlockIndex: number): Frame => ({
  event: 'contentBlockStop',
  body: { contentBlockIndex },
});
const messageStart: Frame = { event: 'messageStart', body: { role: 'assistant' } };
const messageStop = (stopReason: string): Frame => ({ event: 'messageStop', body: { stopReason } });
const metadata = (inputTokens: number, outputTokens: number): Frame => ({
  event: 'metadata',
  body: {
    usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
    metrics: { latencyMs: 12 },
  },
});

const SEARCH: LlmTool = {
  name: 'search_knowledge',
  description: 'Search the knowledge bases',
  parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
};

function model(timeouts = { firstTokenMs: 2000, totalMs: 5000 }) {
  return new BedrockLanguageModel({ model: MODEL, timeouts, region: 'us-east-1' });
}

async function collect(request: LlmRequest, adapter = model()): Promise<LlmStreamEvent[]> {
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

const saved = { ...process.env };
beforeAll(async () => {
  // The Bedrock runtime client speaks HTTP/2 (its default handler); over http:// that is h2c.
  server = createServer((req, res) => {
    answer(req, res).catch(() => res.stream.destroy());
  });
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  });
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
});
afterAll(async () => {
  process.env = saved;
  for (const session of sessions) session.destroy();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  scripts = [];
  received = [];
});

test('a tool round: text, toolUse fragments by block index put together into one whole call, then the answer', async () => {
  scripts.push({
    frames: [
      messageStart,
      text(0, 'Let me '),
      text(0, 'check.'),
      blockStop(0),
      toolStart(1, 'tooluse_A1', 'search_knowledge'),
      toolInput(1, '{"que'),
      toolInput(1, 'ry": "12 Harb'),
      toolInput(1, 'our St'),
      toolInput(1, 'reet"}'),
      blockStop(1),
      messageStop('tool_use'),
      metadata(40, 9),
    ],
  });
  const request: LlmRequest = {
    system: 'You are a helpful agent.',
    messages: [
      { role: 'assistant', content: 'Hello, thanks for calling.' },
      { role: 'user', content: 'Tell me about 12 Harbour Street' },
    ],
    tools: [SEARCH],
    maxTokens: 300,
    temperature: 0.2,
  };
  const events = await collect(request);
  expect(events).toEqual([
    { type: 'text', text: 'Let me ' },
    { type: 'text', text: 'check.' },
    {
      type: 'tool_call',
      call: { id: 'tooluse_A1', name: 'search_knowledge', arguments: { query: '12 Harbour Street' } },
    },
    { type: 'end', stopReason: 'tool_use', usage: { inputTokens: 40, outputTokens: 9 } },
  ]);
  expect(received).toHaveLength(1);
  expect(received[0].path).toBe(`/model/${encodeURIComponent(MODEL)}/converse-stream`);
  expect(received[0].body).toEqual({
    system: [{ text: 'You are a helpful agent.' }],
    // Converse opens with the caller: the greeting is preceded by the opening line.
    messages: [
      { role: 'user', content: [{ text: CONVERSATION_OPENING }] },
      { role: 'assistant', content: [{ text: 'Hello, thanks for calling.' }] },
      { role: 'user', content: [{ text: 'Tell me about 12 Harbour Street' }] },
    ],
    inferenceConfig: { maxTokens: 300, temperature: 0.2 },
    toolConfig: {
      tools: [
        {
          toolSpec: {
            name: 'search_knowledge',
            description: SEARCH.description,
            inputSchema: { json: SEARCH.parameters },
          },
        },
      ],
    },
  });

  // The round's second request carries the call and its result; the model speaks from it.
  scripts.push({
    frames: [
      messageStart,
      text(0, "That's 12 Harbour Street."),
      blockStop(0),
      messageStop('end_turn'),
      metadata(60, 5),
    ],
  });
  const call = (events[2] as Extract<LlmStreamEvent, { type: 'tool_call' }>).call;
  const second = await model().complete({
    ...request,
    messages: [
      ...request.messages,
      { role: 'assistant', content: 'Let me check.', toolCalls: [call] },
      { role: 'tool', toolCallId: call.id, name: call.name, content: '{"results":[]}' },
    ],
  });
  expect(second).toEqual({
    text: "That's 12 Harbour Street.",
    toolCalls: [],
    stopReason: 'end_turn',
    usage: { inputTokens: 60, outputTokens: 5 },
  });
  expect((received[1].body.messages as unknown[]).slice(3)).toEqual([
    {
      role: 'assistant',
      content: [
        { text: 'Let me check.' },
        {
          toolUse: {
            toolUseId: 'tooluse_A1',
            name: 'search_knowledge',
            input: { query: '12 Harbour Street' },
          },
        },
      ],
    },
    {
      role: 'user',
      content: [{ toolResult: { toolUseId: 'tooluse_A1', content: [{ text: '{"results":[]}' }] } }],
    },
  ]);
});

test('two tool calls in one message, each from its own block', async () => {
  scripts.push({
    frames: [
      messageStart,
      toolStart(0, 'tu_1', 'search_knowledge'),
      toolStart(1, 'tu_2', 'end_call'),
      toolInput(1, '{"reason":'),
      toolInput(0, '{"query":"Bondi"'),
      toolInput(1, '"done"}'),
      toolInput(0, '}'),
      blockStop(1),
      blockStop(0),
      messageStop('tool_use'),
    ],
  });
  const events = await collect({ system: '', messages: [{ role: 'user', content: 'hi' }], tools: [SEARCH] });
  expect(events.filter((e) => e.type === 'tool_call')).toEqual([
    { type: 'tool_call', call: { id: 'tu_2', name: 'end_call', arguments: { reason: 'done' } } },
    { type: 'tool_call', call: { id: 'tu_1', name: 'search_knowledge', arguments: { query: 'Bondi' } } },
  ]);
  expect(events.at(-1)).toEqual({ type: 'end', stopReason: 'tool_use', usage: undefined });
});

test('structured output: a forced tool whose input is the value, returned as JSON text', async () => {
  scripts.push({
    frames: [
      messageStart,
      toolStart(0, 'tu_s', 'call_analysis'),
      toolInput(0, '{"sentiment":"posi'),
      toolInput(0, 'tive","summary":"Asked about a house."}'),
      blockStop(0),
      messageStop('tool_use'),
      metadata(100, 20),
    ],
  });
  const schema = {
    type: 'object',
    properties: {
      sentiment: { type: 'string', enum: ['positive', 'neutral', 'negative'] },
      summary: { type: 'string' },
    },
    required: ['sentiment', 'summary'],
    additionalProperties: false,
  };
  const completion = await model().complete({
    system: 'Analyse the call.',
    messages: [{ role: 'user', content: 'agent: hello\ncaller: hi' }],
    responseSchema: { name: 'call_analysis', schema },
  });
  expect(JSON.parse(completion.text)).toEqual({ sentiment: 'positive', summary: 'Asked about a house.' });
  expect(completion.toolCalls).toEqual([]);
  expect(received).toHaveLength(1);
  expect(received[0].body.toolConfig).toEqual({
    tools: [
      {
        toolSpec: {
          name: 'call_analysis',
          description: expect.any(String) as string,
          inputSchema: { json: schema },
        },
      },
    ],
    toolChoice: { tool: { name: 'call_analysis' } },
  });
});

test('tool input that never parses is an answer we cannot read (invalid)', async () => {
  scripts.push({
    frames: [
      messageStart,
      toolStart(0, 'tu_x', 'search_knowledge'),
      toolInput(0, '{"query": "Bon'),
      blockStop(0),
      messageStop('tool_use'),
    ],
  });
  const error = await failure(() =>
    collect({ system: '', messages: [{ role: 'user', content: 'x' }], tools: [SEARCH] }),
  );
  expect(error.kind).toBe('invalid');
});

test('an exception event mid-stream (throttling) is unavailable, after the text already streamed', async () => {
  scripts.push({
    frames: [
      messageStart,
      text(0, 'Hello'),
      { exception: 'throttlingException', body: { message: 'slow down' } },
    ],
  });
  const seen: LlmStreamEvent[] = [];
  const error = await failure(async () => {
    for await (const event of model().stream({ system: '', messages: [{ role: 'user', content: 'x' }] }))
      seen.push(event);
  });
  expect(seen).toEqual([{ type: 'text', text: 'Hello' }]);
  expect(error.kind).toBe('unavailable');
});

test('HTTP errors: a 400 ValidationException is refused, a 500 unavailable (after the one retry)', async () => {
  scripts.push({ status: 400, errorType: 'ValidationException' });
  const refused = await failure(() => collect({ system: '', messages: [{ role: 'user', content: 'x' }] }));
  expect(refused.kind).toBe('refused');
  expect(received).toHaveLength(1);

  received = [];
  scripts.push(
    { status: 500, errorType: 'InternalServerException' },
    { status: 500, errorType: 'InternalServerException' },
  );
  const unavailable = await failure(() =>
    collect({ system: '', messages: [{ role: 'user', content: 'x' }] }),
  );
  expect(unavailable.kind).toBe('unavailable');
  expect(received).toHaveLength(2);
});

test('a stream cut before messageStop is invalid', async () => {
  scripts.push({ frames: [messageStart, text(0, 'Hello'), { cut: true }] });
  const error = await failure(() => collect({ system: '', messages: [{ role: 'user', content: 'x' }] }));
  expect(error.kind).toBe('invalid');
  scripts.push({ frames: [messageStart, text(0, 'Hello')] });
  const ended = await failure(() => collect({ system: '', messages: [{ role: 'user', content: 'x' }] }));
  expect(ended.kind).toBe('invalid');
});

test('no first token in time is a timeout; the caller’s signal ends it as aborted', async () => {
  scripts.push({ frames: [messageStart, { waitMs: 1500 }, text(0, 'late'), messageStop('end_turn')] });
  const started = Date.now();
  const timeout = await failure(() =>
    collect(
      { system: '', messages: [{ role: 'user', content: 'x' }] },
      model({ firstTokenMs: 300, totalMs: 5000 }),
    ),
  );
  expect(timeout.kind).toBe('timeout');
  expect(Date.now() - started).toBeLessThan(1400);

  scripts.push({
    frames: [messageStart, text(0, 'one'), { waitMs: 1500 }, text(0, 'two'), messageStop('end_turn')],
  });
  const controller = new AbortController();
  const seen: LlmStreamEvent[] = [];
  const aborted = await failure(async () => {
    for await (const event of model().stream({
      system: '',
      messages: [{ role: 'user', content: 'x' }],
      signal: controller.signal,
    })) {
      seen.push(event);
      controller.abort();
    }
  });
  expect(aborted.kind).toBe('aborted');
  expect(seen).toEqual([{ type: 'text', text: 'one' }]);
});
