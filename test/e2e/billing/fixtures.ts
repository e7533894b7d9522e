import { expect } from '@jest/globals';
import { getBillingAccount } from '../../../functions/billing/ledger.js';
import type { BillingAccount } from '../../../functions/billing/entities.js';
import type { PaidPlanId } from '../../../functions/billing/plans.js';
import { api, type Json } from '../../helpers/http.js';
import { waitFor } from '../../helpers/wait.js';

/** Billing steps through the real routes; the payment provider is the local simulator (it pays at once). */

export const billingPath = (organisationId: string, rest = '') =>
  `/api/v1/organisations/${organisationId}/billing${rest}`;

/** Polls the billing account until `done` holds (the provider's webhook has arrived). */
export async function waitForAccount(
  organisationId: string,
  done: (account: BillingAccount) => boolean,
  timeoutMs = 15_000,
): Promise<BillingAccount> {
  let last: BillingAccount | null = null;
  return waitFor(
    async () => {
      last = await getBillingAccount(organisationId, { consistent: true });
      return last && done(last) ? last : undefined;
    },
    {
      what: () => `billing of ${organisationId} to get there; last seen: ${JSON.stringify(last)}`,
      timeoutMs,
    },
  );
}

/** Subscribes through the route as `token` (the owner) and waits for the provider to confirm. */
export async function subscribe(
  organisationId: string,
  token: string,
  plan: PaidPlanId,
): Promise<BillingAccount> {
  const res = await api('POST', billingPath(organisationId, '/subscription'), { token, body: { plan } });
  expect(res.status).toBe(202);
  return subscribe.wait(organisationId, plan);
}
/** Waits until the organisation is on an active `plan` subscription. */
subscribe.wait = (organisationId: string, plan: PaidPlanId) =>
  waitForAccount(
    organisationId,
    (account) => account.plan === plan && account.subscriptionStatus === 'active',
  );

/** Buys credits through the route and waits until the provider's confirmation has granted them. */
export async function buyCredits(organisationId: string, token: string, quantity: number): Promise<Json> {
  const before = await getBillingAccount(organisationId, { consistent: true });
  const res = await api('POST', billingPath(organisationId, '/credits'), { token, body: { quantity } });
  expect(res.status).toBe(202);
  await waitForAccount(
    organisationId,
    (account) => account.balanceUnits >= (before?.balanceUnits ?? 0) + quantity * 60,
  );
  return res.body;
}

/** Every ledger entry of an organisation, newest first, walking the pages. */
export async function fullLedger(organisationId: string, token: string): Promise<Json[]> {
  const items: Json[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `?limit=100&cursor=${cursor}` : '?limit=100';
    const res = await api('GET', billingPath(organisationId, `/ledger${query}`), { token });
    expect(res.status).toBe(200);
    items.push(...res.body.items);
    cursor = res.body.next_cursor;
  } while (cursor);
  return items;
}
