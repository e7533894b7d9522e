import { defineRoute } from '../platform/http/route.js';
import { ListQuery } from '../platform/pagination.js';
import * as evaluations from './schemas.js';

const EVALUATIONS = '/api/v1/workspaces/{workspace_id}/agents/{agent_id}/evaluations';
const EVALUATION = `${EVALUATIONS}/{evaluation_id}`;

/**
 * Agent evaluations: scenarios played as scripted calls through the conversation engine (no phone),
 * each judged against its expected phrases. 20 credits, charged in the transaction that creates the
 * run (402 when short), never refunded (not even on cancel).
 */
export const evaluationRoutes = {
  createEvaluation: defineRoute({
    method: 'POST',
    path: EVALUATIONS,
    summary: 'Create an evaluation',
    description:
      'Start an evaluation run: 1–20 scenarios {name, caller_script: 1–20 lines, expect: 1–10 phrases}; charges 20 ' +
      'credits at start (402 Insufficient credits); a scenario passes when every expected phrase appears ' +
      '(case-insensitive) in the agent’s turns (member)',
    auth: 'user_or_api_key',
    scope: 'agents:write',
    body: evaluations.CreateEvaluationBody,
    response: evaluations.EvaluationResponse,
    errors: { 402: 'Insufficient credits' },
    access: { table: 'readwrite', sendsTo: ['evaluations'] },
  }),
  listEvaluations: defineRoute({
    method: 'GET',
    path: EVALUATIONS,
    summary: 'List evaluations',
    description: 'The agent’s evaluation runs, newest first, with their results (viewer)',
    auth: 'user_or_api_key',
    scope: 'agents:read',
    query: ListQuery,
    response: evaluations.EvaluationList,
    access: { table: 'readwrite' },
  }),
  getEvaluation: defineRoute({
    method: 'GET',
    path: EVALUATION,
    summary: 'Get an evaluation',
    description: 'An evaluation run: status, progress and each judged scenario with its transcript (viewer)',
    auth: 'user_or_api_key',
    scope: 'agents:read',
    response: evaluations.EvaluationResponse,
    access: { table: 'readwrite' },
  }),
  cancelEvaluation: defineRoute({
    method: 'POST',
    path: `${EVALUATION}/cancel`,
    summary: 'Cancel an evaluation',
    description:
      'Stop a running evaluation: scenarios not yet played are not played; the 20 credits are not refunded; ' +
      '409 when it has ended (member)',
    auth: 'user_or_api_key',
    scope: 'agents:write',
    response: evaluations.EvaluationResponse,
    successStatus: 200,
    errors: { 409: 'The evaluation has ended' },
    access: { table: 'readwrite' },
  }),
};
