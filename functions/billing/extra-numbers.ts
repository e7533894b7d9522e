import { isConditionFailure } from '../platform/table.js';
import { clock } from '../platform/clock.js';
import { logger } from '../platform/logger.js';
import { paymentsProvider } from '../providers/payments/index.js';
import { CURRENCY, EXTRA_NUMBER_PRICE_CENTS } from './credits.js';
import { ALL_SHARDS, NumberChargeEntity, SubscribedAccountEntity } from './entities.js';
import { getBillingAccount } from './ledger.js';
import { PLANS } from './plans.js';
import { isLive } from './subscriptions.js';

export type NumberBillingOutcome = 'billed' | 'nothing_extra' | 'already_billed' | 'not_subscribed';

/**
 * How many phone numbers an organisation holds now. Numbers sit above billing (docs/architecture.md),
 * so the count is handed in by the caller: the scheduled handler passes numbers' `countNumbers`.
 */
export type CountNumbers = (organisationId: string) => Promise<number>;

/**
 * Bills the numbers an organisation holds beyond its plan's included ones, once per monthly cycle
 * (the account's credit period), as an item on the subscription's next invoice: 10 AUD each. The
 * cycle's record is written first with a condition (so the count is taken once), then the provider
 * is asked with the cycle as idempotency key (so a retry after a failure never bills twice).
 */
export async function billAccountNumbers(
  organisationId: string,
  countNumbers: CountNumbers,
): Promise<NumberBillingOutcome> {
  const account = await getBillingAccount(organisationId, { consistent: true });
  if (
    !account ||
    !isLive(account.subscriptionStatus) ||
    !account.providerSubscriptionId ||
    !account.providerCustomerId
  ) {
    return 'not_subscribed';
  }
  const periodStart = account.periodStart;
  let charge = (await NumberChargeEntity.get({ organisationId, periodStart }).go({ consistent: true })).data;
  if (!charge) {
    const numbers = await countNumbers(organisationId);
    const includedNumbers = PLANS[account.plan].includedNumbers;
    const extraNumbers = Math.max(0, numbers - includedNumbers);
    const record = {
      organisationId,
      periodStart,
      numbers,
      includedNumbers,
      extraNumbers,
      amountCents: extraNumbers * EXTRA_NUMBER_PRICE_CENTS,
      currency: CURRENCY,
      createdAt: clock.now().toISOString(),
    };
    try {
      await NumberChargeEntity.create(record).go({ response: 'none' });
      charge = record;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      charge = (await NumberChargeEntity.get({ organisationId, periodStart }).go({ consistent: true })).data;
      if (!charge) throw error;
    }
  }
  if (charge.extraNumbers === 0) return 'nothing_extra';
  if (charge.providerItemId) return 'already_billed';
  const { itemId } = await paymentsProvider().addInvoiceItem({
    customerId: account.providerCustomerId,
    subscriptionId: account.providerSubscriptionId,
    amountCents: charge.amountCents,
    currency: charge.currency,
    description: `${charge.extraNumbers} extra phone number${charge.extraNumbers === 1 ? '' : 's'}, ${periodStart.slice(0, 7)}`,
    idempotencyKey: `numbers:${organisationId}:${periodStart}`,
  });
  await NumberChargeEntity.patch({ organisationId, periodStart })
    .set({ providerItemId: itemId })
    .go({ response: 'none' });
  logger.info('extra numbers billed', {
    organisationId,
    periodStart,
    extraNumbers: charge.extraNumbers,
    itemId,
  });
  return 'billed';
}

/** The scheduled job: every organisation with a live subscription, once per cycle each. */
export async function billExtraNumbers(
  countNumbers: CountNumbers,
): Promise<Record<NumberBillingOutcome | 'failed', number>> {
  const counts: Record<NumberBillingOutcome | 'failed', number> = {
    billed: 0,
    nothing_extra: 0,
    already_billed: 0,
    not_subscribed: 0,
    failed: 0,
  };
  for (const shard of ALL_SHARDS) {
    const { data } = await SubscribedAccountEntity.query.byShard({ shard }).go({ pages: 'all' });
    for (const { organisationId } of data) {
      try {
        counts[await billAccountNumbers(organisationId, countNumbers)] += 1;
      } catch (error) {
        counts.failed += 1;
        logger.error('extra number billing failed', { organisationId, error });
      }
    }
  }
  return counts;
}
