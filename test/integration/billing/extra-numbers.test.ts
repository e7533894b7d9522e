import { describe, expect, test } from '@jest/globals';
import { NumberChargeEntity } from '../../../functions/billing/entities.js';
import { billAccountNumbers } from '../../../functions/billing/extra-numbers.js';
import { getBillingAccount } from '../../../functions/billing/ledger.js';
import { periodOf } from '../../../functions/billing/plans.js';
import { renewAccount } from '../../../functions/billing/renewal.js';
import { startSubscription, waitForSubscriptionActive } from '../../../functions/billing/subscriptions.js';
import { countNumbers } from '../../../functions/numbers/inventory.js';
import { provisionNumber } from '../../../functions/numbers/service.js';
import { paymentsSimulator } from '../../../functions/providers/payments/index.js';
import { newOrganisation } from './fixtures.js';

/** Numbers beyond the plan's included ones cost 10 AUD each per monthly cycle, billed through the provider once. */
describe('extra phone numbers', () => {
  test('three numbers on Starter (one included) put 20 AUD on the next invoice, once per cycle', async () => {
    const { organisationId, workspaceId } = await newOrganisation('numbers');
    const request = await startSubscription(organisationId, 'starter');
    expect(request.checkoutUrl).toMatch(/\/checkout\//);
    await waitForSubscriptionActive(organisationId, 'starter');
    for (let i = 0; i < 3; i += 1) await provisionNumber({ workspaceId, organisationId });
    expect(await countNumbers(organisationId)).toBe(3);

    // The next cycle starts (the month rolls over): its numbers are counted and billed.
    const now = new Date(new Date(periodOf(new Date()).end).getTime() + 3600_000);
    expect(await renewAccount(organisationId, now)).toBe('renewed');
    const account = await getBillingAccount(organisationId, { consistent: true });
    const outcomes = await Promise.all([
      billAccountNumbers(organisationId, countNumbers),
      billAccountNumbers(organisationId, countNumbers),
    ]);
    // The scheduled job (every few seconds locally) may have billed it first: once, whoever does it.
    expect(outcomes.every((o) => o === 'billed' || o === 'already_billed')).toBe(true);
    expect(await billAccountNumbers(organisationId, countNumbers)).toBe('already_billed');

    const charge = (
      await NumberChargeEntity.get({ organisationId, periodStart: account!.periodStart }).go({
        consistent: true,
      })
    ).data;
    expect(charge).toMatchObject({
      numbers: 3,
      includedNumbers: 1,
      extraNumbers: 2,
      amountCents: 2_000,
      currency: 'aud',
    });
    const items = (await paymentsSimulator.invoiceItems()).filter(
      (item) => item.customer === account!.providerCustomerId,
    );
    expect(items).toEqual([
      expect.objectContaining({
        id: charge!.providerItemId,
        subscription: account!.providerSubscriptionId,
        amount: 2_000,
        currency: 'aud',
      }),
    ]);
  });

  test('an organisation without a live subscription is not billed for numbers', async () => {
    const { organisationId } = await newOrganisation('numbers-free');
    expect(await billAccountNumbers(organisationId, countNumbers)).toBe('not_subscribed');
  });
});
