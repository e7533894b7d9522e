import { domainHandler } from '../platform/http/index.js';
import { evaluationRoutes } from './routes.js';
import { handler as createEvaluation } from './handlers/create-evaluation.js';
import { handler as listEvaluations } from './handlers/list-evaluations.js';
import { handler as getEvaluation } from './handlers/get-evaluation.js';
import { handler as cancelEvaluation } from './handlers/cancel-evaluation.js';

/** The evaluations domain's one HTTP function. */
export const handler = domainHandler(evaluationRoutes, {
  createEvaluation,
  listEvaluations,
  getEvaluation,
  cancelEvaluation,
});
