import { domainHandler } from '../platform/http/index.js';
import { workflowRoutes } from './routes.js';

/** The workflows domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(workflowRoutes, {
  createWorkflow: () => import('./handlers/create-workflow.js'),
  listWorkflows: () => import('./handlers/list-workflows.js'),
  getWorkflow: () => import('./handlers/get-workflow.js'),
  updateWorkflow: () => import('./handlers/update-workflow.js'),
  deleteWorkflow: () => import('./handlers/delete-workflow.js'),
  listWorkflowRuns: () => import('./handlers/list-workflow-runs.js'),
  getWorkflowRun: () => import('./handlers/get-workflow-run.js'),
  approveWorkflowStage: () => import('./handlers/approve-workflow-stage.js'),
  rejectWorkflowStage: () => import('./handlers/reject-workflow-stage.js'),
  triggerWorkflow: () => import('./handlers/trigger-workflow.js'),
});
