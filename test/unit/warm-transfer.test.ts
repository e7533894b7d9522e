import {
  fallbackSummary,
  limitWords,
  SUMMARY_MAX_WORDS,
  writeSummary,
} from '../../functions/conversation/transfer.js';
import type { TranscriptEntry } from '../../functions/conversation/engine/model.js';
import { redactConversation, redactHandoff } from '../../functions/conversation/storage/redaction.js';
import { OpenAiLanguageModel } from '../../functions/providers/llm/openai.js';
import {
  parseTwiml,
  transferStatus,
  warmDialTwiml,
  whisperTwiml,
} from '../../functions/providers/telephony/twilio-format.js';
import { startLlmSimulator, type LlmSimulator } from '../../lib/local/simulators/llm/server.js';

/**
 * A warm transfer's pure parts: the summary's word limit and its fallback line, DialCallStatus → ours,
 * the TwiML both sides read, and the summary asked of the model simulator (its `transfer_summary`
 * rule, and the trigger that makes it fail).
 */

const turn = (role: 'agent' | 'user', text: string): TranscriptEntry => ({ role, text, offsetSeconds: 0 });

test('a summary is cut to 60 words; a cut one ends with a full stop', () => {
  const long = Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ');
  const cut = limitWords(long);
  expect(cut.split(' ')).toHaveLength(SUMMARY_MAX_WORDS);
  expect(cut.endsWith('word59.')).toBe(true);
  expect(limitWords('  A short   one. ')).toBe('A short one.');
});

test('the fallback line: the caller’s last two lines, within 60 words; none said → a plain line', () => {
  const transcript = [
    turn('agent', 'Hi, this is Ava.'),
    turn('user', 'I have a question.'),
    turn('user', 'About the house on Harbour Street.'),
    turn('agent', 'Sure.'),
    turn('user', 'Can I speak to a person?'),
  ];
  expect(fallbackSummary(transcript)).toBe(
    'A caller is being transferred to you. They said: "About the house on Harbour Street. Can I speak to a person?"',
  );
  expect(fallbackSummary([turn('agent', 'Hi.')])).toBe('A caller is being transferred to you now.');
  const rambling = [turn('user', Array.from({ length: 200 }, () => 'blah').join(' '))];
  expect(fallbackSummary(rambling).split(' ').length).toBeLessThanOrEqual(SUMMARY_MAX_WORDS);
});

test('DialCallStatus → the transfer status', () => {
  expect(
    ['completed', 'answered', 'busy', 'no-answer', 'failed', 'canceled', 'ringing', undefined].map(
      transferStatus,
    ),
  ).toEqual(['connected', 'connected', 'busy', 'no_answer', 'failed', 'failed', undefined, undefined]);
});

test('the warm dial and the whisper as the provider reads them', () => {
  const dial = parseTwiml(
    warmDialTwiml('+61491570119', 'https://x/whisper?a=1&b=2', 'https://x/status?a=1&b=2'),
  );
  expect(dial).toMatchObject({
    dial: '+61491570119',
    numberUrl: 'https://x/whisper?a=1&b=2',
    dialAction: 'https://x/status?a=1&b=2',
  });
  expect(parseTwiml(whisperTwiml('Sam <asked> "about" it', 'en-AU'))).toMatchObject({
    say: ['Sam <asked> "about" it'],
    hangup: false,
  });
});

describe('the summary asked of the model simulator', () => {
  let simulator: LlmSimulator;
  let model: OpenAiLanguageModel;
  beforeAll(async () => {
    simulator = await startLlmSimulator({ chunkDelayMs: 0, slowMs: 0 });
    model = new OpenAiLanguageModel({
      baseUrl: `${simulator.url}/v1`,
      model: 'simulator',
      timeouts: { firstTokenMs: 5_000, totalMs: 5_000 },
    });
  });
  afterAll(() => simulator.stop());

  test('the caller’s first three lines, quoted; asked as the `transfer_summary` structured output', async () => {
    const summary = await writeSummary(model, [
      turn('agent', 'Hi, this is Ava.'),
      turn('user', 'Hello.'),
      turn('user', 'I want to sell my house.'),
      turn('agent', 'Happy to help.'),
      turn('user', 'Can I speak to a person?'),
      turn('user', 'Now please.'),
    ]);
    expect(summary).toBe(
      'On this call the caller said: "Hello.", "I want to sell my house." and "Can I speak to a person?".',
    );
    const request = simulator.requests().at(-1)!;
    expect(request.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'transfer_summary' },
    });
  });

  test('the model failing: no summary (the caller then uses the fallback line)', async () => {
    const summary = await writeSummary(model, [turn('user', 'Please simulate a summary error.')]);
    expect(summary).toBeUndefined();
  });
});

test('PII redaction: the stored summary gets the tokens the stored transcript gives the same values', async () => {
  const transcript = [
    turn('agent', 'Hi, this is Ava.'),
    turn('user', 'My old email is sam at example dot com.'),
    turn('user', 'The new one is jane dot doe at example dot com, card 4111 1111 1111 1111.'),
    turn('user', 'Can I speak to a person?'),
  ];
  const redaction = { known: [], regions: ['AU'] };
  const ref = { workspaceId: 'ws_unit', callId: 'call_unit' };
  // The model wrote only the second e-mail, in another form: still the transcript's second token.
  const [summary, whisper] = await redactHandoff(ref, redaction, transcript, [
    'The caller, jane.doe@example.com, wants a person.',
    'For Riley: card 4111111111111111, jane.doe@example.com.',
  ]);
  const stored = await redactConversation(ref, redaction, { transcript, toolCalls: [], incidents: [] });
  expect(stored.transcript[2]!.text).toBe('The new one is [EMAIL_2], card [CREDIT_CARD_1].');
  expect(summary).toBe('The caller, [EMAIL_2], wants a person.');
  expect(whisper).toBe('For Riley: card [CREDIT_CARD_1], [EMAIL_2].');
});
