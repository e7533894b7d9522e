import { WorkspaceEntity } from '../access/entities.js';
import { suppressedAmong } from '../contacts/suppression.js';
import { clock } from '../platform/clock.js';
import { inParallel } from '../platform/parallel.js';
import { NothingChanged } from '../platform/queue-consumer.js';
import { sendMessage, sendMessages } from '../platform/queue.js';
import { isConditionFailure } from '../platform/table.js';
import { ActiveCampaignEntity, type BatchContact, type Campaign } from './entities.js';
import type { CallingWindow } from './model.js';
import { getCampaign, readProgress, unfinished } from './service.js';
import { nextOpening, recipientZones } from './window.js';
import { claimMany, placeCall } from './dialer-claims.js';
import { cancelWaiting, complete, publishCompleted, retire, uploadsUnderWay } from './dialer-completion.js';
import { dueContacts, doNotCall, readContacts } from './dialer-reads.js';
import { reconcileCalling } from './dialer-reconcile.js';
import { replanDeferred } from './dialer-replan.js';
import { moveMany, type Move } from './dialer-transitions.js';

/**
 * The dialer. The `TickCampaigns` schedule sends one `campaign.dial` message per campaign with work
 * (the active markers); a pass over one campaign (`dialPass`, the `campaigns` queue's consumer):
 *
 * 1. Reconciles its `calling` contacts from their calls' records: a call that ended (and was charged)
 *    gives the contact its outcome — `completed`, `failed`, or `retry_scheduled` with
 *    `next_attempt_at` = now + `retry.delay_minutes` for an outcome in `retry.on` while attempts are
 *    left — with a `campaign` note on its contact, its credits added to the campaign, and the campaign's
 *    slot given back, all in one transaction conditioned on the contact's state, attempt and call. The
 *    `call.ended` workspace event (events.ts) does the same as soon as the call is reported; whichever
 *    comes first wins, the other changes nothing. Reading the call record as well means no contact
 *    waits on an event that was lost, or that is never sent (a call that failed before it was dialled).
 * 2. Frees stuck claims (the sweeper): a contact claimed more than CLAIM_STALE_SECONDS ago whose call
 *    is not recorded on it (a crash between the claim and the dial, or between the dial and recording
 *    its call) is looked up by its attempt's idempotency key: the call start-call made is attached;
 *    no call (or a claim that lapsed) → dialled again with the SAME key while the campaign runs (the
 *    start-call service answers with the call it made, if it made one), else released.
 * 3. While `running`: the free slots are min(`max_concurrency` − the campaign's calls,
 *    `concurrent_call_limit` − the workspace's calls). Due contacts (pending or retry_scheduled, due
 *    now), in due order: each is checked just before its claim — do-not-contact / unsubscribed /
 *    suppressed → `skipped_dnc`; outside the calling window in its local time → `next_attempt_at` =
 *    the window's next opening (`deferredFrom` keeps the time it was due; the defers are refused
 *    when the campaign's settings changed since they were read) — then claimed: a transaction moves
 *    up to CLAIMS_PER_TRANSACTION of them to `calling` with attempt + 1, each on condition of the
 *    state and attempt read, and takes as many campaign slots on condition that the campaign is
 *    running and has that many below its cap (refused: one claim per transaction, until the campaign
 *    is full). So overlapping passes, a
 *    redelivered message or a second tick never claim one attempt twice, nor exceed the cap. Outcomes
 *    (step 1) and skips are written several to a transaction the same way.
 * 4. Each claim is dialled through start-call with the idempotency key `campaign:<bc>:<attempt>` and
 *    `campaign_id`: credits are checked (402 → the contact released and the campaign paused with the
 *    reason), the workspace's concurrency slot taken (429 → released; the single calls' share holds).
 * 5. No contact left pending, calling or retry_scheduled (and no upload under way) → `completed`, and
 *    `campaign.completed` is published (event id `evt_campaign_completed_<cmp>`) before the active
 *    marker goes: a crash between them publishes it again, which receivers recognise.
 *
 * 6. Follow-ups: a pass that leaves calls out (or more due contacts than it looked at) schedules the
 *    campaign's next pass FOLLOW_UP_SECONDS later (`followUp`: a delayed `campaign.dial`, one chain
 *    per campaign). An ended call's slot is thus refilled within about a second, without waiting for
 *    the schedule's tick (a minute in the cloud) or for `call.ended`, which is published only once
 *    the call's recording and transcript are in. The tick remains the safety net that starts a chain.
 *
 * A new calling window, or a resume, sets the campaign's `replanAt`: the next running pass first
 * re-plans every contact the window deferred (`replanDeferred`) under the window as it is now.
 *
 * A cancelled campaign's passes move its waiting contacts to `cancelled` (calls under way end as
 * they do); a paused one's only reconcile. The marker goes when nothing is left to do.
 *
 * Its parts: dialer-reconcile.ts (steps 1, 2), dialer-claims.ts (claims and dialling, steps 3, 4),
 * dialer-transitions.ts (the conditioned moves they all make), dialer-replan.ts, dialer-completion.ts
 * (cancelling, step 5), dialer-reads.ts.
 */
/** A campaign with calls out is passed over again this soon (its ended calls free their slots). */
const FOLLOW_UP_SECONDS = Number(process.env.CAMPAIGN_FOLLOW_UP_SECONDS ?? 1);
/** …and this soon when only the workspace's other calls hold the slots it waits for. */
const SLOT_WAIT_SECONDS = 5;
const DIAL_CONCURRENCY = 16;

/** The schedule: one dialer pass per campaign with work (but none whose next pass is scheduled already). */
export async function tickCampaigns(): Promise<string> {
  const { data: active } = await ActiveCampaignEntity.query.all({}).go({ pages: 'all' });
  const now = clock.now().toISOString();
  const data = active.filter((m) => !m.nextPassAt || m.nextPassAt <= now);
  await sendMessages(
    'campaigns',
    data.map((m) => ({
      type: 'campaign.dial' as const,
      workspace_id: m.workspaceId,
      campaign_id: m.campaignId,
    })),
  );
  return `${data.length} campaign(s) ticked`;
}

/** Test hooks: stop the pass right after its claims (a crash between claim and dial). */
export interface PassHooks {
  crashAfterClaims?: boolean;
}

export async function dialPass(
  workspaceId: string,
  campaignId: string,
  hooks: PassHooks = {},
): Promise<string | NothingChanged> {
  const first = await getCampaign(workspaceId, campaignId);
  if (!first) {
    await ActiveCampaignEntity.delete({ workspaceId, campaignId }).go();
    return 'no such campaign';
  }
  const reconciled = await reconcileCalling(first);
  const campaign = reconciled > 0 ? await getCampaign(workspaceId, campaignId) : first;
  if (!campaign) return 'no such campaign';
  const done = `${reconciled} reconciled`;
  switch (campaign.status) {
    case 'cancelled': {
      const cancelled = await cancelWaiting(campaign);
      if (cancelled === 0) await retire(campaign);
      if (cancelled > 0 || campaign.activeCalls > 0) await followUp(campaign, FOLLOW_UP_SECONDS);
      return `${done}, ${cancelled} cancelled`;
    }
    case 'draft':
    case 'paused':
      await retire(campaign);
      // Calls still under way: their outcomes free the campaign's slots (then it retires).
      if (campaign.activeCalls > 0) await followUp(campaign, FOLLOW_UP_SECONDS);
      return `${done}, ${campaign.status}`;
    case 'completed':
      await publishCompleted(campaign);
      return `${done}, completed`;
    case 'running':
      break;
  }
  const progress = await readProgress(workspaceId, campaignId);
  if (unfinished(progress) === 0) {
    if (!(await uploadsUnderWay(campaign))) await complete(campaign);
    return `${done}, nothing left`;
  }
  const { data: workspace } = await WorkspaceEntity.get({ workspaceId }).go({ consistent: true });
  if (!workspace) return `${done}, no workspace`;
  const replanned = campaign.replanAt ? await replanDeferred(campaign, workspace.timezone) : 0;
  const free = Math.min(
    campaign.maxConcurrency - campaign.activeCalls,
    workspace.concurrentCallLimit - workspace.activeCalls,
  );
  if (free <= 0) {
    // Its own calls end soon (their outcomes free slots); single calls may hold the workspace longer.
    const waiting = progress.pending + progress.retryScheduled > 0;
    if (campaign.activeCalls > 0 || waiting)
      await followUp(campaign, campaign.activeCalls > 0 ? FOLLOW_UP_SECONDS : SLOT_WAIT_SECONDS);
    return reconciled > 0 ? `${done}, no free slot` : new NothingChanged(`${done}, no free slot`);
  }
  const now = clock.now();
  const limit = free * 2 + 10;
  const candidates = await dueContacts(campaign, now, limit);
  const contacts = await readContacts(workspaceId, candidates);
  const suppressed = await suppressedAmong(
    campaign.organisationId,
    candidates.map((bc) => bc.phone),
  );
  const skips: Move[] = [];
  const defers: Move[] = [];
  const toClaim: BatchContact[] = [];
  for (const bc of candidates) {
    if (toClaim.length >= free) break;
    const contact = bc.contactId ? contacts.get(bc.contactId) : undefined;
    const dnc = doNotCall(contact, suppressed.has(bc.phone));
    if (dnc) {
      skips.push({ bc, to: 'skipped_dnc', options: { set: { reason: dnc } } });
      continue;
    }
    const zones = recipientZones({
      window: campaign.callingWindow as CallingWindow,
      contactTimezone: contact?.timezone,
      phone: bc.phone,
      workspaceTimezone: workspace.timezone,
    });
    const opening = nextOpening(campaign.callingWindow as CallingWindow, zones, now);
    if (opening) {
      const deferredFrom = bc.deferredFrom ?? bc.dueAt;
      defers.push({ bc, to: bc.state, options: { set: { dueAt: opening.toISOString(), deferredFrom } } });
      continue;
    }
    toClaim.push(bc);
  }
  const skipped = await moveMany(campaign, skips);
  // Deferred under the window read: refused when the campaign's settings changed meanwhile.
  const deferred = await moveMany(campaign, defers, { sameSettings: true });
  const claimed = await claimMany(campaign, toClaim);
  if (hooks.crashAfterClaims) throw new Error('test hook: the pass crashed after its claims');
  const placed = await inParallel(claimed, DIAL_CONCURRENCY, (bc) => placeCall(campaign, bc));
  // Calls out, or more due contacts than this pass looked at: the next pass follows shortly.
  if (campaign.activeCalls + claimed.length > 0 || candidates.length >= limit)
    await followUp(campaign, FOLLOW_UP_SECONDS);
  const outcome =
    `${done}, ${claimed.length} claimed, ${placed.filter(Boolean).length} dialled, ${skipped} skipped, ` +
    `${deferred} deferred, ${replanned} re-planned`;
  // Nothing due (the schedule's tick while contacts wait for their window): a heartbeat, not a change.
  const changed = reconciled + claimed.length + skipped + deferred + replanned > 0;
  return changed ? outcome : new NothingChanged(outcome);
}

/**
 * Schedules the campaign's next pass in `seconds` (a delayed `campaign.dial`), unless one is
 * scheduled already: the active marker's `nextPassAt` is taken on condition that it is not set or
 * has passed, so however many passes run (ticks, nudges, redeliveries, follow-ups), one chain of
 * follow-ups goes on per campaign. Should the send fail after the marker is taken, the chain stops
 * until `nextPassAt` has passed; the schedule's tick (or a call's end) starts it again. A retired
 * campaign (no marker) gets no follow-up.
 */
export async function followUp(
  campaign: Pick<Campaign, 'workspaceId' | 'campaignId'>,
  seconds: number,
): Promise<boolean> {
  const { workspaceId, campaignId } = campaign;
  const now = clock.now();
  const at = new Date(now.getTime() + seconds * 1000).toISOString();
  try {
    await ActiveCampaignEntity.patch({ workspaceId, campaignId })
      .set({ nextPassAt: at })
      .where(
        (attr, op) => `(${op.notExists(attr.nextPassAt)} OR ${op.lte(attr.nextPassAt, now.toISOString())})`,
      )
      .go({ response: 'none' });
  } catch (error) {
    if (isConditionFailure(error)) return false; // a follow-up is scheduled already, or retired
    throw error;
  }
  await sendMessage(
    'campaigns',
    { type: 'campaign.dial', workspace_id: workspaceId, campaign_id: campaignId },
    { delaySeconds: seconds },
  );
  return true;
}
