import { clock } from '../platform/clock.js';
import { logger } from '../platform/logger.js';
import { telephony } from '../providers/telephony/index.js';
import { OPEN_CALL_SHARDS, OpenCallEntity } from './entities.js';
import { applyTransition, finishCall, readCall } from './lifecycle.js';
import { dispatch } from './start-call.js';
import { isTerminal, REDISPATCH_AFTER_SECONDS } from './status.js';

/**
 * The scheduled sweeper: walks the calls not yet handed to the post-call pipeline (the open-call
 * markers) and makes sure each gets there.
 *   - past its deadline (maximum duration + margin) and still not ended → `failed`, end reason `lost`
 *     (the concurrency slot comes back; the provider is asked to hang up, best effort);
 *   - still `created` a while after creation (its dispatch message was lost) → dispatched again
 *     (the dispatcher's claim makes a duplicate harmless);
 *   - ended but not yet reported → charge and post-call message again (their waits are bounded).
 */
export interface SweepReport {
  examined: number;
  lost: number;
  redispatched: number;
  finished: number;
}

/** Markers newer than this are left alone (their calls are just starting). */
const MIN_AGE_SECONDS = REDISPATCH_AFTER_SECONDS;

export async function sweepCalls(): Promise<SweepReport> {
  const now = clock.now();
  const cutoff = new Date(now.getTime() - MIN_AGE_SECONDS * 1000).toISOString();
  const report: SweepReport = { examined: 0, lost: 0, redispatched: 0, finished: 0 };
  for (let shard = 0; shard < OPEN_CALL_SHARDS; shard += 1) {
    const { data: markers } = await OpenCallEntity.query
      .byShard({ shard })
      .lt({ createdAt: cutoff })
      .go({ pages: 'all' });
    for (const marker of markers) {
      report.examined += 1;
      try {
        await sweepOne(marker, now, report);
      } catch (error) {
        logger.error('sweeping a call failed; next run tries again', {
          callId: marker.callId,
          error: String(error),
        });
      }
    }
  }
  if (report.lost || report.redispatched || report.finished) logger.info('call sweep', { ...report });
  return report;
}

async function sweepOne(
  marker: { shard: number; createdAt: string; callId: string; workspaceId: string },
  now: Date,
  report: SweepReport,
): Promise<void> {
  const call = await readCall(marker.workspaceId, marker.callId);
  if (!call) {
    await OpenCallEntity.delete(marker).go({ response: 'none' });
    return;
  }
  if (isTerminal(call.status)) {
    if (call.postCallSentAt) {
      await OpenCallEntity.delete(marker).go({ response: 'none' });
      return;
    }
    await finishCall(call);
    report.finished += 1;
    return;
  }
  if (now.getTime() > Date.parse(call.deadlineAt)) {
    // End it here first, then at the provider: the provider's own end callback for the hangup must
    // find the call already failed as lost, not race the sweeper to a different ending.
    const { moved } = await applyTransition(call.workspaceId, call.callId, {
      status: 'failed',
      endReason: 'lost',
      at: now.toISOString(),
      source: 'sweeper',
    });
    if (moved) report.lost += 1;
    if (moved && call.providerCallId) {
      await telephony()
        .hangupCall(call.providerCallId)
        .catch((error: unknown) =>
          logger.warn('provider hangup of a lost call failed', { callId: call.callId, error: String(error) }),
        );
    }
    return;
  }
  if (call.status === 'created') {
    await dispatch({ type: 'call.dispatch', call_id: call.callId, workspace_id: call.workspaceId });
    report.redispatched += 1;
  }
}
