import { clock } from '../platform/clock.js';
import { config } from '../platform/config.js';
import { logger } from '../platform/logger.js';
import { sendMessage } from '../platform/queue.js';
import { RUN_SHARDS, WorkflowRunEntity, type WorkflowRun } from './entities.js';
import { advanceMessage, withStages, writeRun, type StageRecords } from './runs.js';
import { STAGES, type StageName } from './schemas.js';

/**
 * The scheduled sweeper of workflow runs: a run in `running` advances only when its message on the
 * `workflowRuns` queue is received. Should that message be lost (an approval whose send failed after
 * its write) or end in the dead-letter queue (every receive failed, e.g. while a service was down), the
 * run would stay `running` for ever. The sweeper walks the sparse index of running runs (entities.ts
 * `running`) for those without a write for WORKFLOW_RUN_STALL_SECONDS and no live lease, and puts each
 * back on the queue: first a write conditioned on the version it read (counting the sweep and moving
 * `updatedAt`, so the next sweep waits as long again and two sweepers never both send), then the
 * message. Re-sending is safe: the advance is idempotent (a task's input and result are recorded, the
 * call, SMS, email and notes are keyed by the run, so nothing that went out goes out again).
 *
 * A run put back MAX_SWEEPS times without ending is given up: the stage it is stuck at is `failed` with
 * the reason, the later stages `skipped`, the run `failed` — so a run that can never advance ends
 * visibly instead of being retried for ever.
 */
export const MAX_SWEEPS = 5;
export const STALLED = `The run made no progress after ${MAX_SWEEPS} retries and was given up`;

export interface RunSweepReport {
  examined: number;
  resent: number;
  givenUp: number;
}

export async function sweepRuns(): Promise<RunSweepReport> {
  const now = clock.now();
  const cutoff = new Date(now.getTime() - config().WORKFLOW_RUN_STALL_SECONDS * 1000).toISOString();
  const report: RunSweepReport = { examined: 0, resent: 0, givenUp: 0 };
  for (let shard = 0; shard < RUN_SHARDS; shard += 1) {
    const { data: stale } = await WorkflowRunEntity.query
      .running({ openShard: shard })
      .lt({ updatedAt: cutoff })
      .go({ pages: 'all' });
    for (const item of stale) {
      report.examined += 1;
      try {
        await sweepOne(item.workflowId, item.runId, cutoff, now, report);
      } catch (error) {
        logger.error('sweeping a workflow run failed; the next sweep tries again', {
          runId: item.runId,
          error: String(error),
        });
      }
    }
  }
  if (report.resent || report.givenUp) logger.info('workflow run sweep', { ...report });
  return report;
}

async function sweepOne(
  workflowId: string,
  runId: string,
  cutoff: string,
  now: Date,
  report: RunSweepReport,
): Promise<void> {
  // The index is eventually consistent: decide on the run as it is now.
  const { data: run } = await WorkflowRunEntity.get({ workflowId, runId }).go({ consistent: true });
  if (!run || run.status !== 'running' || run.updatedAt >= cutoff) return;
  // A receive is advancing it (its lease has not lapsed): not stalled.
  if (run.lockToken && (run.lockedUntil ?? 0) > now.getTime()) return;
  const sweeps = run.sweeps ?? 0;
  if (sweeps >= MAX_SWEEPS) {
    if (await giveUp(run)) report.givenUp += 1;
    return;
  }
  const written = await writeRun(run, { sweeps: sweeps + 1 });
  if (!written) return; // it moved meanwhile: not stalled
  await sendMessage('workflowRuns', advanceMessage(written));
  report.resent += 1;
  logger.warn('workflow run stalled: put back on its queue', { runId, sweeps: sweeps + 1 });
}

async function giveUp(run: WorkflowRun): Promise<boolean> {
  const states = run.stageStates as StageRecords;
  const stuck = STAGES.find((stage) => !['done', 'skipped'].includes(states[stage].state)) ?? 'outcome';
  const changes: Partial<Record<StageName, { state: 'failed' | 'skipped'; error?: string }>> = {
    [stuck]: { state: 'failed', error: STALLED },
  };
  for (const stage of STAGES.slice(STAGES.indexOf(stuck) + 1)) changes[stage] = { state: 'skipped' };
  const written = await writeRun(
    run,
    { stageStates: withStages(states, changes), status: 'failed', completedAt: clock.now().toISOString() },
    { release: true },
  );
  if (written) logger.error('workflow run given up: no progress', { runId: run.runId, stage: stuck });
  return written !== undefined;
}
