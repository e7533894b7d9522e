import { requireWorkspace } from '../access/workspace-access.js';
import { actorId } from '../platform/auth/principal.js';
import { notFound } from '../platform/errors.js';
import type { HttpRequest } from '../platform/http/index.js';
import type { Principal } from '../platform/auth/principal.js';
import { reviewStage, runView } from './runs.js';
import { STAGES, type StageName } from './schemas.js';
import { requireWorkflowsOnPlan } from './service.js';

const isStage = (value: string): value is StageName => (STAGES as readonly string[]).includes(value);

/** Approve or reject a stage waiting for review — workspace member; plan feature workflows. */
export async function review(req: HttpRequest<unknown, unknown, Principal>, decision: 'approve' | 'reject') {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workflows:write');
  const stage = req.params.stage;
  if (!isStage(stage)) throw notFound('Stage not found');
  await requireWorkflowsOnPlan(access.organisationId);
  const run = await reviewStage({
    workspaceId: access.workspace.workspaceId,
    workflowId: req.params.workflow_id,
    runId: req.params.run_id,
    stage,
    decision,
    reviewer: actorId(req.principal),
  });
  return { status: 200, body: runView(run) };
}
