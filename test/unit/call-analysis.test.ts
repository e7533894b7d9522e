import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenAiLanguageModel } from '../../functions/providers/llm/openai.js';
import {
  analyseCall,
  boundedTranscript,
  type AnalysisInput,
} from '../../functions/post-call/call-analysis.js';
import type { TranscriptTurn } from '../../functions/post-call/analysis.js';
import { startLlmSimulator, type LlmSimulator } from '../../lib/local/simulators/llm/server.js';

/**
 * Post-call analysis against real OpenAI-compatible servers: the model simulator (its documented
 * analysis rules) and a scripted server that answers 500, or content that is not JSON, or a value
 * that breaks the schema, counting the requests it got.
 */

const turn = (role: 'agent' | 'user', text: string, offsetSeconds = 0): TranscriptTurn => ({
  role,
  text,
  offsetSeconds,
});

const input = (transcript: TranscriptTurn[], extra: Partial<AnalysisInput> = {}): AnalysisInput => ({
  transcript,
  status: 'completed',
  agentPrompt: 'You are a friendly real-estate agent. Book inspections.',
  fields: [
    { name: 'budget', type: 'number', description: 'The buyer budget' },
    { name: 'pre_approved', type: 'boolean', description: 'Finance pre-approved' },
    { name: 'suburb', type: 'string', description: 'Where they want to buy' },
    { name: 'intent', type: 'enum', description: 'What they want', enumValues: ['buy', 'sell', 'rent'] },
    { name: 'email', type: 'string', description: 'Their e-mail' },
  ],
  rules: { summary: 'Inbound call from +61491570100, completed after 1m 00s.', sentiment: 'neutral' },
  ...extra,
});

const CALL = [
  turn('agent', 'Hi, this is Riley. How can I help?'),
  turn('user', 'I want to buy a house. My budget is $900,000 and the suburb is Bondi.'),
  turn('agent', 'We have an inspection on Saturday at 10am.'),
  turn('user', 'Yes, book me in. I am pre approved too. Thanks, that is great.'),
];

let simulator: LlmSimulator;
beforeAll(async () => {
  simulator = await startLlmSimulator();
});
afterAll(() => simulator.stop());

const modelAt = (baseUrl: string) =>
  new OpenAiLanguageModel({
    baseUrl,
    model: 'simulator',
    timeouts: { firstTokenMs: 2_000, totalMs: 4_000 },
  });

interface Scripted {
  url: string;
  requests: number;
  stop(): Promise<void>;
}

async function scriptedServer(
  answer: (n: number) => { status: number; content?: string },
): Promise<Scripted> {
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const { status, content } = answer(state.requests);
      state.requests += 1;
      const body =
        status === 200
          ? {
              id: 'x',
              object: 'chat.completion',
              created: 0,
              model: 'scripted',
              choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
            }
          : { error: { message: 'scripted failure', type: 'server_error' } };
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    get requests() {
      return state.requests;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('post-call analysis by the model', () => {
  it('the simulator fills summary, success, sentiment and every custom field by its rules', async () => {
    const analysis = await analyseCall(input(CALL), modelAt(`${simulator.url}/v1`));
    expect(analysis).toEqual({
      source: 'model',
      summary:
        'The caller said: "I want to buy a house. My budget is $900,000 and the suburb is Bondi.". The agent answered: "We have an inspection on Saturday at 10am.". The caller agreed: "Yes, book me in. I am pre approved too. Thanks, that is great.".',
      call_successful: true,
      user_sentiment: 'positive',
      custom: { budget: 900000, pre_approved: true, suburb: 'Bondi', intent: 'buy', email: null },
    });
    const request = simulator.requests().at(-1)!;
    expect(request.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'call_analysis' },
    });
  });

  it('a caller who agrees to nothing: not successful, nothing agreed', async () => {
    const analysis = await analyseCall(
      input([
        turn('user', 'What is the price of the house?'),
        turn('agent', 'It is $1,250,000.'),
        turn('user', 'That is terrible.'),
      ]),
      modelAt(`${simulator.url}/v1`),
    );
    expect(analysis).toMatchObject({ source: 'model', call_successful: false, user_sentiment: 'negative' });
    expect(analysis.summary).toContain('Nothing was agreed.');
  });

  it('the model answering 500: the rules answer at once (source rules), no retry', async () => {
    const server = await scriptedServer(() => ({ status: 500 }));
    try {
      const analysis = await analyseCall(input(CALL), modelAt(server.url));
      expect(analysis).toEqual({
        source: 'rules',
        summary: 'Inbound call from +61491570100, completed after 1m 00s.',
        call_successful: true,
        user_sentiment: 'neutral',
        custom: { budget: null, pre_approved: null, suburb: null, intent: null, email: null },
      });
      // A model fault is not retried: asked exactly once.
      expect(server.requests).toBe(1);
    } finally {
      await server.stop();
    }
  });

  it('a bug of ours (a programming error, not the model) is not hidden behind the rules: it surfaces under test', async () => {
    const broken = {
      ...modelAt('http://127.0.0.1:9/v1'),
      complete: () => Promise.reject(new TypeError("Cannot read properties of undefined (reading 'text')")),
    } as unknown as Parameters<typeof analyseCall>[1];
    await expect(analyseCall(input(CALL), broken)).rejects.toThrow(TypeError);
  });

  it('invalid JSON twice: asked exactly twice, then the rules', async () => {
    const server = await scriptedServer(() => ({ status: 200, content: 'not json {' }));
    try {
      const analysis = await analyseCall(input(CALL), modelAt(server.url));
      expect(analysis.source).toBe('rules');
      expect(server.requests).toBe(2);
    } finally {
      await server.stop();
    }
  });

  it('an invalid answer once, then a valid one: the retry is used', async () => {
    const valid = JSON.stringify({
      summary: 'The caller booked an inspection.',
      call_successful: true,
      user_sentiment: 'positive',
      custom: { budget: 900000, pre_approved: true, suburb: 'Bondi', intent: 'buy', email: null },
    });
    // The first answer breaks the schema (an enum value not allowed), the second is valid.
    const broken = valid.replace('"buy"', '"lease"');
    const server = await scriptedServer((n) => ({ status: 200, content: n === 0 ? broken : valid }));
    try {
      const analysis = await analyseCall(input(CALL), modelAt(server.url));
      expect(analysis).toMatchObject({ source: 'model', summary: 'The caller booked an inspection.' });
      expect(server.requests).toBe(2);
    } finally {
      await server.stop();
    }
  });

  it('the simulator triggers: an analysis error and invalid output fall back to the rules', async () => {
    const model = modelAt(`${simulator.url}/v1`);
    const error = await analyseCall(input([turn('user', 'Please simulate an analysis error now.')]), model);
    const invalid = await analyseCall(input([turn('user', 'Please simulate invalid analysis now.')]), model);
    expect(error.source).toBe('rules');
    expect(invalid.source).toBe('rules');
  });

  it('a transcript over the budget is cut from the middle, and the request says so', async () => {
    const long = Array.from({ length: 400 }, (_, i) =>
      turn(i % 2 ? 'agent' : 'user', `Line number ${i} ${'blah '.repeat(20)}`),
    );
    const bounded = boundedTranscript(long, 24_000);
    expect(bounded.cut).toBeGreaterThan(0);
    expect(bounded.text.length).toBeLessThanOrEqual(24_000 + 100);
    expect(bounded.text.startsWith('Caller: Line number 0 ')).toBe(true);
    expect(bounded.text).toContain('Line number 399 ');
    expect(bounded.text).toContain(`[… ${bounded.cut} turns cut from the middle of the call …]`);
    await analyseCall(input(long), modelAt(`${simulator.url}/v1`));
    const request = simulator.requests().at(-1)!;
    const system = request.messages.find((m) => m.role === 'system')!.content as string;
    expect(system).toContain(`${bounded.cut} turns were cut from its middle`);
    expect(JSON.stringify(request.messages).length).toBeLessThan(40_000);
  });
});
