import { clock } from '../platform/clock.js';
import { config } from '../platform/config.js';
import { isConditionFailure } from '../platform/table.js';
import { logger } from '../platform/logger.js';
import { telephony, type ProviderCallState } from '../providers/telephony/index.js';
import { CallEntity, OPEN_CALL_SHARDS, OpenCallEntity, type Call } from './entities.js';
import { applyTransition, finishCall, readCall } from './lifecycle.js';
import { dispatch } from './start-call.js';
import { isTerminal, REDISPATCH_AFTER_SECONDS } from './status.js';
import { webCallNotConnected } from './web-call.js';
import { callKey } from './call-shards.js';

/**
 * The scheduled sweeper: walks the calls not yet handed to the post-call pipeline (the open-call
 * markers) and makes sure each gets there.
 *   - dialled, not ended, and not heard of for CALL_RECONCILE_AFTER_SECONDS (no callback, no earlier
 *     check: callbacks get lost — Twilio retries one at most, our webhook may have been down) → looked
 *     up at the provider (the port's `getCall`) and reconciled:
 *       · ended there → ended here as the provider says, through the lifecycle's transition (the path a
 *         callback takes): completed calls are billed the provider's duration, and the charge, the slot
 *         and the post-call message happen exactly once whoever gets there first, sweeper or callback;
 *       · unknown there (e.g. the simulator restarted) → `failed`, end reason `lost`, ended when it was
 *         last heard of (billed from its answer to then, if it was answered); the slot comes back;
 *       · still up there → its `updatedAt` is moved on, so it is asked again only after as long again;
 *   - past its deadline (maximum duration + margin) and still not ended → `failed`, end reason `lost`
 *     (the concurrency slot comes back; the provider is asked to hang up, best effort);
 *   - still `created` a while after creation (its dispatch message was lost) → dispatched again
 *     (the dispatcher's claim makes a duplicate harmless);
 *   - ended but not yet reported → charge and post-call message again (their waits are bounded);
 *   - a web call (web-call.ts) is never dispatched: still `created` past its minute, it ends `failed`,
 *     end reason `not_connected`, unbilled (never answered); its slot comes back.
 */
export interface SweepReport {
  examined: number;
  /** Web calls never connected in their minute. */
  notConnected: number;
  lost: number;
  redispatched: number;
  finished: number;
  /** Calls ended as the provider reported when asked (reconciliation). */
  reconciled: number;
}

/** Markers newer than this are left alone (their calls are just starting). */
const MIN_AGE_SECONDS = REDISPATCH_AFTER_SECONDS;

export async function sweepCalls(): Promise<SweepReport> {
  const now = clock.now();
  const cutoff = new Date(now.getTime() - MIN_AGE_SECONDS * 1000).toISOString();
  const report: SweepReport = {
    examined: 0,
    notConnected: 0,
    lost: 0,
    redispatched: 0,
    finished: 0,
    reconciled: 0,
  };
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
  if (report.notConnected || report.lost || report.redispatched || report.finished || report.reconciled)
    logger.info('call sweep', { ...report });
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
  if (call.channel === 'web' && call.status === 'created') {
    if (!webCallNotConnected(call, now)) return;
    // Conditioned on the call as read (still created): a connection made meanwhile wins.
    const { moved } = await applyTransition(
      call.workspaceId,
      call.callId,
      { status: 'failed', endReason: 'not_connected', at: now.toISOString(), source: 'sweeper' },
      call,
    );
    if (moved) report.notConnected += 1;
    return;
  }
  if (call.providerCallId && call.status !== 'created' && silentSince(call) <= reconcileBefore(now)) {
    if (await reconcile(call, call.providerCallId, now, report)) return;
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

/** When we last heard of the call: its last transition or dial, or the provider's last confirmation. */
const silentSince = (call: Call): number => Date.parse(call.updatedAt ?? call.createdAt);

const reconcileBefore = (now: Date): number => now.getTime() - config().CALL_RECONCILE_AFTER_SECONDS * 1000;

/**
 * Asks the provider about a call that went silent and ends it as the provider says. Returns true when
 * the call is settled (ended here now, or by someone else meanwhile); false when it is still up at
 * the provider or the provider could not be asked (the deadline rule still applies).
 */
async function reconcile(
  call: Call,
  providerCallId: string,
  now: Date,
  report: SweepReport,
): Promise<boolean> {
  let state: ProviderCallState | undefined;
  try {
    state = await telephony().getCall(providerCallId);
  } catch (error) {
    logger.warn('provider lookup of a silent call failed; next run asks again', {
      callId: call.callId,
      error: String(error),
    });
    return false;
  }
  if (!state) {
    // The provider does not know the call: nothing more will come. It ended, at the latest, when it was
    // last heard of (never before it was answered).
    const answeredAt = call.connectedAt ?? call.inprogressAt;
    const lastHeard = Math.max(silentSince(call), answeredAt ? Date.parse(answeredAt) : 0);
    logger.warn('call unknown to the provider: ended as lost', { callId: call.callId, providerCallId });
    const { moved } = await applyTransition(call.workspaceId, call.callId, {
      status: 'failed',
      endReason: 'lost',
      at: new Date(Math.min(lastHeard, now.getTime())).toISOString(),
      source: 'sweeper',
    });
    if (moved) report.lost += 1;
    return true;
  }
  if (state.status === 'completed' || state.status === 'failed') {
    const { moved } = await applyTransition(call.workspaceId, call.callId, {
      status: state.status,
      endReason: state.endReason,
      at: state.endedAt ?? now.toISOString(),
      providerSeconds: state.durationSeconds,
      source: 'sweeper',
    });
    if (moved) report.reconciled += 1;
    return true;
  }
  // Still up there (or in a state we do not know): ask again once it has been silent as long again.
  try {
    await CallEntity.patch(callKey(call.workspaceId, call.callId))
      .set({ updatedAt: now.toISOString() })
      .where((attr, op) => op.eq(attr.statusRank, call.statusRank))
      .go({ response: 'none' });
  } catch (error) {
    if (!isConditionFailure(error)) throw error; // it moved meanwhile: a callback came
  }
  return false;
}
