import { createHash } from 'node:crypto';
import type { EntityItem } from 'electrodb';
import { Entity } from '../platform/entity.js';
import { TABLE } from '../platform/resources.js';
import type { MoveTarget } from '../platform/key-moves.js';
import { entityConfig, entityKey, type StoredItem, type TableKey } from '../platform/table.js';
import { primaryIndex, gsi2 } from '../platform/keys.js';
import { LEDGER_KINDS, PLAN_IDS, SUBSCRIPTION_STATUSES, USAGE_KINDS } from './model.js';

export * from './model.js';

/**
 * Billing of an organisation. Access patterns (key → use):
 *   billing account   pk ORG#<org>   sk BILLING                      (plan, standing, balance and this
 *                                                                    period's usage, in units)
 *                     gsi2 BILLING#RENEWAL#<shard> / <periodEnd>#<org>  (accounts whose period ended:
 *                                                                    the monthly renewal job)
 *   ledger entry      pk ORG#<org>   sk LEDGER#<entry ulid>           (every credit movement; list newest first)
 *   ledger key        pk ORG#<org>#LEDGERKEY#<source key>  sk LEDGERKEY#<source key>  (written with a
 *                                                                    condition in the entry's transaction:
 *                                                                    one cause moves credits at most once)
 *   number charge     pk ORG#<org>   sk NUMBERCHARGE#<periodStart>    (extra numbers billed for a cycle, once)
 *   subscribed        pk BILLING#SUBSCRIBED#<shard>  sk ORG#<org>      (accounts with a live paid
 *                                                                    subscription: the extra-number job)
 *   payment customer  pk PAYCUSTOMER#<customer id>  sk PAYCUSTOMER     (provider customer → organisation)
 *   billing event     pk BILLINGEVENT#<event id>    sk BILLINGEVENT    (provider webhook events handled;
 *                                                                    expires after 30 days)
 * The renewal and subscribed partitions are spread over 16 shards (by organisation id) so no single
 * partition takes every account's writes.
 */
const cfg = entityConfig();

export const SHARD_COUNT = 16;
/** Stable shard of an organisation (0–15 as one hex digit). */
export const shardOf = (organisationId: string): string =>
  createHash('sha256').update(organisationId).digest('hex').slice(0, 1);
export const ALL_SHARDS = Array.from({ length: SHARD_COUNT }, (_, i) => i.toString(16));

const counter = { type: 'number' } as const;

export const BillingAccountEntity = new Entity(
  {
    model: { entity: 'billingAccount', version: '1', service: 'va' },
    attributes: {
      organisationId: { type: 'string', required: true },
      plan: { type: PLAN_IDS, required: true },
      subscriptionStatus: { type: SUBSCRIPTION_STATUSES, required: true },
      /**
       * Credit balance in units (see credits.ts). Prepaid actions (SMS, evaluations) never take it below
       * zero; a finished call is charged in full, so it may end slightly negative.
       */
      balanceUnits: { type: 'number', required: true },
      periodStart: { type: 'string', required: true },
      periodEnd: { type: 'string', required: true },
      /** Agents were switched off because the Free plan ran out of credits. */
      agentsSuspended: { type: 'boolean', default: false },
      providerCustomerId: { type: 'string' },
      providerSubscriptionId: { type: 'string' },
      /** The plan asked for (checkout or change) and not yet confirmed by the provider. */
      requestedPlan: { type: PLAN_IDS },
      /** `created` (epoch seconds) of the provider event that last set plan/status: older events are ignored. */
      statusEventAt: { type: 'number' },
      /** Included credits granted for this period (unused ones expire at renewal); unset: the plan's. */
      periodIncludedUnits: { type: 'number' },
      /** Units charged this period, and per kind (units and quantity: seconds, segments, runs). */
      spentUnits: counter,
      callUnits: counter,
      callSeconds: counter,
      memoriesUnits: counter,
      memoriesSeconds: counter,
      smsUnits: counter,
      smsSegments: counter,
      evaluationUnits: counter,
      evaluationRuns: counter,
      renewalShard: {
        type: 'string',
        watch: ['organisationId'],
        set: (_value: unknown, item: { organisationId?: string }) =>
          item.organisationId ? shardOf(item.organisationId) : undefined,
      },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string' },
    },
    indexes: {
      byOrganisation: primaryIndex(['organisationId'], 'ORG#${organisationId}', [], 'BILLING'),
      byRenewal: gsi2(
        ['renewalShard'],
        'BILLING#RENEWAL#${renewalShard}',
        ['periodEnd', 'organisationId'],
        '${periodEnd}#${organisationId}',
      ),
    },
  },
  cfg,
);

export type BillingAccount = EntityItem<typeof BillingAccountEntity>;

export const LedgerEntryEntity = new Entity(
  {
    model: { entity: 'ledgerEntry', version: '1', service: 'va' },
    attributes: {
      organisationId: { type: 'string', required: true },
      entryId: { type: 'string', required: true },
      kind: { type: LEDGER_KINDS, required: true },
      /** Signed amount in units: positive adds credits, negative spends them. */
      amountUnits: { type: 'number', required: true },
      reason: { type: 'string', required: true },
      /** What caused it, e.g. `call_…:call`, `sms:<id>`, `grant:period:2026-11-01`. Unique per organisation. */
      sourceKey: { type: 'string', required: true },
      /** For charges: the metering rule and the quantity it was applied to (seconds, segments, runs). */
      usageKind: { type: USAGE_KINDS },
      quantity: { type: 'number' },
      createdAt: { type: 'string', required: true },
    },
    indexes: {
      byOrganisation: primaryIndex(
        ['organisationId'],
        'ORG#${organisationId}',
        ['entryId'],
        'LEDGER#${entryId}',
      ),
    },
  },
  cfg,
);

export type LedgerEntry = EntityItem<typeof LedgerEntryEntity>;

/**
 * Marks a cause as applied: written with a condition in the same transaction as the entry. Each has a
 * partition key of its own (a charge's key is never listed, only checked): under the organisation's
 * key they were a third of its writes, past its budget at 100 calls a second (docs/scale.md). Those
 * written before are at `ORG#<org>` (`legacyLedgerKey`): until `migrate calls` has moved them, a
 * charge also checks there (ledger.ts), so a cause charged before is never charged again.
 */
export const LedgerKeyEntity = new Entity(
  {
    model: { entity: 'ledgerKey', version: '1', service: 'va' },
    attributes: {
      organisationId: { type: 'string', required: true },
      sourceKey: { type: 'string', required: true },
      entryId: { type: 'string', required: true },
    },
    indexes: {
      byKey: primaryIndex(
        ['organisationId', 'sourceKey'],
        'ORG#${organisationId}#LEDGERKEY#${sourceKey}',
        ['sourceKey'],
        'LEDGERKEY#${sourceKey}',
      ),
    },
  },
  cfg,
);

/** Where a ledger key was before it had its own partition key. */
export const legacyLedgerKey = (organisationId: string, sourceKey: string): TableKey => ({
  pk: `ORG#${organisationId}`,
  sk: `LEDGERKEY#${sourceKey}`,
});
/** Where a ledger key found at the organisation's key belongs now. */
export const ledgerKeyTarget = (item: StoredItem): MoveTarget => ({
  key: entityKey(
    LedgerKeyEntity.get({
      organisationId: item.organisationId as string,
      sourceKey: item.sourceKey as string,
    }).params(),
  ),
});

/** The extra phone numbers of one billing cycle, charged through the payment provider once. */
export const NumberChargeEntity = new Entity(
  {
    model: { entity: 'numberCharge', version: '1', service: 'va' },
    attributes: {
      organisationId: { type: 'string', required: true },
      periodStart: { type: 'string', required: true },
      numbers: { type: 'number', required: true },
      includedNumbers: { type: 'number', required: true },
      extraNumbers: { type: 'number', required: true },
      amountCents: { type: 'number', required: true },
      currency: { type: 'string', required: true },
      /** The provider's invoice item, once it has been created. */
      providerItemId: { type: 'string' },
      createdAt: { type: 'string', required: true },
    },
    indexes: {
      byOrganisation: primaryIndex(
        ['organisationId'],
        'ORG#${organisationId}',
        ['periodStart'],
        'NUMBERCHARGE#${periodStart}',
      ),
    },
  },
  cfg,
);

/** An organisation with a live (active or past due) paid subscription. */
export const SubscribedAccountEntity = new Entity(
  {
    model: { entity: 'subscribedAccount', version: '1', service: 'va' },
    attributes: {
      shard: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      subscriptionId: { type: 'string', required: true },
      customerId: { type: 'string', required: true },
      since: { type: 'string', required: true },
    },
    indexes: {
      byShard: primaryIndex(
        ['shard'],
        'BILLING#SUBSCRIBED#${shard}',
        ['organisationId'],
        'ORG#${organisationId}',
      ),
    },
  },
  cfg,
);

/** The organisation a payment provider customer belongs to (webhook events name the customer). */
export const PaymentCustomerEntity = new Entity(
  {
    model: { entity: 'paymentCustomer', version: '1', service: 'va' },
    attributes: {
      customerId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      createdAt: { type: 'string', required: true },
    },
    indexes: {
      byCustomer: primaryIndex(['customerId'], 'PAYCUSTOMER#${customerId}', [], 'PAYCUSTOMER'),
    },
  },
  cfg,
);

export const BILLING_EVENT_RETENTION_SECONDS = 30 * 24 * 3600;

/** A provider webhook event: claimed before it is handled, marked done after; a duplicate id does nothing. */
export const BillingEventEntity = new Entity(
  {
    model: { entity: 'billingEvent', version: '1', service: 'va' },
    attributes: {
      eventId: { type: 'string', required: true },
      type: { type: 'string', required: true },
      state: { type: ['processing', 'done'] as const, required: true },
      organisationId: { type: 'string' },
      claimedAt: { type: 'number', required: true },
      processedAt: { type: 'string' },
      expiresAt: { type: 'number', required: true, field: TABLE.ttlAttribute },
    },
    indexes: {
      byId: primaryIndex(['eventId'], 'BILLINGEVENT#${eventId}', [], 'BILLINGEVENT'),
    },
  },
  cfg,
);
