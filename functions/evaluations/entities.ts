import type { EntityItem } from 'electrodb';
import { Entity } from '../platform/entity.js';
import { primaryIndex } from '../platform/keys.js';
import { entityConfig } from '../platform/table.js';

/**
 * Agent evaluations. Access patterns:
 *   evaluation run     pk WS#<ws>#EVALUATIONS   sk AGENT#<ag>#EVAL#<evl>   (get; an agent's runs, newest first —
 *                                                                         evaluation ids are ULIDs)
 *   scenario result    pk EVAL#<evl>            sk SCENARIO#<nn>           (one per scenario, created once with a
 *                                                                         condition: a redelivered message judges
 *                                                                         nothing twice)
 *   dispatch marker    pk EVALDISPATCH          sk <created at>#<evl>      (written with the charge, marked when the
 *                                                                         scenario messages went out, dropped by the
 *                                                                         sweeper once the run ended: its list of
 *                                                                         runs whose messages may not have arrived)
 */
const cfg = entityConfig();

export const EVALUATION_STATUSES = ['running', 'completed', 'cancelled', 'failed'] as const;
export type EvaluationStatus = (typeof EVALUATION_STATUSES)[number];

export const EvaluationEntity = new Entity(
  {
    model: { entity: 'evaluation', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      agentId: { type: 'string', required: true },
      evaluationId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      /** The agent's version the run plays (agents/versions.ts); absent on runs before versions. */
      agentVersion: { type: 'number' },
      status: { type: EVALUATION_STATUSES, required: true },
      /** The scenarios as sent, JSON: `[{name, caller_script, expect}]`. */
      scenarios: { type: 'string', required: true },
      total: { type: 'number', required: true },
      /** Scenarios judged (results written); the run completes when it reaches `total`. */
      done: { type: 'number', required: true, default: 0 },
      failureReason: { type: 'string' },
      createdBy: { type: 'string', required: true },
      createdAt: { type: 'string', required: true },
      endedAt: { type: 'string' },
      updatedAt: { type: 'string' },
    },
    indexes: {
      byAgent: primaryIndex(
        ['workspaceId'],
        'WS#${workspaceId}#EVALUATIONS',
        ['agentId', 'evaluationId'],
        'AGENT#${agentId}#EVAL#${evaluationId}',
      ),
    },
  },
  cfg,
);

const transcriptTurn = {
  type: 'map',
  properties: {
    role: { type: ['agent', 'user'] as const, required: true },
    text: { type: 'string', required: true },
    offsetSeconds: { type: 'number', required: true },
  },
} as const;

export const EvaluationResultEntity = new Entity(
  {
    model: { entity: 'evaluationResult', version: '1', service: 'va' },
    attributes: {
      evaluationId: { type: 'string', required: true },
      index: { type: 'number', required: true },
      workspaceId: { type: 'string', required: true },
      scenario: { type: 'string', required: true },
      passed: { type: 'boolean', required: true },
      /** Expected phrases the agent never said. */
      missing: { type: 'list', items: { type: 'string' }, required: true },
      /** The criteria as the judge (the language model) found them; absent on scenarios without. */
      criteria: {
        type: 'list',
        items: {
          type: 'map',
          properties: {
            criterion: { type: 'string', required: true },
            passed: { type: 'boolean', required: true },
            reason: { type: 'string', required: true },
          },
        },
      },
      transcript: { type: 'list', items: transcriptTurn, required: true },
      providerCallId: { type: 'string' },
      durationSeconds: { type: 'number' },
      createdAt: { type: 'string', required: true },
    },
    indexes: {
      byEvaluation: primaryIndex(['evaluationId'], 'EVAL#${evaluationId}', ['index'], 'SCENARIO#${index}'),
    },
  },
  cfg,
);

export type Evaluation = EntityItem<typeof EvaluationEntity>;
export type EvaluationResult = EntityItem<typeof EvaluationResultEntity>;

export const EvaluationDispatchEntity = new Entity(
  {
    model: { entity: 'evaluationDispatch', version: '1', service: 'va' },
    attributes: {
      createdAt: { type: 'string', required: true },
      evaluationId: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
      agentId: { type: 'string', required: true },
      /** When the scenario messages last went out (absent: never, the start stopped after the charge). */
      sentAt: { type: 'string' },
      /** How often the sweeper sent them again. */
      resends: { type: 'number' },
    },
    indexes: {
      byCreation: primaryIndex(
        [],
        'EVALDISPATCH',
        ['createdAt', 'evaluationId'],
        '${createdAt}#${evaluationId}',
      ),
    },
  },
  cfg,
);
export type EvaluationDispatch = EntityItem<typeof EvaluationDispatchEntity>;
