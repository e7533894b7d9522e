import type { callingService } from './entities.js';

/**
 * A workspace's concurrency slots: `activeCalls` counts its calls that have not ended, and may not
 * reach `concurrentCallLimit`. A call takes a slot in the transaction that creates it (start-call, an
 * inbound call) and gives it back in the transaction that ends it (lifecycle), so the counter moves
 * only with the call's own record. Each returns one item of `callingService.transaction.write`; its
 * condition fails (ConditionalCheckFailed) when no slot is free or the workspace is deleted, and when
 * releasing a counter that is already 0.
 */
type TransactionEntities = Parameters<Parameters<typeof callingService.transaction.write>[0]>[0];
type WorkspaceInTransaction = TransactionEntities['workspace'];

export function takeConcurrencySlot(workspace: WorkspaceInTransaction, workspaceId: string) {
  return workspace
    .patch({ workspaceId })
    .add({ activeCalls: 1 })
    .where(
      (attr, op) =>
        `${op.name(attr.activeCalls)} < ${op.name(attr.concurrentCallLimit)} AND ${op.notExists(attr.deletedAt)}`,
    )
    .commit();
}

export function releaseConcurrencySlot(workspace: WorkspaceInTransaction, workspaceId: string) {
  return workspace
    .patch({ workspaceId })
    .add({ activeCalls: -1 })
    .where((attr, op) => op.gt(attr.activeCalls, 0))
    .commit();
}
