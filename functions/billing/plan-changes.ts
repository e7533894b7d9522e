import type { BillingAccount, PlanId, SubscriptionStatus } from './entities.js';
import type { EntryDraft } from './ledger.js';
import {
  includedUnits,
  planUpgradeGrantKey,
  PLANS,
  subscriptionEndExpiryKey,
  subscriptionEndGrantKey,
} from './plans.js';

/**
 * What a plan change does to the credits (docs/billing.md, "Plan changes"), decided from the account
 * as it was read; no table access here. The caller writes the entries and the account in one ledger
 * transaction conditioned on what it read.
 */

/** A subscription that is running (paid or waiting for a failed payment to be retried). */
export const isLive = (status: SubscriptionStatus): boolean => status === 'active' || status === 'past_due';

type CreditsRead = Pick<BillingAccount, 'plan' | 'periodIncludedUnits' | 'spentUnits' | 'balanceUnits'>;

/**
 * The period's included credits: granted this period (after a subscription ended: what was spent plus
 * the Free grant); unset on the account: the plan's.
 */
export const periodIncluded = (account: Pick<BillingAccount, 'plan' | 'periodIncludedUnits'>): number =>
  account.periodIncludedUnits ?? includedUnits(account.plan);

/**
 * The period's included credits still in the balance. Included credits are spent first and purchased
 * credits never expire: what is left of the included ones is what was granted less what was spent,
 * and never more than the balance (a balance at or below zero has none left).
 */
export function unspentIncludedUnits(account: CreditsRead): number {
  const unspent = Math.max(0, periodIncluded(account) - (account.spentUnits ?? 0));
  return Math.min(unspent, Math.max(0, account.balanceUnits));
}

export interface PlanChangeCredits {
  /** Ledger entries, each under its own cause key (so a replay of the change applies none of them). */
  entries: EntryDraft[];
  /** The period's included credits after the change; undefined: unchanged. */
  periodIncludedUnits?: number;
  /** The entries depend on the balance read: the write must find it unchanged. */
  dependsOnBalance: boolean;
}

const NOTHING: PlanChangeCredits = { entries: [], dependsOnBalance: false };

/**
 * The credits of a subscription change the provider reported:
 * - **a live subscription ends** (canceled, back to Free): the unspent included credits of the plan
 *   that ended expire, and the Free plan's included credits are granted — under cause keys of the
 *   subscription that ended, so this happens once per subscription. Purchased credits stay.
 * - **a plan starts or changes** (active): a plan with more included credits than this period has had
 *   grants the difference at once; one with fewer takes nothing back.
 * - anything else (past due, an ended subscription reported again) moves no credits.
 */
export function planChangeCredits(
  account: CreditsRead & Pick<BillingAccount, 'subscriptionStatus' | 'periodStart'>,
  change: { plan: PlanId; status: SubscriptionStatus; subscriptionId: string },
): PlanChangeCredits {
  if (change.status === 'canceled') {
    if (!isLive(account.subscriptionStatus)) return NOTHING; // already ended: nothing moves again
    const expiring = unspentIncludedUnits(account);
    const grant = includedUnits(change.plan);
    const entries: EntryDraft[] = [];
    if (expiring > 0) {
      entries.push({
        kind: 'expiry',
        amountUnits: -expiring,
        reason: `${PLANS[account.plan].name} plan ended: its unused included credits expired`,
        sourceKey: subscriptionEndExpiryKey(change.subscriptionId),
      });
    }
    if (grant > 0) {
      entries.push({
        kind: 'grant',
        amountUnits: grant,
        reason: `${PLANS[change.plan].name} plan: included credits for this period`,
        sourceKey: subscriptionEndGrantKey(change.subscriptionId),
      });
    }
    // Nothing of the ended plan's included credits is left unspent now: the period's included credits
    // are what was spent plus the new grant, so renewal expires only what is left of the grant.
    return { entries, periodIncludedUnits: (account.spentUnits ?? 0) + grant, dependsOnBalance: true };
  }
  if (change.status !== 'active') return NOTHING;
  const grant = Math.max(0, includedUnits(change.plan) - periodIncluded(account));
  if (grant === 0) return NOTHING;
  return {
    entries: [
      {
        kind: 'grant',
        amountUnits: grant,
        reason: `${PLANS[change.plan].name} plan: included credits for this period`,
        sourceKey: planUpgradeGrantKey(change.plan, account.periodStart, change.subscriptionId),
      },
    ],
    periodIncludedUnits: includedUnits(change.plan),
    dependsOnBalance: false,
  };
}
