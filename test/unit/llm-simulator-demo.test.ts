import { renderTemplate } from '../../functions/agents/template.js';
import { analyseCall } from '../../functions/post-call/call-analysis.js';
import type { TranscriptTurn } from '../../functions/post-call/analysis.js';
import { OpenAiLanguageModel } from '../../functions/providers/llm/openai.js';
import type { ChatCompletionRequest } from '../../lib/local/simulators/llm/protocol.js';
import { simulateReply } from '../../lib/local/simulators/llm/replies.js';
import { startLlmSimulator, type LlmSimulator } from '../../lib/local/simulators/llm/server.js';
import { NO_ANSWER_REPLY } from '../../lib/local/simulators/llm/wording.js';
import { DEMO_PROMPT } from '../../lib/tools/cli/seed.js';

/**
 * The demo agent (`npm run cli -- seed`) as a newcomer hears it from the model simulator: it answers
 * from the facts of its prompt and the call's parameters, never reads an instruction aloud, never says
 * a sentence with a hole where a parameter was empty, says it does not know what it does not, and the
 * analysis summarises what was asked and answered.
 */

const LISTING = {
  name: 'Sam',
  listing_id: 'L-1001',
  listing_address: '12 Harbour Street, Manly',
  listing_price: '$1,250,000',
};
const withListing = renderTemplate(DEMO_PROMPT, LISTING);
const noParameters = renderTemplate(DEMO_PROMPT, {});
const END_CALL = { type: 'function' as const, function: { name: 'end_call', parameters: {} } };

const reply = (system: string, line: string) =>
  simulateReply({
    model: 'simulator',
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: line },
    ],
    tools: [END_CALL],
  } as ChatCompletionRequest).text;

/** What no reply may contain: the prompt's instructions and framing, or the holes of empty parameters. */
const NEVER = [/quote that price/i, /when asked/i, /on a call to/i, /\bat\s*[,.:]/, /\bto about\b/, /:\s*$/];

const LINES = [
  'Hi, yes. What is this about?',
  'Which property is it, and what is the price?',
  'How much is it?',
  'Where is it?',
  'Do you have any houses in Manly?',
  'Any homes in Bondi?',
  'When are the open homes?',
  'Hi, I was hoping to get some information.',
];

describe('the demo agent with a listing in its parameters', () => {
  it('says why it calls, which property, and the price, as facts', () => {
    expect(reply(withListing, 'Hi, yes. What is this about?')).toBe(
      "I'm calling about the property at 12 Harbour Street, Manly, listed at $1,250,000.",
    );
    expect(reply(withListing, 'Which property is it, and what is the price?')).toBe(
      'The property at 12 Harbour Street, Manly is listed at $1,250,000.',
    );
    expect(reply(withListing, 'Where is it?')).toBe(
      "It's the property at 12 Harbour Street, Manly, listed at $1,250,000.",
    );
  });

  it('answers a suburb it knows from its prompt, and says it does not know another (no listing tool)', () => {
    expect(reply(withListing, 'Do you have any houses in Manly?')).toBe(
      'The property at 12 Harbour Street, Manly is listed at $1,250,000.',
    );
    expect(reply(withListing, 'Any homes in Bondi?')).toBe(NO_ANSWER_REPLY);
    expect(reply(withListing, 'When are the open homes?')).toBe(
      'Open homes are on Saturdays from 10am, and inspections can be booked on any weekday.',
    );
  });

  it('never reads an instruction aloud', () => {
    for (const line of LINES)
      for (const never of NEVER)
        expect([line, reply(withListing, line)]).not.toEqual([line, expect.stringMatching(never)]);
  });
});

describe('the demo agent without parameters', () => {
  it('says it does not know rather than a sentence with holes', () => {
    expect(noParameters).toContain('listed at'); // the template's holes are there to be avoided
    expect(reply(noParameters, 'Hi, yes. What is this about?')).toBe(NO_ANSWER_REPLY);
    expect(reply(noParameters, 'Which property is it, and what is the price?')).toBe(NO_ANSWER_REPLY);
    expect(reply(noParameters, 'Do you have any houses in Manly?')).toBe(NO_ANSWER_REPLY);
    expect(reply(noParameters, 'When are the open homes?')).toBe(
      'Open homes are on Saturdays from 10am, and inspections can be booked on any weekday.',
    );
    for (const line of LINES)
      for (const never of NEVER)
        expect([line, reply(noParameters, line)]).not.toEqual([line, expect.stringMatching(never)]);
  });

  it('is deterministic', () => {
    for (const line of LINES) expect(reply(noParameters, line)).toBe(reply(noParameters, line));
  });
});

describe("the demo call's analysis", () => {
  let simulator: LlmSimulator;
  beforeAll(async () => {
    simulator = await startLlmSimulator();
  });
  afterAll(() => simulator.stop());

  it('summarises what was asked and answered; a "Hi, yes." agrees to nothing', async () => {
    // The telephony simulator's default outbound caller, answered by the demo agent.
    const said = [
      'Hi, yes. What is this about?',
      'Which property is it, and what is the price?',
      "Thanks, that's all I needed. Goodbye.",
    ];
    const transcript: TranscriptTurn[] = [{ role: 'agent', text: 'Hi Sam!', offsetSeconds: 0 }];
    for (const line of said) {
      transcript.push({ role: 'user', text: line, offsetSeconds: transcript.length });
      transcript.push({ role: 'agent', text: reply(withListing, line), offsetSeconds: transcript.length });
    }
    const model = new OpenAiLanguageModel({
      baseUrl: `${simulator.url}/v1`,
      model: 'simulator',
      timeouts: { firstTokenMs: 2_000, totalMs: 4_000 },
    });
    const analysis = await analyseCall(
      {
        transcript,
        status: 'completed',
        agentPrompt: withListing,
        fields: [],
        rules: { summary: 'Outbound call.', sentiment: 'neutral' },
      },
      model,
    );
    expect(analysis.summary).toBe(
      'The caller asked: "What is this about?" The agent answered: "I\'m calling about the property at 12 Harbour Street, Manly, listed at $1,250,000.". ' +
        'The caller asked: "Which property is it, and what is the price?" The agent answered: "The property at 12 Harbour Street, Manly is listed at $1,250,000.". ' +
        'Nothing was agreed.',
    );
    expect(analysis.call_successful).toBe(false);
  });
});
