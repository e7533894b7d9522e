import { CallEntity, type Call } from '../calling/entities.js';
import { isMissedCall, isTerminal } from '../calling/status.js';
import type { ContactNote } from '../contacts/entities.js';
import { idempotencyScope } from '../platform/http/idempotency.js';
import { clock } from '../platform/clock.js';
import { IdempotencyEntity } from '../platform/idempotency.js';
import { newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { BatchContactEntity, DUE_NOW, type BatchContact, type Campaign } from './entities.js';
import type { AttemptOutcome, BatchContactState, RetryPolicy } from './model.js';
import { getCampaign } from './service.js';
import { attachCall, attemptKey, campaignPrincipal, placeCall, release } from './dialer-claims.js';
import { readBatchContacts, readCalls } from './dialer-reads.js';
import { moveMany, moveTogether, type Move } from './dialer-transitions.js';
import { callKey } from '../calling/call-shards.js';

/**
 * The dialer's reconciling (dialer.ts, steps 1 and 2): ended calls give their contacts outcomes; stuck
 * claims are freed.
 */

export const CLAIM_STALE_SECONDS = Number(process.env.CAMPAIGN_CLAIM_STALE_SECONDS ?? 20);

export async function reconcileCalling(campaign: Campaign): Promise<number> {
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

/** Step 2 (dialer.ts). */
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
  call.endReason === 'voicemail'
    ? 'voicemail'
    : call.status === 'completed'
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
  voicemail: 'reached voicemail',
};

/**
 * A call of a `calling` contact ended: its outcome (dialer.ts, step 1). False while the call is under way
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
  else if (outcome === 'voicemail') {
    // A machine answered: the contact is done, unless the campaign tries voicemails again.
    to = 'completed';
    if (campaign.retryOnVoicemail === true && bc.attempt < retry.max_attempts) {
      to = campaign.status === 'cancelled' ? 'cancelled' : 'retry_scheduled';
      dueAt = new Date(now.getTime() + retry.delay_minutes * 60_000).toISOString();
    }
  } else if ((retry.on as string[]).includes(outcome) && bc.attempt < retry.max_attempts) {
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
      voicemail: outcome === 'voicemail',
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
  const { data: call } = await CallEntity.get(callKey(workspaceId, callId)).go({ consistent: true });
  return call ? recordOutcome(campaign, bc, call) : false;
}
