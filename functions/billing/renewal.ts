import { clock } from '../platform/clock.js';
import { logger } from '../platform/logger.js';
import { ALL_SHARDS, BillingAccountEntity } from './entities.js';
import { getBillingAccount, writeLedger, type EntryDraft } from './ledger.js';
import { unspentIncludedUnits } from './plan-changes.js';
import { includedUnits, periodExpiryKey, periodGrantKey, periodOf, PLANS } from './plans.js';
import { reconcileAgents } from './suspension.js';

export type RenewalOutcome = 'renewed' | 'not_due' | 'deferred' | 'missing';

const monthName = (iso: string) => iso.slice(0, 7);

/**
 * Starts a new monthly period for an account whose period has ended: the unused part of the period's
 * included credits expires (included credits are spent first; purchased credits never expire) and the
 * plan's included credits are granted again — in one transaction, conditioned on the period and the
 * balance that were read, under the period's own cause keys. So a period renews once, however many
 * times the job runs, and a charge landing meanwhile is never lost (the write is retried on a fresh
 * read). An account whose payment failed (past due) is renewed once it is in good standing again.
 */
export async function renewAccount(organisationId: string, now: Date = clock.now()): Promise<RenewalOutcome> {
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const account = await getBillingAccount(organisationId, { consistent: true });
    if (!account) return 'missing';
    if (account.periodEnd > now.toISOString()) return 'not_due';
    if (account.subscriptionStatus === 'past_due') return 'deferred';
    const period = periodOf(now);
    if (period.start <= account.periodStart) return 'not_due';

    const expiring = unspentIncludedUnits(account);
    const grant = includedUnits(account.plan);
    const entries: EntryDraft[] = [];
    if (expiring > 0) {
      entries.push({
        kind: 'expiry',
        amountUnits: -expiring,
        reason: `Unused included credits of ${monthName(account.periodStart)} expired`,
        sourceKey: periodExpiryKey(account.periodStart),
      });
    }
    entries.push({
      kind: 'grant',
      amountUnits: grant,
      reason: `${PLANS[account.plan].name} plan: included credits for ${monthName(period.start)}`,
      sourceKey: periodGrantKey(period.start),
    });
    const outcome = await writeLedger({
      organisationId,
      entries,
      expect: {
        periodStart: account.periodStart,
        balanceUnits: account.balanceUnits,
        plan: account.plan,
        periodIncludedUnits: account.periodIncludedUnits ?? null,
      },
      changes: {
        periodStart: period.start,
        periodEnd: period.end,
        periodIncludedUnits: grant,
        resetPeriodCounters: true,
      },
    });
    if (outcome.status === 'rejected') continue; // a charge or a plan change landed meanwhile: read again
    if (outcome.status === 'duplicate') return 'not_due';
    logger.info('credits renewed', {
      organisationId,
      period: period.start,
      expiredUnits: expiring,
      grantedUnits: grant,
    });
    await reconcileAgents(organisationId);
    return 'renewed';
  }
  throw new Error(`renewal of ${organisationId} did not settle`);
}

/** Organisations whose period ended by `now` (from the renewal index, every shard). */
export async function dueAccounts(now: Date): Promise<string[]> {
  const nowIso = now.toISOString();
  const due: string[] = [];
  for (const renewalShard of ALL_SHARDS) {
    const { data } = await BillingAccountEntity.query
      .byRenewal({ renewalShard })
      .lt({ periodEnd: nowIso })
      .go({ pages: 'all' });
    for (const account of data) if (account.periodEnd <= nowIso) due.push(account.organisationId);
  }
  return due;
}

/** The scheduled job: renews every account whose period ended; one failure does not stop the others. */
export async function renewDueAccounts(
  now: Date = clock.now(),
): Promise<Record<RenewalOutcome | 'failed', number>> {
  const counts: Record<RenewalOutcome | 'failed', number> = {
    renewed: 0,
    not_due: 0,
    deferred: 0,
    missing: 0,
    failed: 0,
  };
  const queue = await dueAccounts(now);
  const worker = async () => {
    for (let organisationId = queue.pop(); organisationId; organisationId = queue.pop()) {
      try {
        counts[await renewAccount(organisationId, now)] += 1;
      } catch (error) {
        counts.failed += 1;
        logger.error('renewal failed', { organisationId, error });
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return counts;
}
