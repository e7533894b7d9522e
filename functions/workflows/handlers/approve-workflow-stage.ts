import { implement } from '../../platform/http/index.js';
import { workflowRoutes } from '../routes.js';
import { review } from '../review.js';

/** POST …/workflows/{workflow_id}/runs/{run_id}/stages/{stage}/approve — the stage then runs, on the queue. */
export const handler = implement(workflowRoutes.approveWorkflowStage, (req) => review(req, 'approve'));
