import type { EntityItem } from 'electrodb';
import { OutboxEventEntity } from '../platform/outbox.js';
import { Entity, Service } from '../platform/entity.js';
import { gsi1, gsi2, primaryIndex } from '../platform/keys.js';
import { entityConfig } from '../platform/table.js';
import { RUN_STATUSES } from './schemas.js';

/**
 * Workflows and their runs.
 *
 * Access patterns (key → use):
 *   workflow       pk WF#<wf>   sk WF                   get by id (the external trigger knows only the id)
 *                  gsi1 WS#<ws>#WORKFLOWS / <wf>       a workspace's workflows (list; the event subscriber)
 *   run            pk WF#<wf>   sk RUN#<run>            a workflow's runs, newest first; get by id
 *   running run    gsi2 OPENRUNS#<shard> / <updated at>#<run>   the sweeper's work list: only runs in
 *                                                       `running` are in it (a sparse index: the keys are
 *                                                       removed by the write that ends or parks the run)
 *   run event key  pk WF#<wf>   sk RUNEVENT#<event id>  one run per (workflow, event): created with "does
 *                                                       not exist" in the run's transaction
 *   trigger window pk WF#<wf>   sk TRIGGERS#<window>    external triggers counted per minute (rate limit;
 *                                                       TTL)
 *
 * A run keeps a snapshot of the workflow's settings when it was triggered (auto_mode, the stages and
 * their yolo): changing the workflow afterwards changes no run. Every run write is conditioned on the
 * `version` it read, and the run's advance (functions/workflows/runs.ts) holds a lease on the run
 * (`lockToken`, `lockedUntil`) so two receives of its queue message never run a stage at once.
 */
const cfg = entityConfig();

export const WorkflowEntity = new Entity(
  {
    model: { entity: 'workflow', version: '1', service: 'va' },
    attributes: {
      workflowId: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      name: { type: 'string', required: true },
      triggerType: { type: ['event', 'external'] as const, required: true },
      /** The workspace event type, for `triggerType: event`. */
      triggerEvent: { type: 'string' },
      autoMode: { type: 'boolean', required: true },
      /** The stages as the API shows them (snake_case JSON, schemas.ts Stages). */
      stages: { type: 'any', required: true },
      enabled: { type: 'boolean', required: true },
      createdBy: { type: 'string', required: true },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string', required: true },
    },
    indexes: {
      byId: primaryIndex(['workflowId'], 'WF#${workflowId}', [], 'WF'),
      byWorkspace: gsi1(['workspaceId'], 'WS#${workspaceId}#WORKFLOWS', ['workflowId'], '${workflowId}'),
    },
  },
  cfg,
);
export type Workflow = EntityItem<typeof WorkflowEntity>;

export const WorkflowRunEntity = new Entity(
  {
    model: { entity: 'workflowRun', version: '1', service: 'va' },
    attributes: {
      workflowId: { type: 'string', required: true },
      runId: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      workflowName: { type: 'string', required: true },
      /** The triggering event: {id, type, occurred_at, data}. */
      event: { type: 'any', required: true },
      contactId: { type: 'string' },
      /** The run's shard of the sweeper's list (runShard: from the run id, fixed). */
      openShard: { type: 'number' },
      /** How often the sweeper put the run back on its queue (it gives the run up after MAX_SWEEPS). */
      sweeps: { type: 'number' },
      /** The workflow's auto_mode and stages when the run was triggered. */
      autoMode: { type: 'boolean', required: true },
      stagesConfig: { type: 'any', required: true },
      /** Per stage: {state, result?, error?, updated_at}. */
      stageStates: { type: 'any', required: true },
      status: { type: RUN_STATUSES, required: true },
      version: { type: 'number', required: true },
      lockToken: { type: 'string' },
      lockedUntil: { type: 'number' },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string', required: true },
      completedAt: { type: 'string' },
    },
    indexes: {
      byWorkflow: primaryIndex(['workflowId'], 'WF#${workflowId}', ['runId'], 'RUN#${runId}'),
      /**
       * Sparse: a write that sets the composites (every run write sets status, updatedAt and openShard
       * together: runs.ts writeRun) keeps the run here while it is `running` and takes it out otherwise.
       */
      running: {
        ...gsi2(['openShard'], 'OPENRUNS#${openShard}', ['updatedAt', 'runId'], '${updatedAt}#${runId}'),
        condition: (attr: Record<string, unknown>) => attr.status === 'running',
      },
    },
  },
  cfg,
);
export type WorkflowRun = EntityItem<typeof WorkflowRunEntity>;

/** Shards of the sweeper's list of running runs. */
export const RUN_SHARDS = 4;

/** A run's shard: from its id, so every write of the run names the same one. */
export function runShard(runId: string): number {
  let hash = 0;
  for (const char of runId) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return hash % RUN_SHARDS;
}

export const WorkflowRunEventEntity = new Entity(
  {
    model: { entity: 'workflowRunEvent', version: '1', service: 'va' },
    attributes: {
      workflowId: { type: 'string', required: true },
      eventId: { type: 'string', required: true },
      runId: { type: 'string', required: true },
      createdAt: { type: 'string', required: true },
    },
    indexes: {
      byEvent: primaryIndex(['workflowId'], 'WF#${workflowId}', ['eventId'], 'RUNEVENT#${eventId}'),
    },
  },
  cfg,
);

export const TriggerWindowEntity = new Entity(
  {
    model: { entity: 'workflowTriggerWindow', version: '1', service: 'va' },
    attributes: {
      workflowId: { type: 'string', required: true },
      /** Epoch seconds of the window's start. */
      windowStart: { type: 'number', required: true },
      count: { type: 'number', required: true },
      /** Epoch seconds; DynamoDB's TTL removes the counter after its window. */
      expiresAt: { type: 'number', required: true, field: 'expires_at' },
    },
    indexes: {
      byWindow: primaryIndex(['workflowId'], 'WF#${workflowId}', ['windowStart'], 'TRIGGERS#${windowStart}'),
    },
  },
  cfg,
);

export const workflowsService = new Service(
  {
    workflow: WorkflowEntity,
    workflowRun: WorkflowRunEntity,
    workflowRunEvent: WorkflowRunEventEntity,
    /** `workflow.completed`, recorded with the run's completing write (functions/platform/outbox.ts). */
    outboxEvent: OutboxEventEntity,
  },
  cfg,
);
