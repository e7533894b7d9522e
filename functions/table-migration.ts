import { ledgerKeyTarget } from './billing/entities.js';
import { contactItemTarget } from './contacts/entities.js';
import { moveUntilDone, forgetMigrationMark, type MoveTarget } from './platform/key-moves.js';
import {
  getStoredItem,
  putStoredItem,
  scanStoredItems,
  writeStoredItems,
  type StoredItem,
} from './platform/table.js';
import { postCallTarget } from './post-call/entities.js';
import { smsTarget } from './sms/entities.js';
import { deliveryTarget } from './webhook-deliveries/entities.js';
import { CALL_SHARDS, CALLS_MIGRATED_KEY, callTarget, MIGRATION_LAYOUT } from './calling/call-shards.js';

/**
 * `npm run cli -- migrate calls`: every item whose partition key changed (docs/operations.md) moved
 * to its key now, one conditioned transaction each (platform/key-moves.ts): the calls to their
 * shards (calling/call-shards.ts), a workspace's per-call items off its key — post-call records and runs,
 * SMS messages and each number's last outbound, webhook deliveries, contacts' call links and notes —
 * and an organisation's ledger keys
 * off its key (docs/scale.md).
 */

/** Where each moved entity's items belong now, by ElectroDB entity name. */
const MOVED: Record<string, (item: StoredItem) => MoveTarget> = {
  call: callTarget,
  postCallRecord: postCallTarget,
  postCallActionRun: postCallTarget,
  smsMessage: smsTarget,
  smsLastOutbound: smsTarget,
  webhookDelivery: deliveryTarget,
  ledgerKey: ledgerKeyTarget,
  contactCall: contactItemTarget,
  contactNote: contactItemTarget,
};
export const MOVED_ENTITIES = Object.keys(MOVED);

const targetOf = (item: StoredItem): MoveTarget => {
  const target = MOVED[item.__edb_e__ as string];
  if (!target) throw new Error(`not an item that moves: ${String(item.__edb_e__)}`);
  return target(item);
};

export interface MigrationProgress {
  /** Items of the table read so far (of `total`, DynamoDB's estimate, refreshed about every 6 hours). */
  scanned: number;
  moved: number;
  /** Already at their key (read, nothing to do). */
  inPlace: number;
}

/** Where an interrupted migration stopped: the scan's next start key, kept on the mark's item. */
const PROGRESS_KEY = { pk: CALLS_MIGRATED_KEY.pk, sk: 'PROGRESS' } as const;

/**
 * Moves every call item not at its shard's key (the old single key, or another count of shards), and
 * every other moved item still at its old key, then marks the table migrated (the reads stop looking
 * at the old keys). Resumable: the scan's position is saved after each page, and a re-run starts
 * there (`restart` starts over); idempotent: each move is one conditioned transaction, so an item
 * moved before an interruption is at its key and is not moved again.
 */
export async function migrateCalls(
  options: { pageSize?: number; restart?: boolean; onPage?: (progress: MigrationProgress) => void } = {},
): Promise<MigrationProgress> {
  const saved = options.restart ? undefined : await getStoredItem(PROGRESS_KEY);
  const progress: MigrationProgress = {
    scanned: (saved?.scanned as number | undefined) ?? 0,
    moved: (saved?.moved as number | undefined) ?? 0,
    inPlace: (saved?.inPlace as number | undefined) ?? 0,
  };
  let startKey = saved?.next as Record<string, unknown> | undefined;
  do {
    const page = await scanStoredItems({
      Limit: options.pageSize ?? 500,
      FilterExpression: `#e IN (${MOVED_ENTITIES.map((_, i) => `:e${i}`).join(', ')})`,
      ExpressionAttributeNames: { '#e': '__edb_e__' },
      ExpressionAttributeValues: Object.fromEntries(MOVED_ENTITIES.map((e, i) => [`:e${i}`, e])),
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
    });
    progress.scanned += page.scanned;
    for (const item of page.items) {
      const outcome = await moveUntilDone(item, targetOf);
      if (outcome === 'moved') progress.moved += 1;
      else if (outcome === 'in-place') progress.inPlace += 1;
    }
    startKey = page.next;
    await putStoredItem({ ...PROGRESS_KEY, ...progress, ...(startKey ? { next: startKey } : {}) });
    options.onPage?.(progress);
  } while (startKey);
  const marked = await writeStoredItems([
    { Put: { Item: { ...CALLS_MIGRATED_KEY, shards: CALL_SHARDS, layout: MIGRATION_LAYOUT, ...progress } } },
    { Delete: { Key: PROGRESS_KEY } },
  ]);
  if (marked.canceled) throw new Error('the migration mark could not be written: run again');
  forgetMigrationMark();
  return progress;
}
