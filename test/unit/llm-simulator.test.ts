import {
  DEFAULT_BEDROCK_MODEL,
  languageModel,
  setLanguageModel,
} from '../../functions/providers/llm/index.js';
import { startLlmSimulator, type LlmSimulator } from '../../lib/local/simulators/llm/server.js';
import type {
  ChatCompletionRequest,
  ChatMessage,
  ChatTool,
} from '../../lib/local/simulators/llm/protocol.js';
import {
  ENDED_REPLY,
  GOODBYE_REPLY,
  GREETING_REPLY,
  LONG_REPLY,
  simulateReply,
  TOOL_DONE_REPLY,
  TRANSFER_REPLY,
  TRANSFERRED_REPLY,
} from '../../lib/local/simulators/llm/replies.js';
import { answerStructured } from '../../lib/local/simulators/llm/structured.js';
import { NO_ANSWER_REPLY, NOTHING_FOUND_REPLY } from '../../lib/local/simulators/llm/wording.js';

/**
 * The model simulator's rules (server.ts lists them), in their order of precedence, and its protocol
 * over HTTP: OpenAI's chunk and completion shapes, `[DONE]`, `GET /v1/models`, 400 for a bad body.
 */

const tool = (name: string): ChatTool => ({
  type: 'function',
  function: { name, parameters: { type: 'object' } },
});
const ALL_TOOLS = [tool('end_call'), tool('transfer_call'), tool('search_knowledge')];
const PROMPT =
  'You are Sam, an agent for Harbour Realty. The property at 12 Harbour Street, Manly is listed at $1,250,000. ' +
  'Open inspections are held every Saturday at 10am. Our office is closed on public holidays.';

function ask(line: string, tools: ChatTool[] = ALL_TOOLS, system = PROMPT): ChatCompletionRequest {
  return {
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: line },
    ],
    tools,
  };
}

describe('the rules, in order', () => {
  test.each([
    // b. goodbye wins over a property question in the same line
    ['Thanks, bye! The house on Harbour Street was nice', ALL_TOOLS, GOODBYE_REPLY, ['end_call']],
    // c. a person
    ['Can I speak to a manager please?', ALL_TOOLS, TRANSFER_REPLY, ['transfer_call']],
    ['Just transfer me', ALL_TOOLS, TRANSFER_REPLY, ['transfer_call']],
    // d. a property, when the search is offered: a tool call, no text
    ['Is the house on Harbour Street still for sale?', ALL_TOOLS, '', ['search_knowledge']],
    // e. the price from the prompt, when no search is offered
    [
      'How much is it?',
      [tool('end_call')],
      'The property at 12 Harbour Street, Manly is listed at $1,250,000.',
      [],
    ],
    ['What does it cost?', [], 'It is listed at $900k.', [], 'You are an agent. The price is $900k.'],
    // f. a key press
    ['The caller pressed the key "5".', ALL_TOOLS, 'You pressed 5.', []],
    // g. a greeting only
    ['Hi there!', ALL_TOOLS, GREETING_REPLY, []],
    // h. the closest sentence, or none
    ['When are the inspections?', ALL_TOOLS, 'Open inspections are held every Saturday at 10am.', []],
    ['Do you like jazz?', ALL_TOOLS, NO_ANSWER_REPLY, []],
    // goodbye and a person without their tools fall through to the later rules
    ['bye', [], NO_ANSWER_REPLY, []],
    ['Can I talk to a person?', [tool('end_call')], NO_ANSWER_REPLY, []],
  ] as [string, ChatTool[], string, string[], string?][])('%s', (...row) => {
    const [line, tools, text, calls, system] = row;
    const reply = simulateReply(ask(line, tools, typeof system === 'string' ? system : PROMPT));
    expect(reply.text).toBe(text);
    expect(reply.toolCalls.map((c) => c.name)).toEqual(calls);
    if (calls[0] === 'search_knowledge') expect(reply.toolCalls[0].arguments).toEqual({ query: line });
    if (calls[0] === 'end_call')
      expect(reply.toolCalls[0].arguments).toEqual({ reason: 'caller said goodbye' });
  });

  test('a: tool results are spoken, whatever the caller said before them', () => {
    const after = (name: string, content: string): ChatCompletionRequest => ({
      messages: [
        { role: 'system', content: PROMPT },
        { role: 'user', content: 'bye, what about 3 Ocean Road?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name, arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content },
      ],
      tools: ALL_TOOLS,
    });
    const document = {
      results: [
        { item_id: 'kbi_2', type: 'document', title: 'Strata rules', passage: 'No pets above level 2.' },
      ],
    };
    expect(simulateReply(after('search_knowledge', JSON.stringify(document))).text).toBe(
      'From "Strata rules": No pets above level 2.',
    );
    expect(simulateReply(after('search_knowledge', '{"results":[]}')).text).toBe(NOTHING_FOUND_REPLY);
    expect(simulateReply(after('transfer_call', '{"ok":true}')).text).toBe(TRANSFERRED_REPLY);
    expect(simulateReply(after('end_call', '{"ok":true}')).text).toBe(ENDED_REPLY);
    expect(simulateReply(after('book_inspection', '{"ok":true}')).text).toBe(TOOL_DONE_REPLY);
    expect(simulateReply(after('search_knowledge', 'Tool failed: {"error": "timeout"}')).text).toBe(
      "I'm sorry, I couldn't look that up just now.",
    );
    for (const request of [after('search_knowledge', '{"results":[]}')])
      expect(simulateReply(request).toolCalls).toEqual([]);
  });

  test('test triggers come before the rules', () => {
    expect(simulateReply(ask('bye, simulate a model error')).fault).toBe('error');
    expect(simulateReply({ messages: [{ role: 'user', content: 42 }] } as never).text).toBe(NO_ANSWER_REPLY);
    expect(simulateReply(ask('simulate a broken stream')).fault).toBe('broken');
    expect(simulateReply(ask('simulate a slow model')).slow).toBe(true);
    const long = simulateReply(ask('Tell me everything about Harbour Street'));
    expect([long.text, long.paced]).toEqual([LONG_REPLY, true]);
    expect(LONG_REPLY.split(' ').length).toBeGreaterThanOrEqual(55);
  });
});

test('structured output: a value for the schema, following $refs, nullable and enums', () => {
  const value = answerStructured({
    messages: [
      { role: 'system', content: 'Judge the call.' },
      { role: 'user', content: 'Caller: I want to book an inspection.' },
    ],
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: 'verdict',
        schema: {
          type: 'object',
          $defs: { outcome: { type: 'string', enum: ['booked', 'declined'] } },
          properties: {
            passed: { type: 'boolean' },
            reason: { type: 'string', maxLength: 12 },
            outcome: { $ref: '#/$defs/outcome' },
            code: { type: 'string', minLength: 3 },
            items: { type: 'array', minItems: 2, items: { type: 'number' } },
            note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
            other: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
          },
        },
        strict: true,
      },
    },
  } as ChatCompletionRequest);
  expect(value).toEqual({
    passed: false,
    reason: 'Caller: I wa',
    outcome: 'booked',
    code: '---',
    items: [0, 0],
    note: 'Caller: I want to book an inspection.',
    other: null,
  });
});

interface Chunk {
  choices: { delta: { content?: string; tool_calls?: unknown[] } }[];
}

describe('over HTTP', () => {
  let simulator: LlmSimulator;
  beforeAll(async () => {
    simulator = await startLlmSimulator({ chunkDelayMs: 0, slowMs: 0 });
  });
  afterAll(() => simulator.stop());

  const post = (body: unknown) =>
    fetch(`${simulator.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  test('a streamed reply: a role chunk, a chunk a word, tool-call fragments, finish, usage, [DONE]', async () => {
    const response = await post({ ...ask('Goodbye'), stream: true, model: 'anything' });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const lines = (await response.text()).split('\n\n').filter(Boolean);
    expect(lines.at(-1)).toBe('data: [DONE]');
    const chunks = lines.slice(0, -1).map((line) => JSON.parse(line.replace(/^data: /, '')) as Chunk);
    for (const chunk of chunks)
      expect(chunk).toMatchObject({ object: 'chat.completion.chunk', model: 'anything' });
    const deltas = chunks.flatMap(
      (c: { choices: { delta: { content?: string; tool_calls?: unknown[] } }[] }) =>
        c.choices.map((choice) => choice.delta),
    );
    expect(deltas[0]).toEqual({ role: 'assistant', content: '' });
    expect(deltas.flatMap((d) => (d.content ? [d.content] : []))).toEqual([
      'Thank',
      ' you',
      ' for',
      ' calling.',
      ' Goodbye!',
    ]);
    const fragments = deltas.flatMap((d) => (d.tool_calls ?? []) as { function: { arguments: string } }[]);
    expect(fragments.length).toBeGreaterThan(2);
    expect(JSON.parse(fragments.map((f) => f.function.arguments).join(''))).toEqual({
      reason: 'caller said goodbye',
    });
    expect(chunks.at(-2)).toMatchObject({ choices: [{ delta: {}, finish_reason: 'tool_calls' }] });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 35, completion_tokens: 8 } });
  });

  test('a whole reply, the same twice (deterministic), and the models list', async () => {
    const request = ask('When are the inspections?');
    const first = (await (await post(request)).json()) as Record<string, unknown>;
    const second = (await (await post(request)).json()) as Record<string, unknown>;
    const stable = ({ id: _id, created: _created, ...rest }: Record<string, unknown>) => rest;
    expect(stable(first)).toEqual(stable(second));
    expect(stable(first)).toEqual({
      object: 'chat.completion',
      model: 'simulator',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Open inspections are held every Saturday at 10am.',
            refusal: null,
          },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 38, completion_tokens: 8, total_tokens: 46 },
    });
    const models = await (await fetch(`${simulator.url}/v1/models`)).json();
    expect(models).toEqual({
      object: 'list',
      data: [{ id: 'simulator', object: 'model', created: 0, owned_by: 'local-simulator' }],
    });
  });

  test('a bad body is a 400 in OpenAI’s error shape; an unknown path a 404; nothing is recorded', async () => {
    const before = simulator.requests().length;
    for (const body of [
      {},
      { messages: [] },
      { messages: [{ role: 'robot', content: 'x' }] },
      { messages: [{ role: 'user', content: 42 }] },
    ]) {
      const response = await post(body);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    }
    const notJson = await fetch(`${simulator.url}/v1/chat/completions`, { method: 'POST', body: '{' });
    expect(notJson.status).toBe(400);
    expect((await fetch(`${simulator.url}/v1/embeddings`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect(simulator.requests()).toHaveLength(before);
  });

  test('"simulate a model error" is a 500 with {error: {message}}', async () => {
    const response = await post({ ...ask('simulate a model error'), stream: true });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({
      error: { message: expect.any(String) as string, type: 'server_error' },
    });
  });
});

describe('languageModel() from the environment', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
    setLanguageModel(undefined);
  });

  test.each([
    [{ STAGE: 'local' }, 'openai', 'gpt-4o-mini'],
    [{ STAGE: 'cloud' }, 'bedrock', DEFAULT_BEDROCK_MODEL],
    [{ STAGE: 'cloud', LLM_MODEL: 'eu.amazon.nova-lite-v1:0' }, 'bedrock', 'eu.amazon.nova-lite-v1:0'],
    [{ STAGE: 'local', LLM_PROVIDER: 'bedrock', LLM_BASE_URL: '' }, 'bedrock', DEFAULT_BEDROCK_MODEL],
    [
      {
        STAGE: 'cloud',
        LLM_PROVIDER: 'openai',
        LLM_BASE_URL: 'http://127.0.0.1:11434/v1',
        LLM_MODEL: 'llama3.2',
      },
      'openai',
      'llama3.2',
    ],
  ] as [Record<string, string>, string, string][])('%j → %s %s', (env, provider, model) => {
    for (const name of ['LLM_PROVIDER', 'LLM_MODEL', 'LLM_BASE_URL', 'LLM_API_KEY']) delete process.env[name];
    Object.assign(process.env, env);
    setLanguageModel(undefined);
    const port = languageModel();
    expect([port.provider, port.model]).toEqual([provider, model]);
    expect(languageModel()).toBe(port);
  });

  test('a provider that does not exist is refused at the first use', () => {
    process.env.LLM_PROVIDER = 'gemini';
    setLanguageModel(undefined);
    expect(() => languageModel()).toThrow();
  });
});

// The rule's list in messages is typed as the wire's; keep the helpers honest.
const _typed: ChatMessage = { role: 'user', content: 'x' };
void _typed;
