import { domainHandler } from '../platform/http/index.js';
import { evaluationRoutes } from './routes.js';

/** The evaluations domain's one HTTP function. */
export const handler = domainHandler(evaluationRoutes, {
  createEvaluation: () => import('./handlers/create-evaluation.js'),
  listEvaluations: () => import('./handlers/list-evaluations.js'),
  getEvaluation: () => import('./handlers/get-evaluation.js'),
  cancelEvaluation: () => import('./handlers/cancel-evaluation.js'),
});
