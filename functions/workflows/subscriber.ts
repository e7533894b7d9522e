import { isId } from '../platform/ids.js';
import type { EventSubscriber } from '../platform/workspace-events.js';
import { WORKFLOW_TRIGGER_EVENTS } from './schemas.js';
import { planIncludesWorkflows, workflowsTriggeredBy } from './service.js';

/**
 * Workflows react to workspace events: each enabled workflow of the event's workspace triggered by
 * its type gets one run per event id (startRun's conditional put: a redelivered event makes no second
 * run). Nothing runs while the organisation's plan lacks workflows. A call placed by a workflow's task
 * triggers no workflow when it ends: a call.ended workflow that calls would otherwise call forever.
 */
export const workflowEventSubscriber: EventSubscriber = {
  name: 'workflows',
  types: [...WORKFLOW_TRIGGER_EVENTS],
  async handle(event) {
    const workflows = await workflowsTriggeredBy(event.workspaceId, event.type);
    if (workflows.length === 0) return;
    if (!(await planIncludesWorkflows(event.organisationId))) return;
    if (event.type === 'call.ended' && (await placedByWorkflow(event.workspaceId, event.data.call_id)))
      return;
    // A run's code is loaded by the first event a workflow of this container's workspaces reacts to.
    const { startRun } = await import('./runs.js');
    for (const workflow of workflows) {
      await startRun(workflow, {
        id: event.id,
        type: event.type,
        occurred_at: event.occurredAt,
        data: event.data,
      });
    }
  },
};

async function placedByWorkflow(workspaceId: string, callId: unknown): Promise<boolean> {
  if (typeof callId !== 'string') return false;
  const { getCallFacts } = await import('../calling/call-log.js');
  const call = await getCallFacts(workspaceId, callId);
  return call !== undefined && isId('workflow', call.createdBy);
}
