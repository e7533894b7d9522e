import * as z from 'zod';
import { languageModel, LanguageModelError, type LanguageModelPort } from '../providers/llm/index.js';
import { logger } from '../platform/logger.js';
import { errorName, surfaceProgrammingErrorInTests } from '../platform/programming-errors.js';
import type { SentimentLabel, TranscriptTurn } from './analysis.js';

/**
 * Post-call analysis by the language model: one structured request per call (a JSON schema; the
 * answer validated with zod, asked once more when it is not valid) gives the call's summary, whether
 * it succeeded (against the agent's `success_criteria`, else its goal: its prompt), the caller's
 * sentiment and the agent's `analysis_fields`. When the model errs, times out or answers invalid
 * output twice, today's rules answer instead (`source: rules`): the call is never held up or lost.
 * Free: nothing here is charged.
 */

export interface AnalysisField {
  name: string;
  type: 'string' | 'number' | 'boolean' | 'enum';
  description: string;
  enumValues?: string[];
}

export type CustomValue = string | number | boolean | null;

export interface CallAnalysis {
  source: 'model' | 'rules';
  summary: string;
  call_successful: boolean;
  user_sentiment: SentimentLabel;
  custom: Record<string, CustomValue>;
}

export interface AnalysisInput {
  transcript: readonly TranscriptTurn[];
  status: 'completed' | 'failed';
  /** The agent's prompt: its goal when it sets no success criteria. */
  agentPrompt: string;
  successCriteria?: string;
  fields: readonly AnalysisField[];
  /** Today's rule-based results: the fallback. */
  rules: { summary: string; sentiment: SentimentLabel };
}

/** The transcript's share of a request, in characters (about 6,000 tokens). */
export const MAX_TRANSCRIPT_CHARS = 24_000;
/** The goal or criteria the model is given, in characters. */
const MAX_GOAL_CHARS = 4_000;
export const ANALYSIS_SCHEMA_NAME = 'call_analysis';

/** A call had a conversation when the other party said something. */
export const hadConversation = (transcript: readonly TranscriptTurn[]): boolean =>
  transcript.some((turn) => turn.role === 'user' && turn.text.trim() !== '');

const lineOf = (turn: TranscriptTurn) => `${turn.role === 'user' ? 'Caller' : 'Agent'}: ${turn.text}`;

/**
 * The transcript as lines, cut from the middle when longer than `budget` characters: the opening
 * and the close of a call say most (what was asked, what was agreed). `cut` counts the turns left out.
 */
export function boundedTranscript(
  transcript: readonly TranscriptTurn[],
  budget = MAX_TRANSCRIPT_CHARS,
): { text: string; cut: number } {
  const lines = transcript.map(lineOf);
  const total = lines.reduce((sum, line) => sum + line.length + 1, 0);
  if (total <= budget) return { text: lines.join('\n'), cut: 0 };
  const head: string[] = [];
  const tail: string[] = [];
  let used = 0;
  let i = 0;
  let j = lines.length - 1;
  // Alternate from both ends so the opening and the close get an equal share.
  while (i <= j) {
    const fromHead = head.length <= tail.length;
    const line = fromHead ? lines[i] : lines[j];
    const clipped = line.length + 1 > budget / 2 ? `${line.slice(0, Math.floor(budget / 2) - 2)}…` : line;
    if (used + clipped.length + 1 > budget) break;
    used += clipped.length + 1;
    if (fromHead) {
      head.push(clipped);
      i += 1;
    } else {
      tail.unshift(clipped);
      j -= 1;
    }
  }
  const cut = lines.length - head.length - tail.length;
  return { text: [...head, `[… ${cut} turns cut from the middle of the call …]`, ...tail].join('\n'), cut };
}

function customSchema(field: AnalysisField): Record<string, unknown> {
  const description = field.description;
  switch (field.type) {
    case 'string':
      return { type: ['string', 'null'], description };
    case 'number':
      return { type: ['number', 'null'], description };
    case 'boolean':
      return { type: ['boolean', 'null'], description };
    case 'enum':
      return { type: ['string', 'null'], enum: [...(field.enumValues ?? []), null], description };
  }
}

/** The JSON schema of the answer (OpenAI strict mode: every property required, no others). */
export function analysisSchema(fields: readonly AnalysisField[]): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['summary', 'call_successful', 'user_sentiment', 'custom'],
    properties: {
      summary: { type: 'string', description: '2-4 sentences: what the caller asked and what was agreed' },
      call_successful: { type: 'boolean', description: 'whether the call met the success criteria' },
      user_sentiment: { type: 'string', enum: ['positive', 'neutral', 'negative'] },
      custom: {
        type: 'object',
        additionalProperties: false,
        required: fields.map((f) => f.name),
        properties: Object.fromEntries(fields.map((f) => [f.name, customSchema(f)])),
      },
    },
  };
}

function customValidator(field: AnalysisField): z.ZodType<CustomValue> {
  switch (field.type) {
    case 'string':
      return z.string().max(2_000).nullable();
    case 'number':
      return z.number().finite().nullable();
    case 'boolean':
      return z.boolean().nullable();
    case 'enum':
      return z.enum((field.enumValues ?? ['']) as [string, ...string[]]).nullable();
  }
}

function answerValidator(fields: readonly AnalysisField[]) {
  return z.object({
    summary: z.string().trim().min(1).max(2_000),
    call_successful: z.boolean(),
    user_sentiment: z.enum(['positive', 'neutral', 'negative']),
    custom: z.object(Object.fromEntries(fields.map((f) => [f.name, customValidator(f)]))),
  });
}

function systemPrompt(input: AnalysisInput, cut: number): string {
  const goal = input.successCriteria?.trim()
    ? `The call is successful when: ${input.successCriteria.trim().slice(0, MAX_GOAL_CHARS)}`
    : `The call is successful when it achieved the agent's goal. The agent's instructions were:\n${input.agentPrompt.trim().slice(0, MAX_GOAL_CHARS) || '(none)'}`;
  const fields = input.fields.length
    ? `Fill "custom" with these fields, each from what was said in the call, or null when the call did not say:\n${input.fields
        .map(
          (f) =>
            `- ${f.name} (${f.type}${f.type === 'enum' ? `: one of ${(f.enumValues ?? []).join(', ')}` : ''}): ${f.description}`,
        )
        .join('\n')}`
    : 'Leave "custom" empty ({}).';
  return [
    "You analyse a phone call between an AI agent and a caller. Answer with one JSON value matching the schema 'call_analysis'.",
    '"summary": 2 to 4 sentences saying what the caller asked and what was agreed.',
    `"call_successful": true or false. ${goal}`,
    '"user_sentiment": how the caller felt: positive, neutral or negative.',
    fields,
    cut > 0
      ? `The transcript was too long: ${cut} turns were cut from its middle (marked in the text); judge from the rest.`
      : '',
  ]
    .filter(Boolean)
    .join('\n\n');
}

/** Today's rules: the extractive summary, the word-list sentiment, success when the call completed. */
export function rulesAnalysis(input: AnalysisInput): CallAnalysis {
  return {
    source: 'rules',
    summary: input.rules.summary,
    call_successful: input.status === 'completed' && input.rules.sentiment !== 'negative',
    user_sentiment: input.rules.sentiment,
    custom: Object.fromEntries(input.fields.map((f) => [f.name, null])),
  };
}

/** Tries the model (once more on invalid output), else the rules. Never throws for the model's faults. */
export async function analyseCall(
  input: AnalysisInput,
  model: LanguageModelPort = languageModel(),
): Promise<CallAnalysis> {
  const { text, cut } = boundedTranscript(input.transcript);
  const validator = answerValidator(input.fields);
  const request = {
    system: systemPrompt(input, cut),
    messages: [{ role: 'user' as const, content: `The call's transcript:\n${text}` }],
    responseSchema: { name: ANALYSIS_SCHEMA_NAME, schema: analysisSchema(input.fields) },
    temperature: 0,
    maxTokens: 1_000,
  };
  for (let attempt = 1; attempt <= 2; attempt += 1) {
    try {
      const completion = await model.complete(request);
      let value: unknown;
      try {
        value = JSON.parse(completion.text);
      } catch {
        value = undefined;
      }
      const parsed = validator.safeParse(value);
      if (parsed.success) {
        const answer = parsed.data;
        return {
          source: 'model',
          summary: answer.summary,
          call_successful: answer.call_successful,
          user_sentiment: answer.user_sentiment,
          custom: Object.fromEntries(input.fields.map((f) => [f.name, answer.custom[f.name] ?? null])),
        };
      }
      logger.warn('the model answered an invalid call analysis', { attempt });
    } catch (error) {
      // An answer the adapter could not read (not JSON) is invalid output: asked once more.
      if (error instanceof LanguageModelError && error.kind === 'invalid') {
        logger.warn('the model answered an unreadable call analysis', { attempt });
        continue;
      }
      // Any other fault of the model (or of its configuration) falls back: the call is never held up.
      if (error instanceof LanguageModelError) {
        logger.warn('the model failed the call analysis; the rules answer', { kind: error.kind });
        return rulesAnalysis(input);
      }
      // Not the model's fault: a bug of ours fails the tests; in service it is logged and the rules answer.
      surfaceProgrammingErrorInTests(error);
      logger.error('the call analysis failed unexpectedly; the rules answer', {
        error: errorName(error),
        stack: error instanceof Error ? error.stack?.split('\n').slice(1, 5).join(' | ') : undefined,
      });
      return rulesAnalysis(input);
    }
  }
  return rulesAnalysis(input);
}
