import * as z from 'zod';
import { boundedTranscript } from '../post-call/call-analysis.js';
import type { TranscriptTurn } from '../post-call/analysis.js';
import { languageModel, LanguageModelError, type LanguageModelPort } from '../providers/llm/index.js';
import { logger } from '../platform/logger.js';

/**
 * The evaluation judge: one structured request to the language model per scenario with criteria
 * (natural language, e.g. "offers an inspection time") gives each criterion pass/fail and a one-line
 * reason. Invalid output is asked for once more; invalid twice fails every criterion with a reason
 * saying so (the run still ends). A model that errs throws: the queue plays the scenario again.
 */

export interface CriterionVerdict {
  criterion: string;
  passed: boolean;
  reason: string;
}

export const JUDGEMENT_SCHEMA_NAME = 'evaluation_judgement';
const MAX_REASON = 300;

function judgementSchema(count: number): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['results'],
    properties: {
      results: {
        type: 'array',
        minItems: count,
        maxItems: count,
        description: 'One verdict per criterion, in the order given',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['passed', 'reason'],
          properties: {
            passed: { type: 'boolean' },
            reason: { type: 'string', description: 'One line: why it passed or failed' },
          },
        },
      },
    },
  };
}

const SYSTEM = [
  'You judge a test conversation between an AI phone agent and a caller against criteria.',
  "For each numbered criterion, in order, say whether the agent's side of the conversation meets it",
  '(passed: true or false) and give a one-line reason quoting what was or was not said. Answer with',
  `one JSON value matching the schema '${JUDGEMENT_SCHEMA_NAME}'.`,
].join(' ');

export async function judgeCriteria(
  criteria: readonly string[],
  transcript: readonly TranscriptTurn[],
  model: LanguageModelPort = languageModel(),
): Promise<CriterionVerdict[]> {
  if (criteria.length === 0) return [];
  const { text, cut } = boundedTranscript(transcript);
  const validator = z.object({
    results: z
      .array(z.object({ passed: z.boolean(), reason: z.string().trim().min(1) }))
      .length(criteria.length),
  });
  const request = {
    system:
      cut > 0 ? `${SYSTEM} The transcript was too long: ${cut} turns were cut from its middle.` : SYSTEM,
    messages: [
      {
        role: 'user' as const,
        content: `Criteria:\n${criteria.map((c, i) => `${i + 1}. ${c}`).join('\n')}\n\nThe conversation:\n${text}`,
      },
    ],
    responseSchema: { name: JUDGEMENT_SCHEMA_NAME, schema: judgementSchema(criteria.length) },
    temperature: 0,
    maxTokens: 200 + 120 * criteria.length,
  };
  for (let attempt = 1; attempt <= 2; attempt += 1) {
    let value: unknown;
    try {
      value = JSON.parse((await model.complete(request)).text);
    } catch (error) {
      if (error instanceof LanguageModelError && error.kind !== 'invalid') throw error;
      value = undefined; // not JSON: invalid output
    }
    const parsed = validator.safeParse(value);
    if (parsed.success)
      return parsed.data.results.map((verdict, i) => ({
        criterion: criteria[i],
        passed: verdict.passed,
        reason: verdict.reason.replace(/\s+/g, ' ').slice(0, MAX_REASON),
      }));
    logger.warn('the model answered an invalid judgement', { attempt });
  }
  return criteria.map((criterion) => ({
    criterion,
    passed: false,
    reason: 'The judge (the language model) gave no valid answer twice.',
  }));
}
