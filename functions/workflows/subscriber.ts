import type { EventSubscriber } from '../platform/workspace-events.js';
import { startRun } from './runs.js';
import { WORKFLOW_TRIGGER_EVENTS } from './schemas.js';
import { planIncludesWorkflows, workflowsTriggeredBy } from './service.js';

/**
 * Workflows react to workspace events: each enabled workflow of the event's workspace triggered by
 * its type gets one run per event id (startRun's conditional put: a redelivered event makes no second
 * run). Nothing runs while the organisation's plan lacks workflows.
 */
export const workflowEventSubscriber: EventSubscriber = {
  name: 'workflows',
  types: [...WORKFLOW_TRIGGER_EVENTS],
  async handle(event) {
    const workflows = await workflowsTriggeredBy(event.workspaceId, event.type);
    if (workflows.length === 0) return;
    if (!(await planIncludesWorkflows(event.organisationId))) return;
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
