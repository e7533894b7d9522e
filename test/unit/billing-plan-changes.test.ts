import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import type { PlanId, SubscriptionStatus } from '../../functions/billing/model.js';
import { planChangeCredits, unspentIncludedUnits } from '../../functions/billing/plan-changes.js';
import { includedUnits, PAID_PLAN_IDS } from '../../functions/billing/plans.js';

/** The plan-change rule (docs/billing.md, "Plan changes"), decided from an account as read. */
const CREDIT = 60;
const PERIOD = '2026-11-01T00:00:00.000Z';

interface Read {
  plan: PlanId;
  subscriptionStatus: SubscriptionStatus;
  periodStart: string;
  balanceUnits: number;
  periodIncludedUnits?: number;
  spentUnits?: number;
}
const growth = (over: Partial<Read> = {}): Read => ({
  plan: 'growth',
  subscriptionStatus: 'active',
  periodStart: PERIOD,
  balanceUnits: 64_000 * CREDIT,
  periodIncludedUnits: 64_000 * CREDIT,
  spentUnits: 0,
  ...over,
});
const end = { plan: 'free' as const, status: 'canceled' as const, subscriptionId: 'sub_1' };

describe('a subscription ends (back to Free)', () => {
  test('the unused included credits expire and the Free plan’s 500 are granted, each under the subscription’s cause key', () => {
    expect(planChangeCredits(growth(), end)).toEqual({
      entries: [
        expect.objectContaining({
          kind: 'expiry',
          amountUnits: -64_000 * CREDIT,
          sourceKey: 'expiry:subscription:sub_1',
        }),
        expect.objectContaining({
          kind: 'grant',
          amountUnits: 500 * CREDIT,
          sourceKey: 'grant:subscription-end:sub_1',
        }),
      ],
      periodIncludedUnits: 500 * CREDIT,
      dependsOnBalance: true,
    });
  });

  test('purchased credits stay; what was spent came out of the included ones', () => {
    // 64,000 included, 1,000 spent, 2,000 purchased: 65,000 in the balance, 63,000 included left.
    const read = growth({ balanceUnits: 65_000 * CREDIT, spentUnits: 1_000 * CREDIT });
    const change = planChangeCredits(read, end);
    expect(change.entries[0]).toMatchObject({ kind: 'expiry', amountUnits: -63_000 * CREDIT });
    expect(change.periodIncludedUnits).toBe(1_500 * CREDIT);
  });

  test('a balance at or below zero has nothing to expire; the grant still comes', () => {
    const change = planChangeCredits(
      growth({ balanceUnits: -100 * CREDIT, spentUnits: 64_100 * CREDIT }),
      end,
    );
    expect(change.entries).toEqual([expect.objectContaining({ kind: 'grant', amountUnits: 500 * CREDIT })]);
  });

  test('a past-due subscription ending is the same', () => {
    expect(planChangeCredits(growth({ subscriptionStatus: 'past_due' }), end).entries).toHaveLength(2);
  });

  test('an end reported again (the account is already canceled) moves nothing', () => {
    const after = growth({
      plan: 'free',
      subscriptionStatus: 'canceled',
      balanceUnits: 500 * CREDIT,
      periodIncludedUnits: 500 * CREDIT,
    });
    expect(planChangeCredits(after, end)).toEqual({ entries: [], dependsOnBalance: false });
  });

  test('whatever the balance and spending: only included credits expire, exactly 500 are granted, and a replay moves nothing', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...PAID_PLAN_IDS),
        fc.integer({ min: 0, max: 300_000 * CREDIT }),
        fc.integer({ min: 0, max: 100_000 * CREDIT }),
        fc.integer({ min: -5_000 * CREDIT, max: 0 }),
        (plan, spent, purchased, overdraft) => {
          const included = includedUnits(plan);
          const balance = Math.max(included - spent, 0) + purchased + (spent > included ? overdraft : 0);
          const read = growth({
            plan,
            periodIncludedUnits: included,
            spentUnits: spent,
            balanceUnits: balance,
          });
          const change = planChangeCredits(read, end);
          const total = change.entries.reduce((sum, e) => sum + e.amountUnits, 0);
          const expiry = change.entries.find((e) => e.kind === 'expiry');
          const expired = expiry ? -expiry.amountUnits : 0;
          expect(expired).toBe(unspentIncludedUnits(read));
          expect(expired).toBeLessThanOrEqual(Math.max(0, included - spent));
          expect(expired).toBeLessThanOrEqual(Math.max(0, balance));
          // Purchased credits (what is in the balance beyond the unspent included ones) are kept.
          expect(balance + total).toBe(balance - expired + 500 * CREDIT);
          expect(balance - expired).toBeGreaterThanOrEqual(Math.min(balance, purchased));
          // The period's included credits after the change leave exactly the Free grant unspent.
          const after = {
            ...read,
            plan: 'free' as const,
            subscriptionStatus: 'canceled' as const,
            balanceUnits: balance + total,
            periodIncludedUnits: change.periodIncludedUnits,
          };
          expect(unspentIncludedUnits(after)).toBe(Math.min(500 * CREDIT, Math.max(0, balance + total)));
          expect(planChangeCredits(after, end).entries).toEqual([]);
        },
      ),
    );
  });
});

describe('a plan starts or changes (active)', () => {
  test('more included credits than the period has had: the difference, once per plan, period and subscription', () => {
    const free: Read = {
      plan: 'free',
      subscriptionStatus: 'none',
      periodStart: PERIOD,
      balanceUnits: 500 * CREDIT,
    };
    expect(planChangeCredits(free, { plan: 'growth', status: 'active', subscriptionId: 'sub_2' })).toEqual({
      entries: [
        expect.objectContaining({
          kind: 'grant',
          amountUnits: 63_500 * CREDIT,
          sourceKey: 'grant:plan:growth:2026-11-01:sub_2',
        }),
      ],
      periodIncludedUnits: 64_000 * CREDIT,
      dependsOnBalance: false,
    });
  });

  test('a downgrade and past due take nothing back', () => {
    expect(
      planChangeCredits(growth(), { plan: 'starter', status: 'active', subscriptionId: 'sub_1' }).entries,
    ).toEqual([]);
    expect(
      planChangeCredits(growth(), { plan: 'growth', status: 'past_due', subscriptionId: 'sub_1' }).entries,
    ).toEqual([]);
  });
});
