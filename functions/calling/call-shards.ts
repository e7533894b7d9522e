import { createHash } from 'node:crypto';
import { CALL_SHARDS } from '../platform/key-moves.js';

/**
 * A workspace's call items are spread over `CALL_SHARDS` partition keys, `WS#<ws>#CALLS#<shard>`
 * (docs/scale.md): one key took every write of every call of a workspace (11 a call), over
 * DynamoDB's 1,000 write units a second per partition at 100 calls a second, and new ULID ids all
 * sort at the key's end, so no split for heat could spread them.
 *
 * The shard is a hash of the call id's random part (the ULID's last 16 characters), so it is known
 * from the id alone: a read by key needs nothing else (`callKey`), and the shards are even whatever
 * the rate. The listing merges the shards (call-log-merge.ts): a page is one query a shard, in
 * parallel.
 *
 * The setting: 16. A call writes its item ~14 times (start, dispatch, each status, the relay's
 * session and transcript, the end's counters, the analysis) and the item grows to ~4 KB with its
 * transcript: at 100 calls a second in one workspace, counting every write as a transactional write
 * of the item's largest size, that is ~1,750 write units a second over 8 shards (over the partition's
 * 1,000) and ~875 over 16 (`BENCH_PARTS=hotkeys npm run bench`, docs/scale.md). It is one constant,
 * not an environment variable: every function must agree on it, and a call written under one count is
 * read under the same. Raising it moves calls to other keys: deploy, then run `npm run cli -- migrate
 * calls` (it moves every call whose key is not the one this count gives). Until then a call is read
 * at its old keys too (lifecycle.ts readCall: the unsharded key and each PREVIOUS_CALL_SHARDS count's
 * shard), and the listing reads the unsharded key beside the shards (call-log-merge.ts; a shard of a
 * smaller count that divides this one is one of this count's shards, so it is read anyway).
 */
export { CALL_SHARDS, CALLS_MIGRATED_KEY, MIGRATION_LAYOUT } from '../platform/key-moves.js';
/** The counts calls were sharded by before (each divides CALL_SHARDS: the listing reads their keys). */
export const PREVIOUS_CALL_SHARDS = [8] as const;

/** The workspace's one call key before the calls were sharded: the listing reads it until `migrate calls` has run. */
export const legacyCallsKey = (workspaceId: string): string => `WS#${workspaceId}#CALLS`;
export const callsShardKey = (workspaceId: string, shard: number): string =>
  `WS#${workspaceId}#CALLS#${shard}`;

const callHash = (callId: string): number =>
  createHash('sha256').update(callId.slice(-16)).digest().readUInt32BE(0);

/** The shard of a call (0 … CALL_SHARDS − 1), from its id's random part. */
export function callShardOf(callId: string): number {
  return callHash(callId) % CALL_SHARDS;
}

/** Where a call item may still be from before (the unsharded key, a previous count's shard). */
export function oldCallKeys(workspaceId: string, callId: string): { pk: string; sk: string }[] {
  const now = callShardOf(callId);
  const shards = PREVIOUS_CALL_SHARDS.map((count) => callHash(callId) % count).filter((n) => n !== now);
  return [legacyCallsKey(workspaceId), ...shards.map((n) => callsShardKey(workspaceId, n))].map((pk) => ({
    pk,
    sk: `CALL#${callId}`,
  }));
}

/** The key of a call item as CallEntity takes it: `CallEntity.get(callKey(ws, call))`. */
export const callKey = (workspaceId: string, callId: string) => ({
  workspaceId,
  callId,
  callShard: callShardOf(callId),
});

/** The call item's table key (start-call's raw items, the migration). */
export const callTableKey = (workspaceId: string, callId: string) => ({
  pk: callsShardKey(workspaceId, callShardOf(callId)),
  sk: `CALL#${callId}`,
});

/** Where a call item found at another key (the old single key, another count of shards) belongs. */
export const callTarget = (item: Record<string, unknown>) => {
  const callId = item.callId as string;
  return { key: callTableKey(item.workspaceId as string, callId), adds: { callShard: callShardOf(callId) } };
};
