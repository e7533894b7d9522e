import type { z } from 'zod';
import type { StoredItem, TableKey, TransactionItem } from '../../platform/table.js';
import { ActionRunEntity, type ActionRun, type ActionType } from '../entities.js';
import type { ACTION_CONFIGS, CallRecordWire } from '../schemas.js';

/**
 * What every post-call action is: a function of its context, one file per action type in this folder,
 * all named in the registry (registry.ts). The run (run.ts) claims the action run, hands the action
 * the call's record and its parsed config, and records the outcome.
 */

/** An action that cannot succeed by trying again (bad config, no recipient, no credits, …). */
export class PermanentActionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentActionError';
  }
}

/** The config of an action type, as the agent's `post_call_actions[].config` holds it (schemas.ts). */
export type ActionConfig<T extends ActionType> = z.infer<(typeof ACTION_CONFIGS)[T]>;

export interface ActionContext<T extends ActionType> {
  /** The action run, claimed by this try. */
  run: ActionRun;
  /** The call's post-call record (the webhook payload's `data`). */
  record: CallRecordWire;
  config: ActionConfig<T>;
  /** The run's last try: an effect that will never happen gives back what it charged. */
  lastTry: boolean;
}

/**
 * One action type. It runs under the run's claim and may run again after a try that stopped half
 * way, so each effect is made once: recipients already served are in `run.sentTo` (`markSent`),
 * charges and deliveries carry ids fixed when the run was queued (`run.smsId`, `run.deliveryId`).
 * Throws PermanentActionError (or a provider's permanent error, or a 4xx HttpError) when trying again
 * cannot help; any other error is retried. Returns the run's result (stored as JSON).
 */
export type PostCallAction<T extends ActionType> = (context: ActionContext<T>) => Promise<unknown>;

/**
 * What a written action does: its whole effect is items written in the same transaction as the run's
 * result (so it needs no claim of its own: the transaction is conditioned on the run being free),
 * then `afterWrite` (a queue message). A redelivered message of a run that succeeded calls `resume`,
 * which makes good an `afterWrite` a crash may have lost. When an item's condition refuses the
 * transaction (the effect was made by a try before, outside it), `fallback` makes sure of the effect
 * and gives the run's result.
 */
export interface WrittenEffect {
  result: unknown;
  items: TransactionItem[];
  afterWrite: () => Promise<void>;
  fallback: () => Promise<unknown>;
}
export interface WrittenAction<T extends ActionType> {
  /**
   * Items it needs, read with the run in the same request when the message names the action's type
   * (ProcessCallEnded's do); `prepare` gets them in this order, or none when they were not read.
   */
  reads: (workspaceId: string) => TableKey[];
  /** Builds the effect (a PermanentActionError when it cannot be made: the run fails). */
  prepare: (context: Omit<ActionContext<T>, 'lastTry'>, read: (StoredItem | undefined)[]) => WrittenEffect;
  /** Makes good what a stopped try left; or until when another try holds it (look again then). */
  resume: (run: ActionRun) => Promise<{ busyUntil?: Date }>;
}

export const runKey = (run: Pick<ActionRun, 'workspaceId' | 'callId' | 'actionId'>) => ({
  workspaceId: run.workspaceId,
  callId: run.callId,
  actionId: run.actionId,
});

/** Records one recipient as sent, at once (a later try of this run skips it). */
export async function markSent(run: ActionRun, to: string): Promise<void> {
  await ActionRunEntity.patch(runKey(run))
    .append({ sentTo: [to] })
    .go({ response: 'none' });
}

export const otherPartyOf = (record: CallRecordWire) =>
  record.direction === 'inbound' ? record.from_phone : record.to_phone;
export const agentNumberOf = (record: CallRecordWire) =>
  record.direction === 'inbound' ? record.to_phone : record.from_phone;
