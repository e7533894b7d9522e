import { createHash, randomUUID } from 'node:crypto';
import { clock } from '../platform/clock.js';
import { conflict, notFound } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { queryPage, type Page } from '../platform/pagination.js';
import { sendMessage } from '../platform/queue.js';
import type { WorkflowRunMessage } from '../platform/queue-messages.js';
import { isConditionFailure } from '../platform/table.js';
import { outboxRecord, publishRecorded, publishRecordedById, type OutboxRecord } from '../platform/outbox.js';
import type { NewWorkspaceEvent } from '../platform/workspace-events.js';
import { evaluateAll } from './conditions.js';
import {
  runShard,
  WorkflowRunEntity,
  WorkflowRunEventEntity,
  workflowsService,
  type Workflow,
  type WorkflowRun,
} from './entities.js';
import {
  STAGES,
  type RunListQuery,
  type RunStatus,
  type StageName,
  type StageState,
  type Stages,
} from './schemas.js';
import { requireWorkflow } from './service.js';
import { describeResult, loadFacts, runTask, TaskFailed, type TaskResult } from './tasks.js';

/**
 * Workflow runs. A run is made once per (workflow, event id) — a conditional put of the run's event
 * key in the run's transaction — with a snapshot of the workflow's auto_mode and stages, and advances
 * on the `workflowRuns` queue, never inside a request:
 *
 *   Signal   evaluates its conditions on the event and the contact; no match → the run completes with
 *            the later stages skipped. A match continues.
 *   Task     performs its one action through the owning service (start-call, SMS, email, contacts).
 *   Outcome  records the result on the contact (a note) and the run, and emits `workflow.completed`.
 *
 * A stage runs alone only when its snapshot says `yolo` AND the run was triggered with auto_mode on;
 * otherwise it waits in `waiting_review` until `…/stages/{stage}/approve` (then it runs, on the queue)
 * or `…/reject` (the run ends `rejected`). A task whose action fails is recorded (`failed`, with the
 * error) and ends the run `failed`.
 *
 * Exactly once: every run write is conditioned on the version it read; the advance holds a lease on
 * the run, so two receives of one message never run a stage together. A task's input is recorded
 * before it runs and its result id (call, SMS, email, note) in the write that marks it done; the call,
 * the SMS and the email carry an idempotency key of the run, so a retry after a crash between the
 * action and that write gets the same call or message back instead of a second one. A note (add_note,
 * the Outcome's) has its id recorded the same way and is created once (notes.ts). A run whose message
 * was lost or dead-lettered is put back on the queue by the scheduled sweeper (sweeper.ts).
 */
export const RUN_NOT_FOUND = 'Run not found';
const LEASE_MS = 60_000;

export interface RunEvent {
  id: string;
  type: string;
  occurred_at: string;
  data: Record<string, unknown>;
}

export interface StageRecord {
  state: StageState;
  result?: Record<string, unknown>;
  error?: string;
  reviewed_by?: string;
  /** The task's input, fixed before it runs: a retry sends exactly the same request. */
  prepared?: Record<string, unknown>;
  updated_at: string | null;
}
export type StageRecords = Record<StageName, StageRecord>;

const initialStages = (): StageRecords => ({
  signal: { state: 'pending', updated_at: null },
  task: { state: 'pending', updated_at: null },
  outcome: { state: 'pending', updated_at: null },
});

export const advanceMessage = (
  run: Pick<WorkflowRun, 'workspaceId' | 'workflowId' | 'runId'>,
): WorkflowRunMessage => ({
  type: 'workflow.run.advance',
  workspace_id: run.workspaceId,
  workflow_id: run.workflowId,
  run_id: run.runId,
});

/** The event id of an external trigger: the caller's Idempotency-Key names it, else a new one. */
export function externalEventId(keyId: string, idempotencyKey: string | undefined): string {
  if (!idempotencyKey) return newId('event');
  const digest = createHash('sha256').update(`${keyId}\n${idempotencyKey}`).digest('hex').slice(0, 40);
  return `evt_external_${digest}`;
}

/**
 * Makes the run of `workflow` for `event`, once: a second call with the same event id finds the first
 * run (created: false). The run's advance message is sent either way while the run is under way, so a
 * trigger retried after a lost message still gets its run going.
 */
export async function startRun(
  workflow: Workflow,
  event: RunEvent,
): Promise<{ runId: string; created: boolean }> {
  const now = clock.now().toISOString();
  const runId = newId('workflowRun');
  const run: WorkflowRun = {
    workflowId: workflow.workflowId,
    runId,
    workspaceId: workflow.workspaceId,
    organisationId: workflow.organisationId,
    workflowName: workflow.name,
    event,
    autoMode: workflow.autoMode,
    stagesConfig: workflow.stages,
    stageStates: initialStages(),
    status: 'running',
    openShard: runShard(runId),
    version: 0,
    createdAt: now,
    updatedAt: now,
  };
  const result = await workflowsService.transaction
    .write(({ workflowRun, workflowRunEvent }) => [
      workflowRunEvent
        .create({ workflowId: workflow.workflowId, eventId: event.id, runId: run.runId, createdAt: now })
        .commit(),
      workflowRun.create(run).commit(),
    ])
    .go();
  if (!result.canceled) {
    await sendMessage('workflowRuns', advanceMessage(run));
    return { runId: run.runId, created: true };
  }
  const { data: key } = await WorkflowRunEventEntity.get({
    workflowId: workflow.workflowId,
    eventId: event.id,
  }).go({ consistent: true });
  if (!key) throw new Error(`run of workflow ${workflow.workflowId} for event ${event.id} was not created`);
  const existing = await readRun(workflow.workflowId, key.runId);
  if (existing?.status === 'running') await sendMessage('workflowRuns', advanceMessage(existing));
  return { runId: key.runId, created: false };
}

async function readRun(workflowId: string, runId: string): Promise<WorkflowRun | undefined> {
  const { data } = await WorkflowRunEntity.get({ workflowId, runId }).go({ consistent: true });
  return data ?? undefined;
}

/** A run of the workspace's workflow, or 404. */
export async function requireRun(
  workspaceId: string,
  workflowId: string,
  runId: string,
): Promise<WorkflowRun> {
  await requireWorkflow(workspaceId, workflowId);
  const run = isId('workflowRun', runId) ? await readRun(workflowId, runId) : undefined;
  if (!run || run.workspaceId !== workspaceId) throw notFound(RUN_NOT_FOUND);
  return run;
}

/** A workflow's runs, newest first; `status` filters (a filtered page may be short). */
export async function listRuns(
  workspaceId: string,
  workflowId: string,
  query: RunListQuery,
): Promise<Page<WorkflowRun>> {
  await requireWorkflow(workspaceId, workflowId);
  const { status } = query;
  return queryPage(query.cursor, (cursor) => {
    const q = WorkflowRunEntity.query.byWorkflow({ workflowId });
    const filtered = status ? q.where((attr, op) => op.eq(attr.status, status)) : q;
    return filtered.go({ count: query.limit, cursor, order: 'desc' });
  });
}

// ── Writes of a run: conditioned on the version read (and on the lease, while it is held) ───────────

export interface RunChanges {
  stageStates?: StageRecords;
  status?: RunStatus;
  contactId?: string;
  completedAt?: string;
  lockToken?: string;
  lockedUntil?: number;
  sweeps?: number;
}

/**
 * Writes `changes` if the run is still at `run.version` (and, with `token`, still leased to it). Every
 * write sets the status, updatedAt and the shard together: the sweeper's sparse index (entities.ts,
 * `running`) is kept by the write itself — in it while `running`, out of it otherwise.
 */
export async function writeRun(
  run: WorkflowRun,
  changes: RunChanges,
  /** `announce`: an event recorded in the same transaction as the write (functions/platform/outbox.ts). */
  options: { token?: string; release?: boolean; announce?: OutboxRecord } = {},
): Promise<WorkflowRun | undefined> {
  const updatedAt = clock.now().toISOString();
  const version = run.version + 1;
  const set = {
    ...changes,
    status: changes.status ?? run.status,
    openShard: run.openShard ?? runShard(run.runId),
    version,
    updatedAt,
  };
  const key = { workflowId: run.workflowId, runId: run.runId };
  if (options.announce) {
    const event = options.announce;
    const { canceled } = await workflowsService.transaction
      .write(({ workflowRun, outboxEvent }) => {
        const patch = workflowRun.patch(key).set(set);
        return [
          (options.release ? patch.remove(['lockToken', 'lockedUntil']) : patch)
            .where((attr, op) =>
              options.token
                ? `${op.eq(attr.version, run.version)} AND ${op.eq(attr.lockToken, options.token)}`
                : op.eq(attr.version, run.version),
            )
            .commit(),
          outboxEvent.create(event).commit(),
        ];
      })
      .go();
    if (canceled) return undefined;
  } else {
    let write = WorkflowRunEntity.patch(key).set(set);
    if (options.release) write = write.remove(['lockToken', 'lockedUntil']);
    try {
      await write
        .where((attr, op) =>
          options.token
            ? `${op.eq(attr.version, run.version)} AND ${op.eq(attr.lockToken, options.token)}`
            : op.eq(attr.version, run.version),
        )
        .go({ response: 'none' });
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }
  const next: WorkflowRun = { ...run, ...set };
  if (options.release) {
    delete next.lockToken;
    delete next.lockedUntil;
  }
  return next;
}

/** Raised when a leased write finds the run changed under it: the message is received again. */
export class RunMoved extends Error {
  override readonly name = 'RunMoved';
}

// ── Human review ────────────────────────────────────────────────────────────────────────────────────

export const stageNotWaiting = (stage: StageName, state?: StageState) =>
  conflict(`Stage ${stage} is not waiting for review${state ? ` (it is ${state})` : ''}`);

/**
 * Approves or rejects the stage that waits for review: 409 when this stage is not `waiting_review`
 * (approved already, not reached yet, or the run ended). An approval puts the run back on the queue.
 */
export async function reviewStage(input: {
  workspaceId: string;
  workflowId: string;
  runId: string;
  stage: StageName;
  decision: 'approve' | 'reject';
  reviewer: string;
}): Promise<WorkflowRun> {
  const run = await requireRun(input.workspaceId, input.workflowId, input.runId);
  const states = run.stageStates as StageRecords;
  const current = states[input.stage];
  if (current.state !== 'waiting_review') throw stageNotWaiting(input.stage, current.state);
  const now = clock.now().toISOString();
  const next: StageRecords = { ...states };
  next[input.stage] = {
    ...current,
    state: input.decision === 'approve' ? 'approved' : 'rejected',
    reviewed_by: input.reviewer,
    updated_at: now,
  };
  let changes: RunChanges;
  if (input.decision === 'approve') {
    changes = { stageStates: next, status: 'running' };
  } else {
    for (const stage of STAGES.slice(STAGES.indexOf(input.stage) + 1)) {
      next[stage] = { state: 'skipped', updated_at: now };
    }
    changes = { stageStates: next, status: 'rejected', completedAt: now };
  }
  const written = await writeRun(run, changes);
  // Another review got there first.
  if (!written) throw stageNotWaiting(input.stage);
  if (input.decision === 'approve') await sendMessage('workflowRuns', advanceMessage(written));
  return written;
}

// ── The advance (the `workflowRuns` queue's consumer) ───────────────────────────────────────────────

/** Takes the run's lease: the leased run, 'busy' (another receive holds it), the ended run, or undefined. */
async function takeLease(
  workflowId: string,
  runId: string,
): Promise<{ run: WorkflowRun; token: string } | 'busy' | WorkflowRun | undefined> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const run = await readRun(workflowId, runId);
    if (!run || run.status !== 'running') return run;
    const now = clock.now().getTime();
    if (run.lockToken && (run.lockedUntil ?? 0) > now) return 'busy';
    const token = randomUUID();
    const leased = await writeRun(run, { lockToken: token, lockedUntil: now + LEASE_MS });
    if (leased) return { run: leased, token };
  }
  return 'busy';
}

/**
 * Advances a run as far as it goes alone: each stage in order runs when it may (yolo under the
 * run's auto_mode, or approved), else waits for review. Safe to receive twice.
 */
export async function advanceRun(message: WorkflowRunMessage): Promise<string> {
  const taken = await takeLease(message.workflow_id, message.run_id);
  if (taken === undefined) return 'run not found';
  // Another receive holds the lease and goes on to the end; should it crash, its own message comes back.
  if (taken === 'busy') return 'busy: advanced by another receive';
  if (!('token' in taken)) {
    // Ended already: a completed run's event, if its receive stopped before sending it, is sent now
    // (else the outbox sweep does; receivers act once per event id).
    if (taken.status === 'completed') await publishRecordedById(completedEventId(taken.runId));
    return taken.status;
  }
  let { run } = taken;
  const { token } = taken;
  const config = run.stagesConfig as Stages;
  const facts = await loadFacts(run);
  if (facts.contactId && facts.contactId !== run.contactId) {
    run = await must(writeRun(run, { contactId: facts.contactId }, { token }));
  }
  try {
    for (const stage of STAGES) {
      const states = run.stageStates as StageRecords;
      const record = states[stage];
      if (record.state === 'done' || record.state === 'skipped') continue;
      if (record.state !== 'pending' && record.state !== 'approved') {
        await must(writeRun(run, {}, { token, release: true }));
        return `${stage} ${record.state}`;
      }
      if (record.state === 'pending') {
        if (stage === 'signal') {
          const signal = evaluateAll(config.signal.conditions, facts.signal);
          if (!signal.matched) {
            run = await must(
              writeRun(
                run,
                {
                  stageStates: withStages(states, {
                    signal: { state: 'done', result: signal },
                    task: { state: 'skipped' },
                    outcome: { state: 'skipped' },
                  }),
                  status: 'completed',
                  completedAt: clock.now().toISOString(),
                },
                { token, release: true },
              ),
            );
            return 'signal not matched';
          }
          if (!(run.autoMode && config.signal.yolo)) {
            await must(
              writeRun(
                run,
                {
                  stageStates: withStages(states, { signal: { state: 'waiting_review', result: signal } }),
                  status: 'waiting_review',
                },
                { token, release: true },
              ),
            );
            return 'signal waiting for review';
          }
          run = await must(
            writeRun(
              run,
              { stageStates: withStages(states, { signal: { state: 'done', result: signal } }) },
              { token },
            ),
          );
          continue;
        }
        if (!(run.autoMode && config[stage].yolo)) {
          await must(
            writeRun(
              run,
              {
                stageStates: withStages(states, { [stage]: { state: 'waiting_review' } }),
                status: 'waiting_review',
              },
              { token, release: true },
            ),
          );
          return `${stage} waiting for review`;
        }
      }
      // Runs now: yolo under auto_mode, or approved.
      if (stage === 'signal') {
        run = await must(
          writeRun(run, { stageStates: withStages(states, { signal: { state: 'done' } }) }, { token }),
        );
      } else if (stage === 'task') {
        const outcome = await performTask(run, token, config, facts);
        run = outcome.run;
        if (outcome.failed) return 'task failed';
      } else {
        run = await recordOutcome(run, token, config, facts);
        return 'completed';
      }
    }
    return run.status;
  } catch (error) {
    if (!(error instanceof RunMoved)) {
      // Give the lease back at once, so the retried message need not wait for it to lapse.
      await WorkflowRunEntity.patch({ workflowId: run.workflowId, runId: run.runId })
        .remove(['lockToken', 'lockedUntil'])
        .where((attr, op) => op.eq(attr.lockToken, token))
        .go({ response: 'none' })
        .catch(() => {
          // Only a speed-up: the lease lapses on its own, and the error thrown below is the one that matters.
        });
    }
    throw error;
  }
}

async function must(written: Promise<WorkflowRun | undefined>): Promise<WorkflowRun> {
  const run = await written;
  if (!run) throw new RunMoved('the run changed while it was being advanced; received again later');
  return run;
}

export function withStages(
  states: StageRecords,
  changes: Partial<Record<StageName, Partial<StageRecord>>>,
): StageRecords {
  const now = clock.now().toISOString();
  const next = { ...states };
  for (const [stage, change] of Object.entries(changes) as [StageName, Partial<StageRecord>][]) {
    next[stage] = { ...states[stage], ...change, updated_at: now } as StageRecord;
  }
  return next;
}

async function performTask(
  run: WorkflowRun,
  token: string,
  config: Stages,
  facts: Awaited<ReturnType<typeof loadFacts>>,
): Promise<{ run: WorkflowRun; failed: boolean }> {
  const states = run.stageStates as StageRecords;
  let result: TaskResult;
  try {
    result = await runTask(run, config.task.action, facts, {
      prepared: states.task.prepared,
      // The task's input is recorded before it runs: a retry repeats exactly this request.
      prepare: async (prepared) => {
        run = await must(
          writeRun(
            run,
            { stageStates: withStages(run.stageStates as StageRecords, { task: { prepared } }) },
            { token },
          ),
        );
      },
    });
  } catch (error) {
    if (!(error instanceof TaskFailed)) throw error;
    logger.warn('workflow task failed', { runId: run.runId, error: error.message });
    const failed = await must(
      writeRun(
        run,
        {
          stageStates: withStages(run.stageStates as StageRecords, {
            task: { state: 'failed', error: error.message },
            outcome: { state: 'skipped' },
          }),
          status: 'failed',
          completedAt: clock.now().toISOString(),
        },
        { token, release: true },
      ),
    );
    return { run: failed, failed: true };
  }
  const done = await must(
    writeRun(
      run,
      { stageStates: withStages(run.stageStates as StageRecords, { task: { state: 'done', result } }) },
      { token },
    ),
  );
  return { run: done, failed: false };
}

async function recordOutcome(
  run: WorkflowRun,
  token: string,
  config: Stages,
  facts: Awaited<ReturnType<typeof loadFacts>>,
): Promise<WorkflowRun> {
  let states = run.stageStates as StageRecords;
  let prepared = states.outcome.prepared as { summary: string; note_id: string } | undefined;
  if (!prepared) {
    // The note's id and text are recorded before the note is written: a retry after a crash between
    // the note and the write below finds that note (created with "does not exist") instead of adding one.
    const task = (states.task.result ?? {}) as TaskResult;
    prepared = {
      summary: `Workflow "${run.workflowName}": ${describeResult(config.task.action.type, task)}`.slice(
        0,
        500,
      ),
      note_id: newId('note'),
    };
    run = await must(
      writeRun(run, { stageStates: withStages(states, { outcome: { prepared } }) }, { token }),
    );
    states = run.stageStates as StageRecords;
  }
  const { summary } = prepared;
  const noteId = await facts.addNote(summary, prepared.note_id);
  const changes: RunChanges = {
    stageStates: withStages(states, {
      outcome: { state: 'done', result: { summary, note_id: noteId ?? null } },
    }),
    status: 'completed',
    completedAt: clock.now().toISOString(),
  };
  // The run's completion and its event are one write: the event is published after it, by the caller.
  const event = completedEvent({ ...run, ...changes });
  const announce = event ? outboxRecord(event) : undefined;
  const completed = await must(writeRun(run, changes, { token, release: true, announce }));
  if (announce) await publishRecorded([announce]);
  return completed;
}

const completedEventId = (runId: string) => `evt_workflow_completed_${runId}`;

/** `workflow.completed` of a completed run, unless the outcome says not to send it. */
function completedEvent(run: WorkflowRun): NewWorkspaceEvent | undefined {
  const config = run.stagesConfig as Stages;
  const states = run.stageStates as StageRecords;
  if (states.outcome.state !== 'done' || config.outcome.emit_event === false) return undefined;
  const event = run.event as RunEvent;
  return {
    id: completedEventId(run.runId),
    type: 'workflow.completed',
    workspaceId: run.workspaceId,
    organisationId: run.organisationId,
    occurredAt: run.completedAt,
    data: {
      workflow_id: run.workflowId,
      workflow_name: run.workflowName,
      run_id: run.runId,
      event_id: event.id,
      event_type: event.type,
      contact_id: run.contactId ?? null,
      task: { action: config.task.action.type, result: states.task.result ?? null },
      outcome: states.outcome.result ?? null,
    },
  };
}

export function runView(run: WorkflowRun) {
  const config = run.stagesConfig as Stages;
  const states = run.stageStates as StageRecords;
  const stage = (name: StageName) => {
    const { prepared: _prepared, ...record } = states[name];
    return { ...record, yolo: config[name].yolo };
  };
  return {
    id: run.runId,
    workflow_id: run.workflowId,
    workspace_id: run.workspaceId,
    event: run.event as RunEvent,
    contact_id: run.contactId ?? null,
    auto_mode: run.autoMode,
    status: run.status,
    stages: { signal: stage('signal'), task: stage('task'), outcome: stage('outcome') },
    created_at: run.createdAt,
    updated_at: run.updatedAt,
    completed_at: run.completedAt ?? null,
  };
}
