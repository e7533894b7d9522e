import { findAgent } from '../agents/service.js';
import { planIncludes, requireFeature } from '../billing/features.js';
import { clock } from '../platform/clock.js';
import { config } from '../platform/config.js';
import { notFound, ValidationError } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { queryPage, type ListQuery, type Page } from '../platform/pagination.js';
import { isConditionFailure } from '../platform/table.js';
import { WorkflowEntity, type Workflow } from './entities.js';
import type { CreateWorkflowBody, Stages, Trigger, UpdateWorkflowBody } from './schemas.js';

/**
 * Workflows: a trigger (a workspace event, or an external POST), auto_mode, and three stages —
 * Signal (does the event matter), Task (one action) and Outcome (record the result). Runs are in
 * runs.ts. Writes need the plan feature `workflows` (402); reads do not.
 */
export const WORKFLOW_NOT_FOUND = 'Workflow not found';

/** Whether the organisation's plan includes workflows. */
export const planIncludesWorkflows = (organisationId: string): Promise<boolean> =>
  planIncludes(organisationId, 'workflows');

/** 402 `Your plan does not include workflows` unless the plan has the feature. */
export const requireWorkflowsOnPlan = (organisationId: string): Promise<void> =>
  requireFeature(organisationId, 'workflows');

export async function findWorkflow(
  workflowId: string,
  options: { consistent?: boolean } = {},
): Promise<Workflow | undefined> {
  if (!isId('workflow', workflowId)) return undefined;
  const { data } = await WorkflowEntity.get({ workflowId }).go({ consistent: options.consistent });
  return data ?? undefined;
}

/** The workflow if it is the workspace's; else 404 (another tenant's is unknown too). */
export async function requireWorkflow(
  workspaceId: string,
  workflowId: string,
  options: { consistent?: boolean } = {},
): Promise<Workflow> {
  const workflow = await findWorkflow(workflowId, options);
  if (!workflow || workflow.workspaceId !== workspaceId) throw notFound(WORKFLOW_NOT_FOUND);
  return workflow;
}

/** A call task's agent must be the workspace's: 422 on the field otherwise. */
async function checkStages(workspaceId: string, stages: Partial<Stages>): Promise<void> {
  const action = stages.task?.action;
  if (action?.type === 'call' && !(await findAgent(workspaceId, action.agent_id))) {
    throw new ValidationError([
      {
        type: 'value_error',
        loc: ['body', 'stages', 'task', 'action', 'agent_id'],
        msg: 'Value error, no agent with this id in the workspace',
        input: action.agent_id,
      },
    ]);
  }
}

const triggerFields = (trigger: Trigger) =>
  trigger.type === 'event'
    ? { triggerType: 'event' as const, triggerEvent: trigger.event }
    : { triggerType: 'external' as const, triggerEvent: undefined };

export async function createWorkflow(
  access: { workspaceId: string; organisationId: string },
  body: CreateWorkflowBody,
  createdBy: string,
): Promise<Workflow> {
  await checkStages(access.workspaceId, body.stages);
  const now = clock.now().toISOString();
  const { triggerType, triggerEvent } = triggerFields(body.trigger);
  const workflow: Workflow = {
    workflowId: newId('workflow'),
    workspaceId: access.workspaceId,
    organisationId: access.organisationId,
    name: body.name,
    triggerType,
    ...(triggerEvent ? { triggerEvent } : {}),
    autoMode: body.auto_mode,
    stages: body.stages,
    enabled: body.enabled,
    createdBy,
    createdAt: now,
    updatedAt: now,
  };
  await WorkflowEntity.create(workflow).go({ response: 'none' });
  return workflow;
}

/** The workspace's workflows, oldest first. */
export async function listWorkflows(workspaceId: string, query: ListQuery): Promise<Page<Workflow>> {
  return queryPage(query.cursor, (cursor) =>
    WorkflowEntity.query.byWorkspace({ workspaceId }).go({ count: query.limit, cursor }),
  );
}

/** The workspace's enabled workflows triggered by this event type (the event subscriber). */
export async function workflowsTriggeredBy(workspaceId: string, eventType: string): Promise<Workflow[]> {
  const { data } = await WorkflowEntity.query
    .byWorkspace({ workspaceId })
    .where((attr, op) => `${op.eq(attr.triggerEvent, eventType)} AND ${op.eq(attr.enabled, true)}`)
    .go({ pages: 'all' });
  return data;
}

/** Applies a PATCH. A change applies to runs triggered afterwards only (runs keep their snapshot). */
export async function updateWorkflow(
  workspaceId: string,
  workflowId: string,
  body: UpdateWorkflowBody,
): Promise<Workflow> {
  const current = await requireWorkflow(workspaceId, workflowId, { consistent: true });
  if (body.stages) await checkStages(workspaceId, body.stages);
  const stages: Stages = { ...(current.stages as Stages), ...(body.stages ?? {}) } as Stages;
  const next: Workflow = {
    ...current,
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.auto_mode !== undefined ? { autoMode: body.auto_mode } : {}),
    ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
    stages,
    updatedAt: clock.now().toISOString(),
  };
  if (body.trigger) {
    const { triggerType, triggerEvent } = triggerFields(body.trigger);
    next.triggerType = triggerType;
    next.triggerEvent = triggerEvent;
  }
  const { workflowId: _id, ...changes } = next;
  const patch = WorkflowEntity.patch({ workflowId }).set({
    name: changes.name,
    autoMode: changes.autoMode,
    enabled: changes.enabled,
    stages: changes.stages,
    triggerType: changes.triggerType,
    updatedAt: changes.updatedAt,
  });
  const write = changes.triggerEvent
    ? patch.set({ triggerEvent: changes.triggerEvent })
    : patch.remove(['triggerEvent']);
  try {
    await write.go({ response: 'none' });
  } catch (error) {
    // Deleted meanwhile: patch's "exists" condition.
    if (isConditionFailure(error)) throw notFound(WORKFLOW_NOT_FOUND);
    throw error;
  }
  return next;
}

/**
 * Deletes the workflow: it is triggered no more (the trigger URL answers 404) and its runs are no
 * longer listed; runs already under way finish on their snapshot.
 */
export async function deleteWorkflow(workspaceId: string, workflowId: string): Promise<void> {
  await requireWorkflow(workspaceId, workflowId, { consistent: true });
  await WorkflowEntity.delete({ workflowId }).go({ response: 'none' });
}

export function triggerUrl(workflow: Workflow): string | null {
  return workflow.triggerType === 'external'
    ? `${config().PUBLIC_BASE_URL.replace(/\/$/, '')}/api/v1/triggers/${workflow.workflowId}`
    : null;
}

export function workflowView(workflow: Workflow) {
  return {
    id: workflow.workflowId,
    workspace_id: workflow.workspaceId,
    name: workflow.name,
    trigger:
      workflow.triggerType === 'event'
        ? {
            type: 'event' as const,
            event: workflow.triggerEvent as Extract<Trigger, { type: 'event' }>['event'],
          }
        : { type: 'external' as const },
    auto_mode: workflow.autoMode,
    stages: workflow.stages as Stages,
    enabled: workflow.enabled,
    trigger_url: triggerUrl(workflow),
    created_by: workflow.createdBy,
    created_at: workflow.createdAt,
    updated_at: workflow.updatedAt,
  };
}
