import type { callingService, Call } from './entities.js';
import { takeConcurrencySlot } from './concurrency.js';
import { RANK } from './status.js';

type TransactionEntities = Parameters<Parameters<typeof callingService.transaction.write>[0]>[0];
type OpeningEntities = Pick<TransactionEntities, 'call' | 'callStatusEvent' | 'openCall' | 'workspace'>;

/**
 * The items a live call is opened with, in one transaction beside the caller's own: the call, its
 * status events up to the status it starts in, its sweeper marker, and a concurrency slot of its
 * workspace (whose condition cancels the transaction when none is free). An inbound call and a test
 * chat open with these; start-call writes the same items plainly for speed (start-call-items.ts,
 * held to these by test/unit/hot-path-items.test.ts).
 */
export function callOpeningWrites(entities: OpeningEntities, call: Call, source: 'api' | 'provider') {
  const { callId, workspaceId, createdAt: at } = call;
  const event = { callId, workspaceId, at, source, recordedAt: at } as const;
  const statuses = call.status === 'created' ? (['created'] as const) : (['created', call.status] as const);
  return [
    entities.call.create(call).commit(),
    ...statuses.map((status) =>
      entities.callStatusEvent.create({ ...event, rank: RANK[status], status }).commit(),
    ),
    entities.openCall.create({ shard: call.openShard, createdAt: at, callId, workspaceId }).commit(),
    takeConcurrencySlot(entities.workspace, workspaceId),
  ];
}
