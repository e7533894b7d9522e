import { afterEach, describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { getBillingAccount } from '../../../functions/billing/ledger.js';
import { chargeCallUsage } from '../../../functions/billing/metering.js';
import { periodOf } from '../../../functions/billing/plans.js';
import { renewAccount } from '../../../functions/billing/renewal.js';
import { applySubscriptionChange } from '../../../functions/billing/subscriptions.js';
import { clock, resetClock } from '../../../functions/platform/clock.js';
import { ledgerEntries, newOrganisation, topUp } from './fixtures.js';

/**
 * Plan changes (docs/billing.md, "Plan changes"): when a subscription ends the organisation moves to
 * Free, the ended plan's unused included credits expire and the Free plan's 500 are granted, in the
 * plan change's own transaction, once per subscription; purchased credits stay.
 */
afterEach(() => resetClock());

const CREDIT = 60;
const account = async (organisationId: string) =>
  (await getBillingAccount(organisationId, { consistent: true }))!;
/** What the payments webhook handler passes billing; no held actions in these tests. */
const standing = { goodStandingRestored: async () => undefined };
const callOf = (organisationId: string, credits: number) =>
  chargeCallUsage({ organisationId, callId: `call_${randomUUID()}`, billableSeconds: credits * 3 });

async function expectLedgerMatchesBalance(organisationId: string) {
  const entries = await ledgerEntries(organisationId);
  expect(entries.reduce((sum, e) => sum + e.amountUnits, 0)).toBe(
    (await account(organisationId)).balanceUnits,
  );
}

/** A Free organisation subscribed to `plan` through the provider's (simulated) events. */
async function subscribed(plan: 'starter' | 'growth' | 'scale', label: string) {
  const { organisationId } = await newOrganisation(label);
  const subscription = {
    organisationId,
    customerId: `cus_test_${randomUUID()}`,
    subscriptionId: `sub_test_${randomUUID()}`,
  };
  const created = Math.floor(Date.now() / 1000);
  expect(
    await applySubscriptionChange(
      { ...subscription, status: 'active', plan, eventCreated: created },
      standing,
    ),
  ).toBe('applied');
  return { organisationId, subscription, created };
}

describe('a subscription ends: back to Free', () => {
  test('the unused included credits expire, purchased ones stay, the Free plan grants 500', async () => {
    const { organisationId, subscription, created } = await subscribed('growth', 'end-growth');
    await callOf(organisationId, 1_000); // spends included credits first
    await topUp(organisationId, 2_000);
    expect((await account(organisationId)).balanceUnits).toBe(65_000 * CREDIT);

    const ended = { ...subscription, status: 'canceled' as const, eventCreated: created + 1 };
    expect(await applySubscriptionChange(ended, standing)).toBe('applied');
    const after = await account(organisationId);
    // 64,000 included − 1,000 used = 63,000 expire; 2,000 purchased stay; 500 granted.
    expect(after).toMatchObject({
      plan: 'free',
      subscriptionStatus: 'canceled',
      balanceUnits: 2_500 * CREDIT,
      // What was spent this period (1,000) plus the Free grant (500).
      periodIncludedUnits: 1_500 * CREDIT,
      spentUnits: 1_000 * CREDIT,
      agentsSuspended: false,
    });
    const entries = await ledgerEntries(organisationId);
    expect(entries.filter((e) => e.kind === 'expiry')).toEqual([
      expect.objectContaining({
        amountUnits: -63_000 * CREDIT,
        sourceKey: `expiry:subscription:${subscription.subscriptionId}`,
      }),
    ]);
    expect(
      entries.find((e) => e.sourceKey === `grant:subscription-end:${subscription.subscriptionId}`),
    ).toMatchObject({ kind: 'grant', amountUnits: 500 * CREDIT });
    await expectLedgerMatchesBalance(organisationId);

    // The next renewal expires only what is left of the Free grant (500) and grants 500 again.
    const now = new Date(new Date(periodOf(clock.now()).end).getTime() + 3600_000);
    expect(await renewAccount(organisationId, now)).toBe('renewed');
    expect((await account(organisationId)).balanceUnits).toBe(2_500 * CREDIT);
    await expectLedgerMatchesBalance(organisationId);
  });

  test('a replayed subscription-deleted event changes nothing', async () => {
    const { organisationId, subscription, created } = await subscribed('starter', 'end-replay');
    const ended = { ...subscription, status: 'canceled' as const, eventCreated: created + 1 };
    expect(await applySubscriptionChange(ended, standing)).toBe('applied');
    const once = await account(organisationId);
    const entries = await ledgerEntries(organisationId);
    expect(once.balanceUnits).toBe(500 * CREDIT);

    // The same event (its id's claim long expired) and a later report of the same end.
    await applySubscriptionChange(ended, standing);
    await applySubscriptionChange({ ...ended, eventCreated: created + 60 }, standing);
    const after = await account(organisationId);
    expect({
      balance: after.balanceUnits,
      included: after.periodIncludedUnits,
      plan: after.plan,
      status: after.subscriptionStatus,
    }).toEqual({
      balance: once.balanceUnits,
      included: once.periodIncludedUnits,
      plan: 'free',
      status: 'canceled',
    });
    expect(await ledgerEntries(organisationId)).toHaveLength(entries.length);
  });

  test('two deliveries of the end racing each other expire and grant once', async () => {
    const { organisationId, subscription, created } = await subscribed('growth', 'end-race');
    const ended = { ...subscription, status: 'canceled' as const, eventCreated: created + 1 };
    await Promise.all(Array.from({ length: 4 }, () => applySubscriptionChange(ended, standing)));
    const entries = await ledgerEntries(organisationId);
    expect(entries.filter((e) => e.kind === 'expiry')).toHaveLength(1);
    expect(entries.filter((e) => e.sourceKey.startsWith('grant:subscription-end:'))).toHaveLength(1);
    expect((await account(organisationId)).balanceUnits).toBe(500 * CREDIT);
    await expectLedgerMatchesBalance(organisationId);
  });

  test('charges landing while the subscription ends are never lost', async () => {
    const { organisationId, subscription, created } = await subscribed('starter', 'end-charges');
    await topUp(organisationId, 1_000);
    const ended = { ...subscription, status: 'canceled' as const, eventCreated: created + 1 };
    await Promise.all([
      applySubscriptionChange(ended, standing),
      ...Array.from({ length: 8 }, () => callOf(organisationId, 30)),
    ]);
    const after = await account(organisationId);
    expect(after.plan).toBe('free');
    const entries = await ledgerEntries(organisationId);
    expect(entries.filter((e) => e.kind === 'charge')).toHaveLength(8);
    const expiries = entries.filter((e) => e.kind === 'expiry');
    expect(expiries).toHaveLength(1);
    // Included credits are spent first: what Starter's 10,000 had left when it ended expired (the
    // charges before the end came out of them, those after out of the Free grant); the 1,000
    // purchased never expire.
    const expired = -expiries[0].amountUnits;
    expect(expired).toBeGreaterThanOrEqual((10_000 - 240) * CREDIT);
    expect(expired).toBeLessThanOrEqual(10_000 * CREDIT);
    expect(after.balanceUnits).toBe((11_000 - 240 + 500) * CREDIT - expired);
    await expectLedgerMatchesBalance(organisationId);
  });

  test('an overdrawn balance has nothing to expire; the Free grant pays off the debt first', async () => {
    const { organisationId, subscription, created } = await subscribed('starter', 'end-overdrawn');
    await callOf(organisationId, 11_000); // a paid plan runs negative: 1,000 credits below zero
    expect((await account(organisationId)).agentsSuspended).toBe(false);
    const ended = { ...subscription, status: 'canceled' as const, eventCreated: created + 1 };
    expect(await applySubscriptionChange(ended, standing)).toBe('applied');
    const after = await account(organisationId);
    expect(after.balanceUnits).toBe(-500 * CREDIT);
    expect((await ledgerEntries(organisationId)).filter((e) => e.kind === 'expiry')).toHaveLength(0);
    // On Free at or below zero: the agents are off until credits come back.
    expect(after.agentsSuspended).toBe(true);
    await topUp(organisationId, 1_000);
    expect((await account(organisationId)).agentsSuspended).toBe(false);
    await expectLedgerMatchesBalance(organisationId);
  });

  test('a past-due subscription that ends expires its included credits too', async () => {
    const { organisationId, subscription, created } = await subscribed('growth', 'end-past-due');
    await applySubscriptionChange(
      { ...subscription, status: 'past_due', eventCreated: created + 1 },
      standing,
    );
    expect((await account(organisationId)).balanceUnits).toBe(64_000 * CREDIT);
    await applySubscriptionChange(
      { ...subscription, status: 'canceled', eventCreated: created + 2 },
      standing,
    );
    expect(await account(organisationId)).toMatchObject({
      plan: 'free',
      subscriptionStatus: 'canceled',
      balanceUnits: 500 * CREDIT,
    });
  });

  test('a new subscription in the same period is a new cause: its plan’s included credits are granted again', async () => {
    const { organisationId, subscription, created } = await subscribed('growth', 'end-resubscribe');
    await callOf(organisationId, 1_000);
    await applySubscriptionChange(
      { ...subscription, status: 'canceled', eventCreated: created + 1 },
      standing,
    );
    expect((await account(organisationId)).balanceUnits).toBe(500 * CREDIT);

    const again = { ...subscription, subscriptionId: `sub_test_${randomUUID()}` };
    expect(
      await applySubscriptionChange(
        { ...again, status: 'active', plan: 'growth', eventCreated: created + 2 },
        standing,
      ),
    ).toBe('applied');
    const after = await account(organisationId);
    // Topped up to Growth's 64,000 for the period, of which 1,000 were used: 63,000 left.
    expect(after).toMatchObject({
      plan: 'growth',
      subscriptionStatus: 'active',
      providerSubscriptionId: again.subscriptionId,
      balanceUnits: 63_000 * CREDIT,
      periodIncludedUnits: 64_000 * CREDIT,
    });
    await expectLedgerMatchesBalance(organisationId);
  });
});
