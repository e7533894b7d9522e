import * as z from 'zod';
import { labelText } from '../platform/validation.js';
import { pageOf } from '../platform/pagination.js';
import { EVALUATION_STATUSES } from './entities.js';
import { schemaOnFirstUse } from '../platform/first-use.js';

/** Bounds of a run: what one request may ask the voice runtime to play. */
export const MAX_SCENARIOS = 20;
export const MAX_CALLER_LINES = 20;
export const MAX_EXPECTED = 10;
export const MAX_NAME = 100;
export const MAX_LINE = 500;
export const MAX_PHRASE = 200;
export const MAX_CRITERIA = 10;
export const MAX_CRITERION = 300;

const text = (max: number) => labelText().min(1).max(max);

export const ScenarioInput = schemaOnFirstUse(() =>
  z
    .strictObject({
      name: text(MAX_NAME),
      /** What the caller says, one line a turn (1–20 lines of 1–500 characters). */
      caller_script: z.array(text(MAX_LINE)).min(1).max(MAX_CALLER_LINES),
      /** Phrases the agent must say (1–10 of 1–200 characters; case-insensitive, anywhere in its turns). */
      expect: z.array(text(MAX_PHRASE)).min(1).max(MAX_EXPECTED).optional(),
      /**
       * Natural-language criteria the language model judges the agent's side against (1–10 of 1–300
       * characters), e.g. "offers an inspection time". A scenario needs `expect`, `criteria` or both.
       */
      criteria: z.array(text(MAX_CRITERION)).min(1).max(MAX_CRITERIA).optional(),
    })
    .refine((scenario) => scenario.expect !== undefined || scenario.criteria !== undefined, {
      message: 'a scenario needs expect phrases, criteria, or both',
      path: ['expect'],
    }),
);
export type ScenarioInput = z.infer<typeof ScenarioInput>;

export const CreateEvaluationBody = schemaOnFirstUse(() =>
  z.strictObject({
    scenarios: z.array(ScenarioInput).min(1).max(MAX_SCENARIOS),
    /** Play this version of the agent instead of its current one (404 `Agent version not found`). */
    agent_version: z
      .number()
      .int()
      .min(1)
      .max(9_999_999_999)
      .optional()
      .meta({ examples: [2] }),
  }),
);
export type CreateEvaluationBody = z.infer<typeof CreateEvaluationBody>;

const TranscriptTurnResponse = schemaOnFirstUse(() =>
  z.object({
    role: z.enum(['agent', 'user']),
    text: z.string(),
    offset_seconds: z.number(),
  }),
);

export const EvaluationResultResponse = schemaOnFirstUse(() =>
  z.object({
    /** The scenario's name. */
    scenario: z.string(),
    passed: z.boolean(),
    /** Expected phrases the agent did not say (empty when it passed). */
    missing: z.array(z.string()),
    /** Each criterion as the judge found it, with a one-line reason (empty without criteria). */
    criteria: z.array(z.object({ criterion: z.string(), passed: z.boolean(), reason: z.string() })),
    transcript: z.array(TranscriptTurnResponse),
  }),
);

export const EvaluationResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    agent_id: z.string(),
    /** The agent's version the run plays; null for runs before versions. */
    agent_version: z.number().int().nullable(),
    status: z.enum(EVALUATION_STATUSES),
    /** Scenarios in the run and how many have been judged. */
    total: z.number().int(),
    done: z.number().int(),
    /** 20 credits, charged when the run started; never refunded. */
    credits: z.number(),
    failure_reason: z.string().nullable(),
    results: z.array(EvaluationResultResponse),
    created_by: z.string(),
    created_at: z.string(),
    ended_at: z.string().nullable(),
  }),
);

export const EvaluationList = pageOf(EvaluationResponse);
