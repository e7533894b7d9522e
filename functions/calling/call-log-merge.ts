import { HttpError } from '../platform/errors.js';
import { logger } from '../platform/logger.js';
import { invalidCursor, type Page } from '../platform/pagination.js';
import { legacyLayoutInUse } from '../platform/key-moves.js';
import { queryStoredItems, type TableQuery } from '../platform/table.js';
import { CALL_SHARDS, callsShardKey, legacyCallsKey } from './call-shards.js';
import { CallEntity, type Call } from './entities.js';

/**
 * The workspace's call log newest first, merged from its shards (call-shards.ts), and — until
 * `npm run cli -- migrate calls` has run — from the one key calls were written under before
 * (`WS#<ws>#CALLS`), as if it were one more shard.
 *
 * A page asks each shard, in parallel, for its next `perShard` calls (a few more than its share of
 * the page: the shards are even, a hash of the id) and merges them by id. A call is certain to
 * belong on the page only when every shard that may hold more has been read past it, so in the rare
 * page where one shard holds more than `perShard` of the newest calls (or a filter leaves a shard
 * short), that shard alone is asked again from where it stopped. The page is exact either way: the
 * same calls, in the same order, as the one key gave.
 *
 * The cursor is a position, the id of the page's last call: every shard continues below it, so a
 * call written meanwhile is never listed twice, and a call moved by the migration between two pages
 * keeps its place. A cursor of the single key (ElectroDB's encoded start key, `sk` `CALL#<id>`)
 * carries the same position, so one handed out before the change keeps working.
 *
 * A shard's query failing fails the page (503): a page missing one shard's calls would look whole.
 */
export const CALL_LOG_UNAVAILABLE = 'The call log is unavailable right now; please try again.';

/** The position a plain cursor of the workspace's call log carries (new or single-key), or 422. */
export function cursorPosition(cursor: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor(cursor);
  }
  const { after, sk } = (parsed ?? {}) as { after?: unknown; sk?: unknown };
  if (typeof after === 'string' && after.startsWith('call_')) return after;
  if (typeof sk === 'string' && sk.startsWith('CALL#call_')) return sk.slice('CALL#'.length);
  throw invalidCursor(cursor);
}

export const positionCursor = (callId: string): string =>
  Buffer.from(JSON.stringify({ after: callId }), 'utf8').toString('base64url');

export { forgetMigrationMark, legacyLayoutInUse } from '../platform/key-moves.js';

// ── The merge ──────────────────────────────────────────────────────────────────────────────────
/** One shard's query for calls below a position: ElectroDB's params for the shard's key. */
export type ShardQuery = (shard: number, below: string | undefined) => TableQuery;

interface ShardState {
  pk: string;
  /** Every call of the shard above this id has been read (undefined: nothing read yet). */
  readTo: string | undefined;
  done: boolean;
}

/**
 * One page of the merged shards. `build` gives a shard's query (shard 0's params with another
 * partition key serve the old single key: the key is the only difference).
 */
export async function mergedPage(input: {
  workspaceId: string;
  limit: number;
  cursor: string | undefined;
  build: ShardQuery;
  filtered: boolean;
  /** The partition keys to merge (default: the workspace's shards, and its old key until migrated). */
  keys?: string[];
}): Promise<Page<Call>> {
  const { workspaceId, limit, build } = input;
  const start = input.cursor === undefined ? undefined : cursorPosition(input.cursor);
  const keys = input.keys ?? Array.from({ length: CALL_SHARDS }, (_, n) => callsShardKey(workspaceId, n));
  if (!input.keys && (await legacyLayoutInUse())) keys.push(legacyCallsKey(workspaceId));
  const perShard = Math.min(limit, Math.ceil(limit / CALL_SHARDS) * 2 + 2);
  const states: ShardState[] = keys.map((pk) => ({ pk, readTo: start, done: false }));
  const found = new Map<string, Call>();

  const readShard = async (state: ShardState): Promise<void> => {
    const params = build(0, state.readTo);
    const values = { ...params.ExpressionAttributeValues, ':pk': state.pk };
    let exclusiveStartKey: Record<string, unknown> | undefined;
    let kept = 0;
    for (;;) {
      const page = await queryStoredItems({
        ...params,
        ExpressionAttributeValues: values,
        ...(input.filtered ? {} : { Limit: perShard }),
        ...(exclusiveStartKey ? { ExclusiveStartKey: exclusiveStartKey } : {}),
      });
      for (const item of page.items) {
        const call = CallEntity.parse({ Item: item }).data as Call | null;
        if (!call || (state.readTo !== undefined && call.callId >= state.readTo)) continue;
        found.set(call.callId, call);
        kept += 1;
        state.readTo = call.callId;
        if (kept >= perShard) break;
      }
      const last = page.next as { sk?: string } | undefined;
      if (kept >= perShard) return;
      if (!last) {
        state.done = true;
        return;
      }
      // A filtered read stopped at 1 MB: the shard is read down to where it stopped.
      if (typeof last.sk === 'string') state.readTo = last.sk.slice('CALL#'.length);
      exclusiveStartKey = last;
    }
  };

  const read = async (batch: ShardState[]): Promise<void> => {
    try {
      await Promise.all(batch.map(readShard));
    } catch (error) {
      logger.error('a shard of the call log failed', { workspaceId, error: String(error) });
      throw new HttpError(503, CALL_LOG_UNAVAILABLE, { 'retry-after': '1' });
    }
  };

  await read(states);
  for (;;) {
    const open = states.filter((s) => !s.done);
    const frontier = open.reduce<string | undefined>(
      (max, s) => (s.readTo !== undefined && (max === undefined || s.readTo > max) ? s.readTo : max),
      undefined,
    );
    const sorted = [...found.values()].sort((a, b) => (a.callId < b.callId ? 1 : -1));
    const certain = frontier === undefined ? sorted : sorted.filter((c) => c.callId >= frontier);
    if (open.length === 0 || certain.length >= limit) {
      const items = certain.slice(0, limit);
      const more = certain.length > limit || open.length > 0;
      return {
        items,
        nextCursor: more && items.length > 0 ? positionCursor(items[items.length - 1].callId) : null,
      };
    }
    await read(open.filter((s) => s.readTo === frontier));
  }
}

/**
 * Every call of a workspace, in no order (consistent reads of each shard and of the old single
 * key): for tools and tests that count a workspace's calls, never for a request's hot path.
 */
export async function workspaceCalls(workspaceId: string): Promise<Call[]> {
  const keys = Array.from({ length: CALL_SHARDS }, (_, n) => callsShardKey(workspaceId, n));
  keys.push(legacyCallsKey(workspaceId));
  const shards = await Promise.all(
    keys.map(async (pk) => {
      const calls: Call[] = [];
      let exclusiveStartKey: Record<string, unknown> | undefined;
      do {
        const page = await queryStoredItems({
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': 'pk' },
          ExpressionAttributeValues: { ':pk': pk },
          ConsistentRead: true,
          ...(exclusiveStartKey ? { ExclusiveStartKey: exclusiveStartKey } : {}),
        });
        for (const item of page.items) {
          const call = CallEntity.parse({ Item: item }).data as Call | null;
          if (call) calls.push(call);
        }
        exclusiveStartKey = page.next;
      } while (exclusiveStartKey);
      return calls;
    }),
  );
  return shards.flat();
}
