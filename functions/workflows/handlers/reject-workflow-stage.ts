import { implement } from '../../platform/http/index.js';
import { workflowRoutes } from '../routes.js';
import { review } from '../review.js';

/** POST …/workflows/{workflow_id}/runs/{run_id}/stages/{stage}/reject — the run ends rejected. */
export const handler = implement(workflowRoutes.rejectWorkflowStage, (req) => review(req, 'reject'));
