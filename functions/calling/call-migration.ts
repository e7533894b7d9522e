import {
  getStoredItem,
  getStoredItems,
  putStoredItem,
  scanStoredItems,
  writeStoredItems,
  type StoredItem,
  type TableKey,
} from '../platform/table.js';
import { actionRunKey, legacyPostCallKey, postCallRecordKey } from '../post-call/entities.js';
import { forgetMigrationMark } from './call-log-merge.js';
import {
  CALL_SHARDS,
  CALLS_MIGRATED_KEY,
  callShardOf,
  callTableKey,
  legacyCallsKey,
  MIGRATION_LAYOUT,
} from './call-shards.js';

/**
 * Moving call items to their shard's key (call-shards.ts), and a call's post-call record and runs off
 * the workspace's key (post-call/entities.ts): one item at a time, in one transaction that puts the
 * item at its key now ("does not exist") and deletes it at its old key (conditioned on the item being
 * as it was read), so an item is moved once and never lost, whoever moves it — the `migrate calls`
 * command, or a read of an item that is still at its old key (lifecycle.ts readCall, the post-call
 * pipeline's reads).
 */
export type MoveOutcome = 'moved' | 'in-place' | 'gone';

/**
 * The items that moved key, by ElectroDB entity name: where each belongs now (its entity's key; the
 * call's with its shard) and what the move adds to it.
 */
const MOVED: Record<string, (item: StoredItem) => { key: TableKey; adds?: StoredItem }> = {
  call: (item) => {
    const callId = item.callId as string;
    return {
      key: callTableKey(item.workspaceId as string, callId),
      adds: { callShard: callShardOf(callId) },
    };
  },
  postCallRecord: (item) => ({
    key: postCallRecordKey(item.workspaceId as string, item.callId as string),
  }),
  postCallActionRun: (item) => ({
    key: actionRunKey(item.workspaceId as string, item.callId as string, item.actionId as string),
  }),
};
export const MOVED_ENTITIES = Object.keys(MOVED);

/**
 * Moves one item found at another key; `gone` when another mover (or a write) got there first. The
 * delete is conditioned on the item being as read: its `statusRank` (a call) and `updatedAt`, where it
 * has them.
 */
export async function moveCallItem(item: StoredItem): Promise<MoveOutcome> {
  const target = MOVED[item.__edb_e__ as string]?.(item);
  if (!target) throw new Error(`not an item that moves: ${String(item.__edb_e__)}`);
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

/**
 * Moves a call still at its old single key to its shard (readCall, before `migrate calls` has run):
 * true when it was there (moved now or by another reader meanwhile), false when there is none.
 */
export async function moveLegacyCall(workspaceId: string, callId: string): Promise<boolean> {
  const item = await getStoredItem({ pk: legacyCallsKey(workspaceId), sk: `CALL#${callId}` });
  if (!item) return false;
  await moveUntilDone(item);
  return true;
}

/**
 * Moves a call's post-call record and runs still at the workspace's key (post-call/entities.ts;
 * their reads, before `migrate calls` has run): true when the record was there.
 */
export async function moveLegacyPostCall(workspaceId: string, callId: string): Promise<boolean> {
  const record = await getStoredItem(legacyPostCallKey(workspaceId, `POSTCALL#${callId}`));
  if (!record) return false;
  const actions = JSON.parse(String(record.actions ?? '[]')) as { actionId: string }[];
  const runs = await getStoredItems(
    actions.map((a) => legacyPostCallKey(workspaceId, `POSTCALL#${callId}#ACTION#${a.actionId}`)),
  );
  for (const item of [record, ...runs]) if (item) await moveUntilDone(item);
  return true;
}

/** Moves an item, reading it again when it was written meanwhile (a few times: a call ends once). */
async function moveUntilDone(found: StoredItem): Promise<MoveOutcome> {
  let item: StoredItem | undefined = found;
  for (let attempt = 0; item && attempt < 5; attempt += 1) {
    const outcome = await moveCallItem(item);
    if (outcome !== 'gone') return outcome;
    item = await getStoredItem({ pk: item.pk as string, sk: item.sk as string });
  }
  if (item) throw new Error(`call ${String(found.callId)} kept changing while it was moved: run again`);
  return 'gone';
}

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
 * every post-call record and run still at the workspace's key, then marks the table migrated (the listing stops reading the old keys). Resumable: the scan's
 * position is saved after each page, and a re-run starts there (`restart` starts over); idempotent:
 * each move is one conditioned transaction, so a call moved before an interruption is at its key
 * and is not moved again.
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
      const outcome = await moveUntilDone(item);
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
