import type { ContactNote } from '../contacts/entities.js';
import { clock } from '../platform/clock.js';
import { campaignsService, DUE_NOW, type BatchContact, type Campaign } from './entities.js';
import type { BatchContactState } from './model.js';
import { transact, type Progress } from './service.js';

/**
 * The dialer's moves of batch contacts between states (dialer.ts): each conditioned on the state and
 * attempt read, with the counter shards and the campaign's slots.
 */

export const COUNTER: Record<BatchContactState, keyof Progress> = {
  pending: 'pending',
  calling: 'calling',
  retry_scheduled: 'retryScheduled',
  completed: 'completed',
  failed: 'failed',
  skipped_dnc: 'skipped',
  cancelled: 'cancelled',
};

export const bcKey = (bc: BatchContact) => ({
  workspaceId: bc.workspaceId,
  campaignId: bc.campaignId,
  batchContactId: bc.batchContactId,
});

export interface MoveOptions {
  set?: Partial<BatchContact>;
  remove?: ('callId' | 'claimedFrom' | 'claimedAt' | 'deferredFrom')[];
  releaseSlot?: boolean;
  creditsUnits?: number;
  /** The attempt ended on a machine: counted in the progress's `voicemail`. */
  voicemail?: boolean;
  note?: ContactNote;
  callId?: string;
  noCall?: boolean;
}

/**
 * One batch contact's move from the state (and attempt) it was read in, with its counters;
 * optionally the campaign's slot back, credits, a note and a condition on its call.
 */
export interface Move {
  bc: BatchContact;
  to: BatchContactState;
  options?: MoveOptions;
}

/**
 * `sameSettings`: the moves also check that the campaign's `updatedAt` is the one read (moves that
 * give no slot back only), so that a pass that read the settings before a PATCH writes nothing
 * decided under the old ones (a contact deferred by the old calling window).
 */
export interface MoveGuard {
  sameSettings?: boolean;
}

export type Tx = Parameters<Parameters<typeof campaignsService.transaction.write>[0]>[0];
export type Counts = Partial<Record<keyof Progress, number>>;

/** Moves applied together per transaction (2 items each at most, with ≤ 8 counter shards and the campaign). */
const MOVES_PER_TRANSACTION = 20;

export const addCounts = (counts: Map<number, Counts>, shard: number, add: Counts) => {
  const into = counts.get(shard) ?? {};
  for (const [key, value] of Object.entries(add) as [keyof Progress, number][])
    into[key] = (into[key] ?? 0) + value;
  counts.set(shard, into);
};

/** The counter shards' updates (zero changes left out). */
export function counterUpdates(
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
export async function moveTogether(
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
    if (options.voicemail) addCounts(counts, bc.shard, { voicemail: 1 });
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
export const move = (
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
export async function moveMany(
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
