import { Service } from '../platform/entity.js';
import { clock } from '../platform/clock.js';
import { paymentRequired } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { legacyLayoutInUse } from '../platform/key-moves.js';
import { entityConfig, tableName } from '../platform/table.js';
import {
  BillingAccountEntity,
  legacyLedgerKey,
  LedgerEntryEntity,
  LedgerKeyEntity,
  SubscribedAccountEntity,
  type BillingAccount,
  type LedgerKind,
  type PlanId,
  type SubscriptionStatus,
  type UsageKind,
} from './entities.js';
import { reconcileAgents } from './suspension.js';

export const INSUFFICIENT_CREDITS = 'Insufficient credits';

export const ledgerService = new Service(
  {
    billingAccount: BillingAccountEntity,
    ledgerEntry: LedgerEntryEntity,
    ledgerKey: LedgerKeyEntity,
    subscribedAccount: SubscribedAccountEntity,
  },
  entityConfig(),
);

export interface Movement {
  organisationId: string;
  kind: LedgerKind;
  /** Signed units: positive adds credits, negative spends them. */
  amountUnits: number;
  reason: string;
  /** The cause, unique per organisation: `call_…:call`, `call_…:memories`, `sms:<id>`, `grant:period:2026-11-01`. */
  sourceKey: string;
  /**
   * Spend only what is there (prepaid actions: an evaluation run, an SMS). Usage that already
   * happened (a finished call) is charged in full even when it takes the balance below zero.
   */
  requireFunds?: boolean;
  /** For charges: the metering rule and its quantity, added to the period's usage counters. */
  usage?: { kind: UsageKind; quantity: number };
  /** Other domains' items written in the same transaction (LedgerWrite's `alsoWrite`). */
  alsoWrite?: TransactionCommit[];
}

/**
 * An item of another entity on the table, committed for a transaction (`Entity.create(…).commit()`):
 * written with the ledger's movement or not at all (an evaluation run with its charge).
 */
export type TransactionCommit = object;

export interface MovementResult {
  applied: boolean;
  /** True when this cause had already been applied: nothing changed now. */
  duplicate: boolean;
  entryId?: string;
}

/** One ledger entry of a write (the organisation is the write's). */
export type EntryDraft = Omit<Movement, 'organisationId' | 'requireFunds' | 'alsoWrite'>;

type Counter =
  | 'balanceUnits'
  | 'spentUnits'
  | 'callUnits'
  | 'callSeconds'
  | 'memoriesUnits'
  | 'memoriesSeconds'
  | 'smsUnits'
  | 'smsSegments'
  | 'evaluationUnits'
  | 'evaluationRuns';

export const USAGE_COUNTERS: Record<UsageKind, { units: Counter; quantity: Counter }> = {
  call: { units: 'callUnits', quantity: 'callSeconds' },
  memories: { units: 'memoriesUnits', quantity: 'memoriesSeconds' },
  sms: { units: 'smsUnits', quantity: 'smsSegments' },
  evaluation: { units: 'evaluationUnits', quantity: 'evaluationRuns' },
};
export const PERIOD_COUNTERS: Counter[] = [
  'spentUnits',
  ...Object.values(USAGE_COUNTERS).flatMap((c) => [c.units, c.quantity]),
];

/** What the account must still look like for the write to apply (optimistic concurrency on a read). */
export interface AccountExpectation {
  periodStart?: string;
  balanceUnits?: number;
  plan?: PlanId;
  subscriptionStatus?: SubscriptionStatus;
  /** `null`: the attribute is not set. */
  periodIncludedUnits?: number | null;
  /** The account's statusEventAt is unset or not after this (provider events apply in order). */
  statusEventAtMost?: number;
}

/** Other changes to the account in the same transaction. */
export interface AccountChanges {
  plan?: PlanId;
  subscriptionStatus?: SubscriptionStatus;
  periodStart?: string;
  periodEnd?: string;
  periodIncludedUnits?: number;
  providerSubscriptionId?: string;
  providerCustomerId?: string;
  statusEventAt?: number;
  /** Set the period's usage counters to zero (a new period). */
  resetPeriodCounters?: boolean;
  clearRequestedPlan?: boolean;
}

export interface LedgerWrite {
  organisationId: string;
  entries: EntryDraft[];
  /** Spending entries may not take the balance below zero (402 when they would). */
  requireFunds?: boolean;
  expect?: AccountExpectation;
  changes?: AccountChanges;
  /** Keep the "subscribed accounts" registry in step with a subscription change. */
  subscribed?:
    { put: { shard: string; subscriptionId: string; customerId: string } } | { remove: { shard: string } };
  /** Other domains' items, last in the transaction: they are written with the movement or not at all. */
  alsoWrite?: TransactionCommit[];
  /**
   * The caller's own items (`alsoWrite`) already make each cause apply once, whatever the ledger keys
   * (a call's charge: the call marked counted, on condition; an SMS's: its message created, its
   * recipient claimed): the keys a cause had before they had their own partition key are not checked.
   */
  causeGuarded?: boolean;
}

export type LedgerWriteOutcome =
  | { status: 'applied'; entryIds: string[] }
  /** One of the entries' causes had already been applied: nothing changed. */
  | { status: 'duplicate' }
  /** The account is missing, lacks the funds, or no longer matches `expect`: nothing changed. */
  | { status: 'rejected' };

const MAX_CONFLICT_RETRIES = 8;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The one transaction credits move in: each entry with its cause key (condition: not seen before)
 * and the account (atomic ADD of the balance and the usage counters, condition: it exists, covers
 * the spend when funds are required, and still matches what the caller read). So a cause is applied
 * at most once and concurrent movements never lose an update. Transaction conflicts are retried.
 */
export async function writeLedger(write: LedgerWrite): Promise<LedgerWriteOutcome> {
  const outcome = await writeLedgerReporting(write);
  if (outcome.status === 'refused')
    throw new Error(`ledger write rejected for ${write.organisationId}: ${JSON.stringify(outcome.codes)}`);
  return outcome;
}

/**
 * `writeLedger`, but an `alsoWrite` item whose condition failed is an outcome (`refused`, with the
 * cancellation code of each `alsoWrite` item in order) rather than an error: the caller's own items
 * were conditions of the movement (an SMS claimed with its charge: the recipient still pending, the
 * number not suppressed) and it decides what their refusal means.
 */
export async function writeLedgerReporting(
  write: LedgerWrite,
): Promise<LedgerWriteOutcome | { status: 'refused'; codes: string[] }> {
  const { organisationId, entries, expect = {}, changes = {} } = write;
  for (const entry of entries) {
    if (!Number.isInteger(entry.amountUnits)) throw new Error('ledger amounts are whole units');
  }
  const createdAt = clock.now().toISOString();
  const entryIds = entries.map(() => newId('ledgerEntry'));
  const total = entries.reduce((sum, entry) => sum + entry.amountUnits, 0);
  // What the period spent: charges, less refunds of charges (a refund may carry the charge's usage, negated).
  const spend = entries.reduce(
    (sum, entry) => sum + (entry.kind === 'charge' || entry.kind === 'refund' ? -entry.amountUnits : 0),
    0,
  );

  if (changes.resetPeriodCounters && (spend !== 0 || entries.some((entry) => entry.usage))) {
    throw new Error('a new period starts without charges');
  }
  const adds: Partial<Record<Counter, number>> = { balanceUnits: total };
  if (spend !== 0) adds.spentUnits = spend;
  for (const entry of entries) {
    if (!entry.usage) continue;
    const counters = USAGE_COUNTERS[entry.usage.kind];
    adds[counters.units] = (adds[counters.units] ?? 0) - entry.amountUnits;
    adds[counters.quantity] = (adds[counters.quantity] ?? 0) + entry.usage.quantity;
  }
  const periodCounters = changes.resetPeriodCounters
    ? (Object.fromEntries(PERIOD_COUNTERS.map((c) => [c, 0])) as Partial<Record<Counter, number>>)
    : {};
  const { resetPeriodCounters: _reset, clearRequestedPlan: _clear, ...assigned } = changes;
  const sets = {
    ...periodCounters,
    ...(Object.fromEntries(
      Object.entries(assigned).filter(([, value]) => value !== undefined),
    ) as typeof assigned),
    updatedAt: createdAt,
  };
  const needsFunds = write.requireFunds === true && total < 0;
  // Until `migrate calls` has moved them, a cause's key may still be at the organisation's key.
  const legacyKeys =
    write.causeGuarded !== true && (await legacyLayoutInUse())
      ? entries.map((entry) => legacyLedgerKey(organisationId, entry.sourceKey))
      : [];

  for (let attempt = 0; ; attempt += 1) {
    const result = await ledgerService.transaction
      .write(({ billingAccount, ledgerEntry, ledgerKey, subscribedAccount }) => {
        const update = billingAccount.update({ organisationId }).add(adds).set(sets);
        const account = (changes.clearRequestedPlan ? update.remove(['requestedPlan']) : update)
          .where((attr, op) => {
            const clauses = [op.exists(attr.organisationId)];
            if (needsFunds) clauses.push(op.gte(attr.balanceUnits, -total));
            if (expect.periodStart !== undefined) clauses.push(op.eq(attr.periodStart, expect.periodStart));
            if (expect.balanceUnits !== undefined)
              clauses.push(op.eq(attr.balanceUnits, expect.balanceUnits));
            if (expect.plan !== undefined) clauses.push(op.eq(attr.plan, expect.plan));
            if (expect.subscriptionStatus !== undefined)
              clauses.push(op.eq(attr.subscriptionStatus, expect.subscriptionStatus));
            if (expect.periodIncludedUnits === null) clauses.push(op.notExists(attr.periodIncludedUnits));
            else if (expect.periodIncludedUnits !== undefined)
              clauses.push(op.eq(attr.periodIncludedUnits, expect.periodIncludedUnits));
            if (expect.statusEventAtMost !== undefined) {
              clauses.push(
                `(${op.notExists(attr.statusEventAt)} OR ${op.lte(attr.statusEventAt, expect.statusEventAtMost)})`,
              );
            }
            return clauses.join(' AND ');
          })
          .commit();
        const items = [account];
        entries.forEach((entry, i) => {
          const entryId = entryIds[i];
          items.push(ledgerKey.create({ organisationId, sourceKey: entry.sourceKey, entryId }).commit());
          items.push(
            ledgerEntry
              .create({
                organisationId,
                entryId,
                kind: entry.kind,
                amountUnits: entry.amountUnits,
                reason: entry.reason,
                sourceKey: entry.sourceKey,
                usageKind: entry.usage?.kind,
                quantity: entry.usage?.quantity,
                createdAt,
              })
              .commit(),
          );
        });
        const subscribed = write.subscribed;
        if (subscribed && 'put' in subscribed) {
          items.push(subscribedAccount.put({ organisationId, since: createdAt, ...subscribed.put }).commit());
        } else if (subscribed) {
          items.push(subscribedAccount.delete({ shard: subscribed.remove.shard, organisationId }).commit());
        }
        for (const Key of legacyKeys) {
          const check = {
            ConditionCheck: {
              TableName: tableName(),
              Key,
              ConditionExpression: 'attribute_not_exists(#pk)',
              ExpressionAttributeNames: { '#pk': 'pk' },
            },
          };
          items.push(check as unknown as (typeof items)[number]);
        }
        items.push(...((write.alsoWrite ?? []) as typeof items));
        return items;
      })
      .go();
    if (!result.canceled) return { status: 'applied', entryIds };
    const codes = (result.data as { code?: string }[]).map((d) => d.code);
    // Items: the account, then (key, entry) per entry, then the registry row, the old keys' checks
    // and the caller's items.
    const keyRejected = entries.some((_, i) => codes[1 + 2 * i] === 'ConditionalCheckFailed');
    const legacyFrom = codes.length - (write.alsoWrite?.length ?? 0) - legacyKeys.length;
    const legacyRejected = legacyKeys.some((_, i) => codes[legacyFrom + i] === 'ConditionalCheckFailed');
    if (keyRejected || legacyRejected) return { status: 'duplicate' };
    if (codes[0] === 'ConditionalCheckFailed') return { status: 'rejected' };
    const also = codes.slice(codes.length - (write.alsoWrite?.length ?? 0));
    if (also.includes('ConditionalCheckFailed'))
      return { status: 'refused', codes: also.map((code) => code ?? 'None') };
    if (codes.includes('TransactionConflict') && attempt < MAX_CONFLICT_RETRIES) {
      await sleep(10 + Math.random() * 20 * 2 ** Math.min(attempt, 4));
      continue;
    }
    throw new Error(`ledger write rejected for ${organisationId}: ${JSON.stringify(codes)}`);
  }
}

/**
 * Moves credits once per cause. A charge with `requireFunds` that the balance does not cover is a
 * 402 `Insufficient credits`. After a movement the organisation's agents are switched off or on when
 * the Free plan's credits ran out or came back.
 */
export async function recordMovement(movement: Movement): Promise<MovementResult> {
  const { organisationId, requireFunds, alsoWrite, ...entry } = movement;
  const outcome = await writeLedger({ organisationId, entries: [entry], requireFunds, alsoWrite });
  if (outcome.status === 'duplicate') return { applied: false, duplicate: true };
  if (outcome.status === 'rejected') {
    if (requireFunds && movement.amountUnits < 0) {
      const account = await getBillingAccount(organisationId);
      if (account) throw paymentRequired(INSUFFICIENT_CREDITS);
    }
    throw new Error(`no billing account for ${organisationId}`);
  }
  if (movement.amountUnits !== 0) await reconcileAgents(organisationId);
  return { applied: true, duplicate: false, entryId: outcome.entryIds[0] };
}

export async function getBillingAccount(
  organisationId: string,
  options: { consistent?: boolean } = {},
): Promise<BillingAccount | null> {
  return (await BillingAccountEntity.get({ organisationId }).go({ consistent: options.consistent ?? false }))
    .data;
}
