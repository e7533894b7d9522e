import { startCall } from '../calling/start-call.js';
import type { ApiKeyPrincipal } from '../platform/auth/principal.js';
import { clock } from '../platform/clock.js';
import { HttpError } from '../platform/errors.js';
import { logger } from '../platform/logger.js';
import { BatchContactEntity, DUE_NOW, type BatchContact, type Campaign } from './entities.js';
import { transact } from './service.js';
import {
  addCounts,
  bcKey,
  counterUpdates,
  COUNTER,
  move,
  type Counts,
  type Tx,
} from './dialer-transitions.js';

/**
 * The dialer's claims (dialer.ts, step 3) and their dialling (step 4): contacts moved to `calling` with the
 * campaign's slots taken, each claim dialled through start-call with its attempt's key, or released.
 */

/** Claims taken together per transaction (one item each, with ≤ 8 counter shards and the campaign). */
const CLAIMS_PER_TRANSACTION = 25;

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
 * Claims (dialer.ts, step 3), CLAIMS_PER_TRANSACTION to a transaction: every contact on condition of its
 * state and attempt, and the campaign's `activeCalls` + n on condition that it is running, its cap is
 * the one read and `activeCalls` ≤ cap − n. A transaction refused (a contact claimed by another pass,
 * or fewer slots than it takes) is done again one claim at a time, until the campaign is full.
 */
export async function claimMany(campaign: Campaign, bcs: BatchContact[]): Promise<BatchContact[]> {
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
export async function release(campaign: Campaign, bc: BatchContact): Promise<boolean> {
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
export const campaignPrincipal = (campaign: Campaign): ApiKeyPrincipal => ({
  kind: 'api_key',
  keyId: campaign.campaignId,
  workspaceId: campaign.workspaceId,
  organisationId: campaign.organisationId,
  scopes: ['start_call'],
});

/** The deterministic idempotency key of one attempt of one batch contact. */
export const attemptKey = (bc: Pick<BatchContact, 'batchContactId' | 'attempt'>): string =>
  `campaign:${bc.batchContactId}:${bc.attempt}`;

/** Dials a claimed contact (dialer.ts, step 4). True when its call is placed. */
export async function placeCall(campaign: Campaign, bc: BatchContact): Promise<boolean> {
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

export async function attachCall(bc: BatchContact, callId: string, at: string): Promise<void> {
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
