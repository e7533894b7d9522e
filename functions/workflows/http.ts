import { domainHandler } from '../platform/http/index.js';
import { workflowRoutes } from './routes.js';
import { handler as createWorkflow } from './handlers/create-workflow.js';
import { handler as listWorkflows } from './handlers/list-workflows.js';
import { handler as getWorkflow } from './handlers/get-workflow.js';
import { handler as updateWorkflow } from './handlers/update-workflow.js';
import { handler as deleteWorkflow } from './handlers/delete-workflow.js';
import { handler as listWorkflowRuns } from './handlers/list-workflow-runs.js';
import { handler as getWorkflowRun } from './handlers/get-workflow-run.js';
import { handler as approveWorkflowStage } from './handlers/approve-workflow-stage.js';
import { handler as rejectWorkflowStage } from './handlers/reject-workflow-stage.js';
import { handler as triggerWorkflow } from './handlers/trigger-workflow.js';

/** The workflows domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(workflowRoutes, {
  createWorkflow,
  listWorkflows,
  getWorkflow,
  updateWorkflow,
  deleteWorkflow,
  listWorkflowRuns,
  getWorkflowRun,
  approveWorkflowStage,
  rejectWorkflowStage,
  triggerWorkflow,
});
