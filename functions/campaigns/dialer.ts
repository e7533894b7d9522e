import { WorkspaceEntity } from '../access/entities.js';
import { CallEntity, type Call } from '../calling/entities.js';
import { startCall } from '../calling/start-call.js';
import { isMissedCall, isTerminal } from '../calling/status.js';
import { ContactEntity, type Contact, type ContactNote } from '../contacts/entities.js';
import { suppressedAmong } from '../contacts/suppression.js';
import { listImports } from '../contacts/imports.js';
import type { ApiKeyPrincipal } from '../platform/auth/principal.js';
import { idempotencyScope } from '../platform/http/idempotency.js';
import { clock } from '../platform/clock.js';
import { HttpError } from '../platform/errors.js';
import { IdempotencyEntity } from '../platform/idempotency.js';
import { newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { sendMessage, sendMessages } from '../platform/queue.js';
import { isConditionFailure } from '../platform/table.js';
import { publishWorkspaceEvent } from '../platform/workspace-events.js';
import {
  ActiveCampaignEntity,
  BatchContactEntity,
  campaignsService,
  DUE_NOW,
  type BatchContact,
  type Campaign,
} from './entities.js';
import type { AttemptOutcome, BatchContactState, CallingWindow, RetryPolicy } from './model.js';
import { getCampaign, readProgress, transact, unfinished, type Progress } from './service.js';
import { nextOpening, recipientZones } from './window.js';

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
 */
export const CLAIM_STALE_SECONDS = Number(process.env.CAMPAIGN_CLAIM_STALE_SECONDS ?? 20);
/** A campaign with calls out is passed over again this soon (its ended calls free their slots). */
const FOLLOW_UP_SECONDS = Number(process.env.CAMPAIGN_FOLLOW_UP_SECONDS ?? 1);
/** …and this soon when only the workspace's other calls hold the slots it waits for. */
const SLOT_WAIT_SECONDS = 5;
const DIAL_CONCURRENCY = 16;
const CANCEL_BATCH = 500;
const COUNTER: Record<BatchContactState, keyof Progress> = {
  pending: 'pending',
  calling: 'calling',
  retry_scheduled: 'retryScheduled',
  completed: 'completed',
  failed: 'failed',
  skipped_dnc: 'skipped',
  cancelled: 'cancelled',
};

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
): Promise<string> {
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
    return `${done}, no free slot`;
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
  return (
    `${done}, ${claimed.length} claimed, ${placed.filter(Boolean).length} dialled, ${skipped} skipped, ` +
    `${deferred} deferred, ${replanned} re-planned`
  );
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

// ── Claims and transitions ─────────────────────────────────────────────────────────────────────────────

const bcKey = (bc: BatchContact) => ({
  workspaceId: bc.workspaceId,
  campaignId: bc.campaignId,
  batchContactId: bc.batchContactId,
});

interface MoveOptions {
  set?: Partial<BatchContact>;
  remove?: ('callId' | 'claimedFrom' | 'claimedAt' | 'deferredFrom')[];
  releaseSlot?: boolean;
  creditsUnits?: number;
  note?: ContactNote;
  callId?: string;
  noCall?: boolean;
}

/**
 * One batch contact's move from the state (and attempt) it was read in, with its counters;
 * optionally the campaign's slot back, credits, a note and a condition on its call.
 */
interface Move {
  bc: BatchContact;
  to: BatchContactState;
  options?: MoveOptions;
}

/**
 * `sameSettings`: the moves also check that the campaign's `updatedAt` is the one read (moves that
 * give no slot back only), so that a pass that read the settings before a PATCH writes nothing
 * decided under the old ones (a contact deferred by the old calling window).
 */
interface MoveGuard {
  sameSettings?: boolean;
}

type Tx = Parameters<Parameters<typeof campaignsService.transaction.write>[0]>[0];
type Counts = Partial<Record<keyof Progress, number>>;

/** Moves applied together per transaction (2 items each at most, with ≤ 8 counter shards and the campaign). */
const MOVES_PER_TRANSACTION = 20;
/** Claims taken together per transaction (one item each, with ≤ 8 counter shards and the campaign). */
const CLAIMS_PER_TRANSACTION = 25;

const addCounts = (counts: Map<number, Counts>, shard: number, add: Counts) => {
  const into = counts.get(shard) ?? {};
  for (const [key, value] of Object.entries(add) as [keyof Progress, number][])
    into[key] = (into[key] ?? 0) + value;
  counts.set(shard, into);
};

/** The counter shards' updates (zero changes left out). */
function counterUpdates(
  tx: Tx,
  campaign: Pick<Campaign, 'workspaceId' | 'campaignId'>,
  counts: Map<number, Counts>,
) {
  const { workspaceId, campaignId } = campaign;
  return [...counts].flatMap(([shard, add]) => {
    const nonZero = Object.fromEntries(Object.entries(add).filter(([, value]) => value !== 0));
    return Object.keys(nonZero).length > 0
      ? [tx.campaignCounters.update({ workspaceId, campaignId, shard }).add(nonZero).commit()]
      : [];
  });
}

/**
 * Moves together, in one transaction: each contact on condition of the state and attempt it was read
 * in (and its call), their counter shards summed, the slots they give back taken off the campaign's
 * `activeCalls` at once. False when any condition failed (nothing was written).
 */
async function moveTogether(
  campaign: Pick<Campaign, 'workspaceId' | 'campaignId' | 'updatedAt'>,
  moves: Move[],
  guard: MoveGuard = {},
): Promise<boolean> {
  const { workspaceId, campaignId } = campaign;
  const now = clock.now().toISOString();
  const counts = new Map<number, Counts>();
  let slots = 0;
  for (const { bc, to, options = {} } of moves) {
    if (to !== bc.state) addCounts(counts, bc.shard, { [COUNTER[bc.state]]: -1, [COUNTER[to]]: 1 });
    if (options.creditsUnits) addCounts(counts, bc.shard, { creditsUnits: options.creditsUnits });
    if (options.releaseSlot) slots += 1;
  }
  const { canceled } = await transact((tx) => [
    ...moves.flatMap(({ bc, to, options = {} }) => {
      let patch = tx.batchContact.patch(bcKey(bc)).set({
        state: to,
        dueAt: options.set?.dueAt ?? (to === bc.state ? bc.dueAt : DUE_NOW),
        updatedAt: now,
        ...options.set,
      });
      if (options.remove?.length) patch = patch.remove(options.remove);
      return [
        patch
          .where((attr, op) =>
            [
              op.eq(attr.state, bc.state),
              op.eq(attr.attempt, bc.attempt),
              options.callId ? op.eq(attr.callId, options.callId) : '',
              options.noCall ? op.notExists(attr.callId) : '',
            ]
              .filter(Boolean)
              .join(' AND '),
          )
          .commit(),
        ...(options.note ? [tx.contactNote.create(options.note).commit()] : []),
      ];
    }),
    ...counterUpdates(tx, campaign, counts),
    ...(slots > 0
      ? [tx.campaign.patch({ workspaceId, campaignId }).add({ activeCalls: -slots }).commit()]
      : guard.sameSettings
        ? [
            tx.campaign
              .check({ workspaceId, campaignId })
              .where((attr, op) => op.eq(attr.updatedAt, campaign.updatedAt))
              .commit(),
          ]
        : []),
  ]);
  return !canceled;
}

/** One move (see moveTogether). False when the contact had moved. */
const move = (
  campaign: Pick<Campaign, 'workspaceId' | 'campaignId' | 'updatedAt'>,
  bc: BatchContact,
  to: BatchContactState,
  options: MoveOptions = {},
): Promise<boolean> => moveTogether(campaign, [{ bc, to, options }]);

/**
 * Many moves, MOVES_PER_TRANSACTION to a transaction; a transaction refused (one contact had moved
 * meanwhile) is done again one move at a time, so each of the others still happens once. The number
 * of contacts moved.
 */
async function moveMany(
  campaign: Pick<Campaign, 'workspaceId' | 'campaignId' | 'updatedAt'>,
  moves: Move[],
  guard: MoveGuard = {},
): Promise<number> {
  let moved = 0;
  for (let i = 0; i < moves.length; i += MOVES_PER_TRANSACTION) {
    const pack = moves.slice(i, i + MOVES_PER_TRANSACTION);
    if (await moveTogether(campaign, pack, guard)) moved += pack.length;
    else if (pack.length > 1) for (const m of pack) if (await moveTogether(campaign, [m], guard)) moved += 1;
  }
  return moved;
}

/** A contact as its claim leaves it: `calling`, the next attempt, claimed from its state now. */
const asClaimed = (bc: BatchContact, now: string): BatchContact => ({
  ...bc,
  state: 'calling',
  dueAt: DUE_NOW,
  attempt: bc.attempt + 1,
  claimedFrom: bc.state,
  claimedAt: now,
  callId: undefined,
  deferredFrom: undefined,
  updatedAt: now,
});

const claimPatch = (tx: Tx, bc: BatchContact, now: string) =>
  tx.batchContact
    .patch(bcKey(bc))
    .set({
      state: 'calling',
      dueAt: DUE_NOW,
      attempt: bc.attempt + 1,
      claimedFrom: bc.state,
      claimedAt: now,
      updatedAt: now,
    })
    .remove(['callId', 'deferredFrom'])
    .where((attr, op) => `${op.eq(attr.state, bc.state)} AND ${op.eq(attr.attempt, bc.attempt)}`)
    .commit();

/**
 * Claims (see the top), CLAIMS_PER_TRANSACTION to a transaction: every contact on condition of its
 * state and attempt, and the campaign's `activeCalls` + n on condition that it is running, its cap is
 * the one read and `activeCalls` ≤ cap − n. A transaction refused (a contact claimed by another pass,
 * or fewer slots than it takes) is done again one claim at a time, until the campaign is full.
 */
async function claimMany(campaign: Campaign, bcs: BatchContact[]): Promise<BatchContact[]> {
  const claimed: BatchContact[] = [];
  for (let i = 0; i < bcs.length; i += CLAIMS_PER_TRANSACTION) {
    const pack = bcs.slice(i, i + CLAIMS_PER_TRANSACTION);
    if (pack.length > 1) {
      const together = await claimTogether(campaign, pack);
      if (together) {
        claimed.push(...together);
        continue;
      }
    }
    for (const bc of pack) {
      const claim = await claimContact(campaign, bc);
      if (claim === 'full') return claimed;
      if (claim) claimed.push(claim);
    }
  }
  return claimed;
}

async function claimTogether(campaign: Campaign, pack: BatchContact[]): Promise<BatchContact[] | undefined> {
  const { workspaceId, campaignId, maxConcurrency } = campaign;
  const now = clock.now().toISOString();
  const counts = new Map<number, Counts>();
  for (const bc of pack) addCounts(counts, bc.shard, { [COUNTER[bc.state]]: -1, calling: 1 });
  const { canceled } = await transact((tx) => [
    ...pack.map((bc) => claimPatch(tx, bc, now)),
    ...counterUpdates(tx, campaign, counts),
    tx.campaign
      .patch({ workspaceId, campaignId })
      .add({ activeCalls: pack.length })
      .where(
        (attr, op) =>
          `${op.eq(attr.status, 'running')} AND ${op.eq(attr.maxConcurrency, maxConcurrency)} AND ` +
          op.lte(attr.activeCalls, maxConcurrency - pack.length),
      )
      .commit(),
  ]);
  return canceled ? undefined : pack.map((bc) => asClaimed(bc, now));
}

/** One claim: the contact as claimed, 'full' when the campaign has no slot or stopped. */
async function claimContact(
  campaign: Campaign,
  bc: BatchContact,
): Promise<BatchContact | 'full' | undefined> {
  const { workspaceId, campaignId } = campaign;
  const now = clock.now().toISOString();
  const { canceled, codes } = await transact((tx) => [
    claimPatch(tx, bc, now),
    tx.campaignCounters
      .update({ workspaceId, campaignId, shard: bc.shard })
      .add({ [COUNTER[bc.state]]: -1, calling: 1 })
      .commit(),
    tx.campaign
      .patch({ workspaceId, campaignId })
      .add({ activeCalls: 1 })
      .where(
        (attr, op) =>
          `${op.eq(attr.status, 'running')} AND ${op.name(attr.activeCalls)} < ${op.name(attr.maxConcurrency)}`,
      )
      .commit(),
  ]);
  if (!canceled) return asClaimed(bc, now);
  if (codes[2] === 'ConditionalCheckFailed') return 'full';
  return undefined; // claimed by another pass, or changed meanwhile
}

/** A claim not dialled goes back to the state it came from (same attempt number next time). */
async function release(campaign: Campaign, bc: BatchContact): Promise<boolean> {
  const back = bc.claimedFrom === 'retry_scheduled' ? 'retry_scheduled' : 'pending';
  return move(campaign, bc, back, {
    set: { attempt: bc.attempt - 1, dueAt: DUE_NOW },
    remove: ['claimedFrom', 'claimedAt'],
    releaseSlot: true,
    noCall: true,
  });
}

async function pause(campaign: Campaign, reason: string): Promise<void> {
  try {
    await transact((tx) => [
      tx.campaign
        .patch({ workspaceId: campaign.workspaceId, campaignId: campaign.campaignId })
        .set({ status: 'paused', pausedReason: reason, updatedAt: clock.now().toISOString() })
        .where((attr, op) => op.eq(attr.status, 'running'))
        .commit(),
    ]);
    logger.warn('campaign paused', { campaignId: campaign.campaignId, reason });
  } catch (error) {
    logger.error('could not pause the campaign', { campaignId: campaign.campaignId, error: String(error) });
  }
}

/** The campaign places calls as itself: an API-key-like principal of its workspace (created_by = its id). */
const campaignPrincipal = (campaign: Campaign): ApiKeyPrincipal => ({
  kind: 'api_key',
  keyId: campaign.campaignId,
  workspaceId: campaign.workspaceId,
  organisationId: campaign.organisationId,
  scopes: ['start_call'],
});

/** The deterministic idempotency key of one attempt of one batch contact. */
export const attemptKey = (bc: Pick<BatchContact, 'batchContactId' | 'attempt'>): string =>
  `campaign:${bc.batchContactId}:${bc.attempt}`;

/** Dials a claimed contact (step 4 above). True when its call is placed. */
async function placeCall(campaign: Campaign, bc: BatchContact): Promise<boolean> {
  try {
    const call = await startCall({
      principal: campaignPrincipal(campaign),
      workspaceId: campaign.workspaceId,
      agentId: campaign.agentId,
      body: {
        to_phone: bc.phone,
        from_phone: campaign.fromPhone ?? null,
        parameters: (bc.parameters ?? {}) as Record<string, string>,
      },
      idempotencyKey: attemptKey(bc),
      campaignId: campaign.campaignId,
    });
    await attachCall(bc, call.id, call.created_at ?? clock.now().toISOString());
    return true;
  } catch (error) {
    if (!(error instanceof HttpError)) {
      // Unknown: the call may or may not exist. The sweeper (reconcileCalling) finds out by the key.
      logger.error('campaign dial failed; the sweeper looks again', {
        campaignId: campaign.campaignId,
        batchContactId: bc.batchContactId,
        error: String(error),
      });
      return false;
    }
    if (error.status === 409) return false; // the same attempt is being dialled by another pass
    await release(campaign, bc);
    if (error.status === 402) await pause(campaign, `insufficient_credits: ${error.message}`);
    else if (error.status !== 429) await pause(campaign, `cannot_call: ${error.message}`);
    return false;
  }
}

async function attachCall(bc: BatchContact, callId: string, at: string): Promise<void> {
  try {
    await BatchContactEntity.patch(bcKey(bc))
      .set({
        callId,
        attempts: [...(bc.attempts ?? []).filter((a) => a.callId !== callId), { callId, at }],
        updatedAt: clock.now().toISOString(),
      })
      .where(
        (attr, op) =>
          `${op.eq(attr.state, 'calling')} AND ${op.eq(attr.attempt, bc.attempt)} AND ${op.notExists(attr.callId)}`,
      )
      .go({ response: 'none' });
  } catch (error) {
    if (!(error instanceof Error) || !/conditional/i.test(`${error.message} ${String(error.cause ?? '')}`))
      throw error;
    // Attached by another pass already (the same call: one key, one call).
  }
}

// ── Reconciling ──────────────────────────────────────────────────────────────────────────────────────

async function reconcileCalling(campaign: Campaign): Promise<number> {
  const { workspaceId, campaignId } = campaign;
  const { data: calling } = await BatchContactEntity.query
    .byState({ workspaceId, campaignId, state: 'calling' })
    .go({ pages: 'all' });
  if (calling.length === 0) return 0;
  // The index is eventually consistent: decide on the records themselves.
  const fresh = await readBatchContacts(calling);
  let done = 0;
  const withCall = fresh.filter((bc) => bc.state === 'calling' && bc.callId);
  const calls = await readCalls(
    workspaceId,
    withCall.map((bc) => bc.callId!),
  );
  // The calls that ended: their outcomes together (a few transactions, not one per call).
  const outcomes = withCall.flatMap((bc) => {
    const call = calls.get(bc.callId!);
    const outcome = call ? outcomeMove(campaign, bc, call) : undefined;
    return outcome ? [outcome] : [];
  });
  done += await moveMany(campaign, outcomes);
  const staleBefore = clock.now().getTime() - CLAIM_STALE_SECONDS * 1000;
  const stale = fresh.filter(
    (bc) => bc.state === 'calling' && !bc.callId && Date.parse(bc.claimedAt ?? bc.updatedAt) < staleBefore,
  );
  for (const bc of stale) if (await freeStuckClaim(campaign, bc)) done += 1;
  return done;
}

/** Step 2 above. */
async function freeStuckClaim(campaign: Campaign, bc: BatchContact): Promise<boolean> {
  const principal = campaignPrincipal(campaign);
  const scope = idempotencyScope({ workspace_id: campaign.workspaceId }, principal);
  const { data: key } = await IdempotencyEntity.get({ scope, key: attemptKey(bc) }).go({ consistent: true });
  if (key?.state === 'completed' && key.callId) {
    await attachCall(bc, key.callId, key.createdAt);
    return true;
  }
  if (key?.state === 'in_flight' && key.lockedUntil > clock.now().getTime()) return false; // being dialled
  logger.warn('campaign claim stuck without its call', {
    campaignId: campaign.campaignId,
    batchContactId: bc.batchContactId,
    attempt: bc.attempt,
  });
  if (campaign.status === 'running') return placeCall(campaign, bc);
  return release(campaign, bc);
}

const outcomeOf = (call: Call): AttemptOutcome =>
  call.status === 'completed'
    ? 'completed'
    : call.endReason === 'busy'
      ? 'busy'
      : call.endReason === 'no_answer'
        ? 'no_answer'
        : 'failed';

const OUTCOME_TEXT: Record<AttemptOutcome, string> = {
  completed: 'answered and completed',
  busy: 'busy',
  no_answer: 'not answered',
  failed: 'failed',
};

/**
 * A call of a `calling` contact ended: its outcome (see the top). False while the call is under way
 * or not yet charged, or when the contact had moved on (another pass or the event got there first).
 */
export async function recordOutcome(campaign: Campaign, bc: BatchContact, call: Call): Promise<boolean> {
  const outcome = outcomeMove(campaign, bc, call);
  return outcome ? moveTogether(campaign, [outcome]) : false;
}

/** The move a call's end gives its `calling` contact; undefined while it is under way or not charged. */
function outcomeMove(campaign: Campaign, bc: BatchContact, call: Call): Move | undefined {
  if (!isTerminal(call.status)) return undefined;
  if (call.chargedUnits === undefined && !isMissedCall(call)) return undefined;
  const retry = campaign.retry as RetryPolicy;
  const outcome = outcomeOf(call);
  const now = clock.now();
  let to: BatchContactState = 'failed';
  let dueAt = DUE_NOW;
  if (outcome === 'completed') to = 'completed';
  else if ((retry.on as string[]).includes(outcome) && bc.attempt < retry.max_attempts) {
    to = campaign.status === 'cancelled' ? 'cancelled' : 'retry_scheduled';
    dueAt = new Date(now.getTime() + retry.delay_minutes * 60_000).toISOString();
  }
  const attempts = (bc.attempts ?? []).map((a) => (a.callId === call.callId ? { ...a, outcome } : a));
  if (!attempts.some((a) => a.callId === call.callId))
    attempts.push({ callId: call.callId, at: call.createdAt, outcome });
  const text =
    `Campaign “${campaign.name.slice(0, 120)}”, attempt ${bc.attempt} of ${retry.max_attempts}: ` +
    `${OUTCOME_TEXT[outcome]}` +
    (to === 'retry_scheduled' ? `; tried again from ${dueAt}` : to === 'failed' ? '; no more attempts' : '') +
    '.';
  const note: ContactNote | undefined = bc.contactId
    ? {
        workspaceId: bc.workspaceId,
        contactId: bc.contactId,
        noteId: newId('note'),
        text,
        channel: 'campaign',
        authorId: 'system',
        callId: call.callId,
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
      }
    : undefined;
  return {
    bc,
    to,
    options: {
      set: { attempts, dueAt },
      remove: ['claimedFrom', 'claimedAt'],
      releaseSlot: true,
      creditsUnits: call.chargedUnits ?? 0,
      note,
      callId: call.callId,
    },
  };
}

/** The `call.ended` event's path (events.ts): the contact of this campaign call, when still `calling`. */
export async function recordCallEnded(
  workspaceId: string,
  campaignId: string,
  callId: string,
): Promise<boolean> {
  const campaign = await getCampaign(workspaceId, campaignId);
  if (!campaign) return false;
  const { data: calling } = await BatchContactEntity.query
    .byState({ workspaceId, campaignId, state: 'calling' })
    .where((attr, op) => op.eq(attr.callId, callId))
    .go({ pages: 'all' });
  const [bc] = await readBatchContacts(calling);
  if (!bc || bc.state !== 'calling' || bc.callId !== callId) return false;
  const { data: call } = await CallEntity.get({ workspaceId, callId }).go({ consistent: true });
  return call ? recordOutcome(campaign, bc, call) : false;
}

// ── Re-planning ──────────────────────────────────────────────────────────────────────────────────────

/** Waiting contacts re-planned per query page. */
const REPLAN_PAGE = 500;

/**
 * The calling window changed, or the campaign resumed (`replanAt` set by the PATCH): every waiting
 * contact the window deferred to a later time gets the time the window now gives it — from the time
 * it was due before the deferral (`deferredFrom`: now, or a retry's time), its next opening under the
 * new window in its zones, else that time itself (the new window is open: due as it was). Each move
 * is conditioned on the contact's state and attempt, as every move is; then `replanAt` is removed on
 * condition of the value read, so a PATCH made meanwhile is re-planned by the next pass. A pass that
 * crashes half-way leaves `replanAt`: the next pass does it again (a re-planned contact is planned
 * the same). The number of contacts whose time changed.
 */
export async function replanDeferred(campaign: Campaign, workspaceTimezone: string): Promise<number> {
  const { workspaceId, campaignId } = campaign;
  const window = campaign.callingWindow as CallingWindow;
  const now = clock.now();
  let replanned = 0;
  for (const state of ['pending', 'retry_scheduled'] as const) {
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page: { data: BatchContact[]; cursor: string | null } = await BatchContactEntity.query
        .byState({ workspaceId, campaignId, state })
        .gt({ dueAt: now.toISOString() })
        .go({ cursor, count: REPLAN_PAGE });
      cursor = page.cursor;
      const fresh = (await readBatchContacts(page.data)).filter(
        (bc) => bc.state === state && bc.deferredFrom !== undefined,
      );
      const contacts = await readContacts(workspaceId, fresh);
      const moves = fresh.flatMap((bc): Move[] => {
        const from = bc.deferredFrom!;
        const earliest = from === DUE_NOW || Date.parse(from) < now.getTime() ? now : new Date(from);
        const zones = recipientZones({
          window,
          contactTimezone: bc.contactId ? contacts.get(bc.contactId)?.timezone : undefined,
          phone: bc.phone,
          workspaceTimezone,
        });
        const opening = nextOpening(window, zones, earliest);
        const dueAt = opening ? opening.toISOString() : from;
        if (dueAt === bc.dueAt) return [];
        return [
          {
            bc,
            to: bc.state,
            options: opening ? { set: { dueAt } } : { set: { dueAt }, remove: ['deferredFrom'] },
          },
        ];
      });
      replanned += await moveMany(campaign, moves);
    }
  }
  await transact((tx) => [
    tx.campaign
      .patch({ workspaceId, campaignId })
      .remove(['replanAt'])
      .where((attr, op) => op.eq(attr.replanAt, campaign.replanAt!))
      .commit(),
  ]);
  return replanned;
}

// ── Cancelling, completing ─────────────────────────────────────────────────────────────────────────────

async function cancelWaiting(campaign: Campaign): Promise<number> {
  const { workspaceId, campaignId } = campaign;
  let moved = 0;
  for (const state of ['pending', 'retry_scheduled'] as const) {
    const { data } = await BatchContactEntity.query
      .byState({ workspaceId, campaignId, state })
      .go({ count: CANCEL_BATCH });
    const fresh = (await readBatchContacts(data)).filter((bc) => bc.state === state);
    moved += await moveMany(
      campaign,
      fresh.map((bc) => ({ bc, to: 'cancelled' })),
    );
  }
  if (moved > 0) return moved;
  // Nothing waiting by the index: the counters decide (the index may lag behind).
  const progress = await readProgress(workspaceId, campaignId);
  return progress.pending + progress.retryScheduled + progress.calling;
}

/** Takes the campaign off the dialer's list once it has nothing to do (conditioned on its status). */
async function retire(campaign: Campaign): Promise<void> {
  const { workspaceId, campaignId } = campaign;
  await transact((tx) => [
    tx.campaign
      .check({ workspaceId, campaignId })
      .where(
        (attr, op) =>
          `${op.eq(attr.status, campaign.status)} AND ${op.eq(attr.activeCalls, 0)}` +
          (campaign.status === 'completed' ? ` AND ${op.exists(attr.completionPublishedAt)}` : ''),
      )
      .commit(),
    tx.activeCampaign.delete({ workspaceId, campaignId }).commit(),
  ]);
}

async function uploadsUnderWay(campaign: Campaign): Promise<boolean> {
  const { items } = await listImports(
    campaign.workspaceId,
    { limit: 100 },
    { campaignId: campaign.campaignId },
  );
  return items.some((job) => job.status === 'pending' || job.status === 'processing');
}

async function complete(campaign: Campaign): Promise<void> {
  const now = clock.now().toISOString();
  const { canceled } = await transact((tx) => [
    tx.campaign
      .patch({ workspaceId: campaign.workspaceId, campaignId: campaign.campaignId })
      .set({ status: 'completed', completedAt: now, updatedAt: now })
      .where((attr, op) => `${op.eq(attr.status, 'running')} AND ${op.eq(attr.activeCalls, 0)}`)
      .commit(),
  ]);
  if (canceled) return;
  const completed = await getCampaign(campaign.workspaceId, campaign.campaignId);
  if (completed) await publishCompleted(completed);
}

/** `campaign.completed`, then the flag, then the marker (each step safe to repeat). */
async function publishCompleted(campaign: Campaign): Promise<void> {
  const { workspaceId, campaignId } = campaign;
  if (!campaign.completionPublishedAt) {
    const progress = await readProgress(workspaceId, campaignId);
    await publishWorkspaceEvent({
      id: `evt_campaign_completed_${campaignId}`,
      type: 'campaign.completed',
      workspaceId,
      organisationId: campaign.organisationId,
      occurredAt: campaign.completedAt,
      data: {
        campaign_id: campaignId,
        name: campaign.name,
        agent_id: campaign.agentId,
        started_at: campaign.startedAt ?? null,
        completed_at: campaign.completedAt ?? null,
        total: progress.total,
        completed: progress.completed,
        failed: progress.failed,
        skipped: progress.skipped,
        cancelled: progress.cancelled,
        credits_used: Math.round((progress.creditsUnits / 60) * 100) / 100,
      },
    });
    await markPublished(campaign);
  }
  await retire({ ...campaign, completionPublishedAt: campaign.completionPublishedAt ?? 'now' });
}

async function markPublished(campaign: Campaign): Promise<void> {
  await transact((tx) => [
    tx.campaign
      .patch({ workspaceId: campaign.workspaceId, campaignId: campaign.campaignId })
      .set({ completionPublishedAt: clock.now().toISOString() })
      .commit(),
  ]);
}

// ── Reads ────────────────────────────────────────────────────────────────────────────────────────────

async function dueContacts(campaign: Campaign, now: Date, limit: number): Promise<BatchContact[]> {
  const { workspaceId, campaignId } = campaign;
  const due = now.toISOString();
  const lists = await Promise.all(
    (['pending', 'retry_scheduled'] as const).map(async (state) => {
      const { data } = await BatchContactEntity.query
        .byState({ workspaceId, campaignId, state })
        .lte({ dueAt: due })
        .go({ count: limit });
      return data;
    }),
  );
  const candidates = lists
    .flat()
    .sort((a, b) => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : 0))
    .slice(0, limit);
  // The index may lag: claim from the records as they are.
  return (await readBatchContacts(candidates)).filter(
    (bc) =>
      (bc.state === 'pending' || bc.state === 'retry_scheduled') && (bc.dueAt === DUE_NOW || bc.dueAt <= due),
  );
}

async function readBatchContacts(items: BatchContact[]): Promise<BatchContact[]> {
  if (items.length === 0) return [];
  const found = new Map<string, BatchContact>();
  let pending = items.map(bcKey);
  for (let attempt = 0; pending.length > 0 && attempt < 8; attempt += 1) {
    const { data, unprocessed } = await BatchContactEntity.get(pending).go({ consistent: true });
    for (const bc of data) found.set(bc.batchContactId, bc);
    pending = unprocessed as typeof pending;
  }
  return items.map((bc) => found.get(bc.batchContactId)).filter((bc): bc is BatchContact => bc !== undefined);
}

async function readCalls(workspaceId: string, callIds: string[]): Promise<Map<string, Call>> {
  const calls = new Map<string, Call>();
  let pending = callIds.map((callId) => ({ workspaceId, callId }));
  for (let attempt = 0; pending.length > 0 && attempt < 8; attempt += 1) {
    const { data, unprocessed } = await CallEntity.get(pending).go({ consistent: true });
    for (const call of data) calls.set(call.callId, call);
    pending = unprocessed as typeof pending;
  }
  return calls;
}

async function readContacts(workspaceId: string, bcs: BatchContact[]): Promise<Map<string, Contact>> {
  const ids = [...new Set(bcs.map((bc) => bc.contactId).filter((id): id is string => !!id))];
  const contacts = new Map<string, Contact>();
  let pending = ids.map((contactId) => ({ workspaceId, contactId }));
  for (let attempt = 0; pending.length > 0 && attempt < 8; attempt += 1) {
    const { data, unprocessed } = await ContactEntity.get(pending).go({ consistent: true });
    for (const contact of data) contacts.set(contact.contactId, contact as Contact);
    pending = unprocessed as typeof pending;
  }
  return contacts;
}

/** Why a contact may not be called now, or undefined. */
export function doNotCall(
  contact: Pick<Contact, 'contactability'> | undefined,
  suppressed: boolean,
): string | undefined {
  if (suppressed) return 'suppressed';
  if (contact?.contactability === 'Do Not Contact') return 'do_not_contact';
  if (contact?.contactability === 'Unsubscribed') return 'unsubscribed';
  return undefined;
}

async function inParallel<T, R>(
  items: T[],
  concurrency: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next;
        next += 1;
        results[i] = await work(items[i]);
      }
    }),
  );
  return results;
}
