import { renderTemplate } from '../agents/template.js';
import { CallEntity } from '../calling/entities.js';
import { readCall } from '../calling/lifecycle.js';
import { logger } from '../platform/logger.js';
import { REDACTION_FAILED } from '../platform/pii/categories.js';
import { errorName, surfaceProgrammingErrorInTests } from '../platform/programming-errors.js';
import type { LanguageModelPort } from '../providers/llm/port.js';
import type { ConversationSetup, TranscriptEntry } from './engine/model.js';
import { redactHandoff } from './storage/redaction.js';
import { callKey } from '../calling/call-shards.js';

/**
 * The handoff of a transfer (the model called `transfer_call`), recorded on the call before the relay
 * session ends — the `<Connect action>` (calling/relay-ended.ts) dials from what is stored here.
 * Cold: the number. Warm: also a summary of the call so far, written by the model now (the same model
 * port, at most SUMMARY_MAX_WORDS words, within SUMMARY_TIMEOUT_MS), so the person dialled never waits
 * on the model; and the whisper they will hear first (the agent's `whisper` with `{{summary}}` and the
 * call's parameters filled, else the summary). The model failing (an error, no answer in time, an
 * answer that is not the summary) gives a fallback line built from the transcript: the transfer goes on.
 * With PII redaction on, the summary and whisper are stored with tokens (docs/pii-redaction.md).
 */

export const SUMMARY_MAX_WORDS = 60;
/**
 * The summary's whole request: a turn may run to its 24 s deadline (engine/turn.ts) and the relay's
 * function has 28 s, so the `end` after it is still sent when the model does not answer.
 */
export const SUMMARY_TIMEOUT_MS = 3_000;
/** The structured output's name (the local model simulator answers it by rule: docs/language-model.md). */
export const SUMMARY_SCHEMA_NAME = 'transfer_summary';

const SUMMARY_SYSTEM = [
  'A phone call is being transferred from an AI agent to a person at the business.',
  `Write what the person hears before they are connected: in at most ${SUMMARY_MAX_WORDS} words, who is calling and what they want, from the conversation below.`,
  'Plain spoken sentences, no lists, no greeting. Never invent details that were not said.',
].join(' ');

/** Cuts a text to `max` words (a cut text ends with a full stop). */
export function limitWords(text: string, max = SUMMARY_MAX_WORDS): string {
  const words = text.replace(/\s+/g, ' ').trim().split(' ').filter(Boolean);
  if (words.length <= max) return words.join(' ');
  return `${words
    .slice(0, max)
    .join(' ')
    .replace(/[,;:]$/, '')}.`.replace(/([.!?])\.$/, '$1');
}

const lines = (transcript: TranscriptEntry[]) =>
  transcript.map((turn) => `${turn.role === 'user' ? 'Caller' : 'Agent'}: ${turn.text}`).join('\n');

/**
 * The summary when the model could not write it: what the caller said last (their last two lines),
 * within SUMMARY_MAX_WORDS words. Deterministic.
 */
export function fallbackSummary(transcript: TranscriptEntry[]): string {
  const said = transcript
    .filter((turn) => turn.role === 'user' && turn.text.trim() !== '')
    .slice(-2)
    .map((turn) => turn.text.replace(/\s+/g, ' ').trim());
  if (said.length === 0) return 'A caller is being transferred to you now.';
  const intro = 'A caller is being transferred to you. They said: ';
  const budget = SUMMARY_MAX_WORDS - intro.split(' ').filter(Boolean).length;
  return `${intro}"${limitWords(said.join(' '), budget)}"`;
}

/** The model's summary of the call so far; undefined when it failed. */
export async function writeSummary(
  model: LanguageModelPort,
  transcript: TranscriptEntry[],
  timeoutMs = SUMMARY_TIMEOUT_MS,
): Promise<string | undefined> {
  try {
    const completion = await model.complete({
      system: SUMMARY_SYSTEM,
      messages: [{ role: 'user', content: `Conversation:\n${lines(transcript)}` }],
      maxTokens: 200,
      temperature: 0,
      responseSchema: {
        name: SUMMARY_SCHEMA_NAME,
        schema: {
          type: 'object',
          properties: { summary: { type: 'string', description: 'What the person hears first.' } },
          required: ['summary'],
          additionalProperties: false,
        },
      },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const parsed = JSON.parse(completion.text) as { summary?: unknown };
    const summary = typeof parsed.summary === 'string' ? limitWords(parsed.summary) : '';
    return summary === '' ? undefined : summary;
  } catch (error) {
    logger.warn('transfer summary not written by the model; the fallback line is used', {
      error: errorName(error),
    });
    return undefined;
  }
}

/**
 * Records the transfer on the call (before the relay session's `end`): `agentEnded`, the number and
 * `transfer` — for a warm one the summary and the whisper.
 */
export async function recordHandoff(input: {
  setup: ConversationSetup;
  transcript: TranscriptEntry[];
  transferTo: string;
  mode: 'cold' | 'warm';
  model: LanguageModelPort;
}): Promise<void> {
  const { setup, transferTo, mode } = input;
  const key = callKey(setup.workspaceId, setup.callId);
  if (mode === 'cold') {
    await CallEntity.patch(key)
      .set({ agentEnded: 'transfer', transferTo, transfer: { mode: 'cold', to: transferTo } })
      .go({ response: 'none' });
    return;
  }
  const [written, call] = await Promise.all([
    writeSummary(input.model, input.transcript),
    readCall(setup.workspaceId, setup.callId),
  ]);
  const summary = written ?? fallbackSummary(input.transcript);
  const parameters = (call?.parameters ?? {}) as Record<string, string>;
  const whisper =
    (setup.transferWhisper ? renderTemplate(setup.transferWhisper, { ...parameters, summary }).trim() : '') ||
    summary;
  // PII redaction on: the call stores the summary and whisper with tokens; the person dialled hears
  // the real values (`liveWhisper`, gone once the dial ended: calling/transfer.ts, lifecycle.ts).
  // The redaction failing (the contact's read) stores no text, never the raw one: the transfer goes on.
  const [storedSummary, storedWhisper] = setup.redaction
    ? await redactHandoff(setup, setup.redaction, input.transcript, [summary, whisper]).catch(
        (error: unknown) => {
          surfaceProgrammingErrorInTests(error);
          logger.error('transfer summary not redacted; stored as [REDACTION_FAILED]', {
            callId: setup.callId,
            error: errorName(error),
          });
          return [REDACTION_FAILED, REDACTION_FAILED];
        },
      )
    : [summary, whisper];
  await CallEntity.patch(key)
    .set({
      agentEnded: 'transfer',
      transferTo,
      transfer: { mode: 'warm', to: transferTo, summary: storedSummary!, whisper: storedWhisper! },
      ...(setup.redaction ? { liveWhisper: whisper } : {}),
    })
    .go({ response: 'none' });
  logger.info('warm transfer handed off', {
    callId: setup.callId,
    summaryBy: written ? 'model' : 'fallback',
    words: summary.split(' ').length,
  });
}
