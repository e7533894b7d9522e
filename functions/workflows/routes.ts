import { defineRoute } from '../platform/http/route.js';
import * as pagination from '../platform/pagination.js';
import * as workflows from './schemas.js';

const WORKFLOWS = '/api/v1/workspaces/{workspace_id}/workflows';
const WORKFLOW = `${WORKFLOWS}/{workflow_id}`;
const RUNS = `${WORKFLOW}/runs`;
const RUN = `${RUNS}/{run_id}`;

/**
 * Workflows and their runs (plan feature `workflows`: writes are 402 without it; reads are not).
 * Dashboard users only (any workspace role reads, members and admins write); an API key is refused
 * (403) except on the external trigger, which takes only an API key of the workflow's workspace with
 * scope `workflows:trigger`.
 */
export const workflowRoutes = {
  createWorkflow: defineRoute({
    method: 'POST',
    path: WORKFLOWS,
    summary: 'Create a workflow',
    description:
      'Create a workflow: a trigger (a workspace event, or external), auto_mode, and the stages Signal ' +
      '(conditions on the event and the contact), Task (one action) and Outcome (member; plan feature workflows)',
    auth: 'user',
    body: workflows.CreateWorkflowBody,
    response: workflows.WorkflowResponse,
    errors: { 402: 'Your plan does not include workflows' },
    access: { table: 'readwrite' },
  }),
  listWorkflows: defineRoute({
    method: 'GET',
    path: WORKFLOWS,
    summary: 'List workflows',
    description: 'The workspace’s workflows, oldest first (viewer)',
    auth: 'user',
    query: pagination.ListQuery,
    response: workflows.WorkflowList,
    access: { table: 'readwrite' },
  }),
  getWorkflow: defineRoute({
    method: 'GET',
    path: WORKFLOW,
    summary: 'Get a workflow',
    description: 'A workflow (viewer)',
    auth: 'user',
    response: workflows.WorkflowResponse,
    access: { table: 'readwrite' },
  }),
  updateWorkflow: defineRoute({
    method: 'PATCH',
    path: WORKFLOW,
    summary: 'Update a workflow',
    description:
      'Change a workflow; enabled: false disables it (no new runs), true enables it. A stage given replaces ' +
      'that stage. Changes apply to runs triggered afterwards: a run keeps the settings it was triggered with (member)',
    auth: 'user',
    body: workflows.UpdateWorkflowBody,
    response: workflows.WorkflowResponse,
    errors: { 402: 'Your plan does not include workflows' },
    access: { table: 'readwrite' },
  }),
  deleteWorkflow: defineRoute({
    method: 'DELETE',
    path: WORKFLOW,
    summary: 'Delete a workflow',
    description:
      'Delete a workflow: no new runs, its runs are no longer shown, its trigger URL answers 404 (member)',
    auth: 'user',
    successStatus: 204,
    errors: { 402: 'Your plan does not include workflows' },
    access: { table: 'readwrite' },
  }),
  listWorkflowRuns: defineRoute({
    method: 'GET',
    path: RUNS,
    summary: "List a workflow's runs",
    description:
      'The workflow’s runs, newest first; status filters (a filtered page may be short, even empty, with a ' +
      'next_cursor) (viewer)',
    auth: 'user',
    query: workflows.RunListQuery,
    response: workflows.RunList,
    access: { table: 'readwrite' },
  }),
  getWorkflowRun: defineRoute({
    method: 'GET',
    path: RUN,
    summary: 'Get a workflow run',
    description:
      'A run: its event, status and each stage’s state (pending, waiting_review, approved, rejected, done, ' +
      'failed, skipped), result and error (viewer)',
    auth: 'user',
    response: workflows.RunResponse,
    access: { table: 'readwrite' },
  }),
  approveWorkflowStage: defineRoute({
    method: 'POST',
    path: `${RUN}/stages/{stage}/approve`,
    summary: "Approve a run's stage",
    description:
      'Approve the stage waiting for review (signal, task or outcome): it runs, on the queue. 409 when the ' +
      'stage is not waiting_review (approved already, not reached, or the run ended) (member)',
    auth: 'user',
    response: workflows.RunResponse,
    successStatus: 200,
    errors: {
      402: 'Your plan does not include workflows',
      409: 'The stage is not waiting for review',
    },
    access: { table: 'readwrite', sendsTo: ['workflowRuns'] },
  }),
  rejectWorkflowStage: defineRoute({
    method: 'POST',
    path: `${RUN}/stages/{stage}/reject`,
    summary: "Reject a run's stage",
    description:
      'Reject the stage waiting for review: the run ends rejected and its later stages are skipped; 409 when ' +
      'the stage is not waiting_review (member)',
    auth: 'user',
    response: workflows.RunResponse,
    successStatus: 200,
    errors: {
      402: 'Your plan does not include workflows',
      409: 'The stage is not waiting for review',
    },
    access: { table: 'readwrite' },
  }),
  triggerWorkflow: defineRoute({
    method: 'POST',
    path: '/api/v1/triggers/{workflow_id}',
    summary: 'Trigger an external workflow',
    description:
      'Trigger an external workflow: API key of the workflow’s workspace with scope workflows:trigger (another ' +
      'workspace’s key, or a user, 403); body = the event payload, a JSON object of at most 64 KB (else 422, ' +
      '413). 404 for an unknown or deleted workflow, 409 when it is disabled or not external, 402 without the ' +
      'plan feature, 429 with Retry-After past 60 triggers a minute per workflow. Idempotency-Key: the same ' +
      'key answers the first run again → 202 {id, run_id}',
    auth: 'api_key',
    scope: 'workflows:trigger',
    body: workflows.TriggerBody,
    response: workflows.TriggerResponse,
    successStatus: 202,
    errors: {
      402: 'Your plan does not include workflows',
      409: 'The workflow is disabled, or not triggered externally',
      413: 'The payload is over 64 KB',
      429: 'More than 60 triggers a minute for this workflow (Retry-After)',
    },
    access: { table: 'readwrite', sendsTo: ['workflowRuns'] },
  }),
};
