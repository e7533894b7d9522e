import {
  batchGetStoredItems,
  getStoredItem,
  writeStoredItems,
  type StoredItem,
  type TableKey,
} from './table.js';

/**
 * Items that changed partition key (docs/scale.md: the calls sharded, a busy workspace's per-call
 * items off its key) are moved one at a time, in one transaction that puts the item at its key now
 * ("does not exist") and deletes it at its old key (conditioned on the item being as it was read:
 * its `updatedAt` and, a call, its `statusRank`), so an item is moved once and never lost, whoever
 * moves it — `npm run cli -- migrate calls` (functions/table-migration.ts), or a read that finds nothing
 * at the new key while the migration's mark says the old keys may still hold items.
 */
export type MoveOutcome = 'moved' | 'in-place' | 'gone';

/** Where an item belongs now: its key, and what else the move writes on it (a new index's keys). */
export interface MoveTarget {
  key: TableKey;
  adds?: StoredItem;
}

// ── The table's layout now, and the migration's mark ───────────────────────────────────────────────────────────────────────
/** The partition keys a workspace's calls are spread over (calling/call-shards.ts). */
export const CALL_SHARDS = 16;

/**
 * The mark `migrate calls` leaves when no call is left at another key (`shards`: the count it moved
 * them to; `layout`: the layout of the other per-call items it moved, MIGRATION_LAYOUT); a new table
 * gets it when it is made (nothing to move).
 */
export const CALLS_MIGRATED_KEY = { pk: 'MIGRATION#calls-sharded', sk: 'MIGRATION' } as const;
/**
 * 1: the calls sharded; 2: a workspace's per-call items moved off its key (post-call records and
 * runs, SMS messages and last outbounds, webhook deliveries) and an organisation's ledger keys off its
 * (docs/scale.md). A mark of an older layout keeps the old keys read (an item missing at its new key
 * is looked for, and moved, there; a charge checks its cause's old key).
 */
export const MIGRATION_LAYOUT = 2;

const RECHECK_MS = 60_000;
let migrated: { done: boolean; at: number } | undefined;

/**
 * Whether the old keys may still hold calls or other moved items (re-read a minute at most until
 * they do not).
 */
export async function legacyLayoutInUse(): Promise<boolean> {
  if (migrated?.done || (migrated && Date.now() - migrated.at < RECHECK_MS)) return !migrated.done;
  const mark = await getStoredItem(CALLS_MIGRATED_KEY);
  const layout = typeof mark?.layout === 'number' ? mark.layout : 1;
  migrated = { done: mark?.shards === CALL_SHARDS && layout >= MIGRATION_LAYOUT, at: Date.now() };
  return !migrated.done;
}

/** Forgets the cached mark (tests and the migration, which change it in this process). */
export function forgetMigrationMark(): void {
  migrated = undefined;
}

// ── Moving ─────────────────────────────────────────────────────────────────────────────────────
/** Moves one item found at another key; `gone` when another mover (or a write) got there first. */
export async function moveStoredItem(item: StoredItem, target: MoveTarget): Promise<MoveOutcome> {
  const { key, adds } = target;
  if (item.pk === key.pk && item.sk === key.sk) return 'in-place';
  const names: Record<string, string> = { '#pk': 'pk', '#updated': 'updatedAt' };
  const values: Record<string, unknown> = {};
  const clauses = [
    'attribute_exists(#pk)',
    item.updatedAt === undefined ? 'attribute_not_exists(#updated)' : '#updated = :updated',
  ];
  if (item.updatedAt !== undefined) values[':updated'] = item.updatedAt;
  if (item.statusRank !== undefined) {
    names['#rank'] = 'statusRank';
    values[':rank'] = item.statusRank;
    clauses.push('#rank = :rank');
  }
  const result = await writeStoredItems([
    {
      Put: {
        Item: { ...item, ...key, ...adds },
        ConditionExpression: 'attribute_not_exists(#pk)',
        ExpressionAttributeNames: { '#pk': 'pk' },
      },
    },
    {
      Delete: {
        Key: { pk: item.pk, sk: item.sk },
        ConditionExpression: clauses.join(' AND '),
        ExpressionAttributeNames: names,
        ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
      },
    },
  ]);
  // Canceled: moved by another reader, or written meanwhile (the caller reads it again).
  return result.canceled ? 'gone' : 'moved';
}

/** Moves an item, reading it again when it was written meanwhile (a few times: items settle). */
export async function moveUntilDone(
  found: StoredItem,
  targetOf: (item: StoredItem) => MoveTarget,
): Promise<MoveOutcome> {
  let item: StoredItem | undefined = found;
  for (let attempt = 0; item && attempt < 5; attempt += 1) {
    const outcome = await moveStoredItem(item, targetOf(item));
    if (outcome !== 'gone') return outcome;
    [item] = await batchGetStoredItems([{ pk: item.pk as string, sk: item.sk as string }]);
  }
  if (item)
    throw new Error(`${String(found.pk)} ${String(found.sk)} kept changing while it was moved: run again`);
  return 'gone';
}

/**
 * A read that found nothing at an item's new key: while the old keys may still hold items, the one
 * at `oldKey` (if any) is moved now. True when it was there (the caller reads the new key again).
 */
export async function moveFromOldKey(
  oldKey: TableKey,
  targetOf: (item: StoredItem) => MoveTarget,
): Promise<boolean> {
  if (!(await legacyLayoutInUse())) return false;
  const [item] = await batchGetStoredItems([oldKey]);
  if (!item) return false;
  await moveUntilDone(item, targetOf);
  return true;
}
