import { afterEach, describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { AgentEntity } from '../../../functions/agents/entities.js';
import { isAnswering } from '../../../functions/agents/service.js';
import { getBillingAccount } from '../../../functions/billing/ledger.js';
import { chargeCallUsage } from '../../../functions/billing/metering.js';
import { periodOf } from '../../../functions/billing/plans.js';
import { dueAccounts, renewAccount } from '../../../functions/billing/renewal.js';
import { applySubscriptionChange } from '../../../functions/billing/subscriptions.js';
import { agentsSuspended } from '../../../functions/billing/suspension.js';
import { clock, resetClock, setClock } from '../../../functions/platform/clock.js';
import { newId } from '../../../functions/platform/ids.js';
import { releaseHeldActions } from '../../../functions/post-call/held-actions.js';
import { waitFor } from '../../helpers/wait.js';
import { ledgerEntries, newOrganisation, topUp } from './fixtures.js';

/** Monthly renewal: unused included credits expire, the plan's credits are granted again, once per period. */
afterEach(() => resetClock());

const account = async (organisationId: string) =>
  (await getBillingAccount(organisationId, { consistent: true }))!;
const nextPeriod = () => new Date(new Date(periodOf(clock.now()).end).getTime() + 3600_000);
/** What the payments webhook handler passes billing: back in good standing, held actions run. */
const standing = { goodStandingRestored: releaseHeldActions };
/** The ledger's entries add up to the balance: nothing moved without an entry, nothing twice. */
async function expectLedgerMatchesBalance(organisationId: string) {
  const entries = await ledgerEntries(organisationId);
  expect(entries.reduce((sum, e) => sum + e.amountUnits, 0)).toBe(
    (await account(organisationId)).balanceUnits,
  );
}

describe('renewing a period', () => {
  test('unused included credits expire, purchased ones stay, the plan grants its credits again', async () => {
    const { organisationId } = await newOrganisation('renew');
    await chargeCallUsage({ organisationId, callId: `call_${randomUUID()}`, billableSeconds: 300 }); // 100 credits
    await topUp(organisationId, 1_000);
    const before = await account(organisationId);
    const now = nextPeriod();
    expect(await dueAccounts(now)).toContain(organisationId);

    expect(await renewAccount(organisationId, now)).toBe('renewed');
    const after = await account(organisationId);
    const period = periodOf(now);
    expect({ start: after.periodStart, end: after.periodEnd }).toEqual(period);
    // 500 included − 100 used = 400 expire; 1,000 purchased stay; 500 new: 1,500 credits.
    expect(after.balanceUnits).toBe(1_500 * 60);
    expect({ spent: after.spentUnits, call: after.callSeconds, included: after.periodIncludedUnits }).toEqual(
      {
        spent: 0,
        call: 0,
        included: 500 * 60,
      },
    );
    const entries = await ledgerEntries(organisationId);
    expect(entries.find((e) => e.kind === 'expiry')).toMatchObject({
      amountUnits: -400 * 60,
      sourceKey: `expiry:period:${before.periodStart.slice(0, 10)}`,
    });
    expect(entries.find((e) => e.sourceKey === `grant:period:${period.start.slice(0, 10)}`)).toMatchObject({
      kind: 'grant',
      amountUnits: 500 * 60,
    });
    await expectLedgerMatchesBalance(organisationId);
    expect(await dueAccounts(now)).not.toContain(organisationId);
  });

  test('renews once per period, however many runs race for it', async () => {
    const { organisationId } = await newOrganisation('renew-once');
    const now = nextPeriod();
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => renewAccount(organisationId, now)));
    expect(outcomes.filter((o) => o === 'renewed')).toHaveLength(1);
    expect(await renewAccount(organisationId, now)).toBe('not_due');
    expect((await ledgerEntries(organisationId)).filter((e) => e.kind === 'grant')).toHaveLength(2);
    expect((await account(organisationId)).balanceUnits).toBe(500 * 60);
  });

  test('charges landing during the renewal are never lost', async () => {
    const { organisationId } = await newOrganisation('renew-race');
    await topUp(organisationId, 5_000);
    const now = nextPeriod();
    await Promise.all([
      renewAccount(organisationId, now),
      ...Array.from({ length: 12 }, () =>
        chargeCallUsage({ organisationId, callId: `call_${randomUUID()}`, billableSeconds: 90 }),
      ),
    ]);
    expect((await account(organisationId)).periodStart).toBe(periodOf(now).start);
    expect((await ledgerEntries(organisationId)).filter((e) => e.kind === 'charge')).toHaveLength(12);
    await expectLedgerMatchesBalance(organisationId);
  });

  test('a Free organisation out of credits gets its agents back with the new month', async () => {
    const { organisationId, workspaceId } = await newOrganisation('renew-free');
    const agentId = newId('agent');
    await AgentEntity.create({
      workspaceId,
      agentId,
      organisationId,
      name: 'Renewal agent',
      settings: {
        speechSpeed: 'medium',
        expressiveness: 'natural',
        ambientNoise: 'none',
        callRecording: true,
        interruptible: true,
        callerGrowthLoop: false,
        timezone: 'UTC',
        specialisedTerms: [],
        maxDurationSeconds: 1800,
      },
      createdBy: 'test',
      createdAt: new Date().toISOString(),
    }).go();
    // The agent answers as the agents domain decides it: its own switch, and billing's suspension.
    const answering = async () =>
      isAnswering(
        (await AgentEntity.get({ workspaceId, agentId }).go({ consistent: true })).data!,
        await agentsSuspended(organisationId),
      );
    expect(await answering()).toBe(true);
    await chargeCallUsage({ organisationId, callId: `call_${randomUUID()}`, billableSeconds: 1_510 }); // 503.33 credits
    expect((await account(organisationId)).agentsSuspended).toBe(true);
    expect(await answering()).toBe(false);

    expect(await renewAccount(organisationId, nextPeriod())).toBe('renewed');
    const after = await account(organisationId);
    // Nothing left to expire; 500 granted on top of the overdraft of 3.33 credits.
    expect(after.balanceUnits).toBe(30_000 - 30_200 + 30_000);
    expect(after.agentsSuspended).toBe(false);
    expect(await answering()).toBe(true);
  });

  test('a past-due organisation is renewed once it is in good standing again', async () => {
    const { organisationId } = await newOrganisation('renew-past-due');
    const created = Math.floor(Date.now() / 1000);
    const subscription = {
      organisationId,
      customerId: `cus_test_${randomUUID()}`,
      subscriptionId: `sub_test_${randomUUID()}`,
    };
    expect(
      await applySubscriptionChange(
        { ...subscription, status: 'active', plan: 'starter', eventCreated: created },
        standing,
      ),
    ).toBe('applied');
    expect(
      await applySubscriptionChange(
        { ...subscription, status: 'past_due', eventCreated: created + 1 },
        standing,
      ),
    ).toBe('applied');
    const now = nextPeriod();
    expect(await renewAccount(organisationId, now)).toBe('deferred');
    expect(
      await applySubscriptionChange(
        { ...subscription, status: 'active', eventCreated: created + 2 },
        standing,
      ),
    ).toBe('applied');
    expect(await renewAccount(organisationId, now)).toBe('renewed');
    const after = await account(organisationId);
    expect(after.periodStart).toBe(periodOf(now).start);
    // Starter's 10,000 of the old period were unused and expire; 10,000 are granted for the new one.
    expect(after.balanceUnits).toBe(10_000 * 60);
    await expectLedgerMatchesBalance(organisationId);
  });
});

describe('the scheduled renewal job', () => {
  test('renews an organisation whose month has ended (the local scheduler runs it every few seconds)', async () => {
    const lastMonth = new Date(new Date(periodOf(new Date()).start).getTime() - 24 * 3600_000);
    setClock(lastMonth);
    const { organisationId } = await newOrganisation('renew-job');
    resetClock();
    expect((await account(organisationId)).periodStart).toBe(periodOf(lastMonth).start);
    await waitFor(async () => (await account(organisationId)).periodStart === periodOf(new Date()).start, {
      what: 'the renewal job to renew the account',
      timeoutMs: 20_000,
      intervalMs: 250,
    });
    const entries = await ledgerEntries(organisationId);
    expect(entries.map((e) => e.sourceKey).sort()).toEqual(
      [
        `expiry:period:${periodOf(lastMonth).start.slice(0, 10)}`,
        `grant:period:${periodOf(lastMonth).start.slice(0, 10)}`,
        `grant:period:${periodOf(new Date()).start.slice(0, 10)}`,
      ].sort(),
    );
    expect((await account(organisationId)).balanceUnits).toBe(500 * 60);
  });
});
