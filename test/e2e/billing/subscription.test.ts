import { beforeAll, describe, expect, test } from '@jest/globals';
import Stripe from 'stripe';
import { BillingEventEntity, SubscribedAccountEntity, shardOf } from '../../../functions/billing/entities.js';
import { getBillingAccount } from '../../../functions/billing/ledger.js';
import { isInGoodStanding } from '../../../functions/billing/standing.js';
import { paymentsSimulator } from '../../../functions/providers/payments/index.js';
import { api } from '../../helpers/http.js';
import { organisation, type Org } from '../access/fixtures.js';
import { billingPath, buyCredits, fullLedger, subscribe, waitForAccount } from './fixtures.js';

/**
 * Subscriptions, purchases and standing end to end: the routes call the payment port, the local
 * payment simulator plays Stripe and sends Stripe-signed events to POST /webhooks/billing, and only
 * those events change the plan, the status and the credits.
 */
const credits = (units: number) => units / 60;
const webhook = (payload: string, signature?: string) =>
  api('POST', '/webhooks/billing', {
    rawBody: payload,
    headers: { 'content-type': 'application/json', ...(signature ? { 'stripe-signature': signature } : {}) },
  });
const secret = () => process.env.PAYMENTS_WEBHOOK_SECRET as string;
const signed = (payload: string, options: { secret?: string; timestamp?: number } = {}) =>
  Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? secret(),
    timestamp: options.timestamp,
  });
const eventPayload = (
  type: string,
  object: Record<string, unknown>,
  created = Math.floor(Date.now() / 1000),
) =>
  JSON.stringify({
    id: `evt_test_${Math.random().toString(36).slice(2)}`,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created,
    livemode: false,
    type,
    data: { object },
  });

describe('subscribing, changing plan and cancelling', () => {
  let org: Org;
  beforeAll(async () => {
    org = await organisation('sub-owner');
  });

  test('a subscription starts at checkout and the plan changes only when the provider confirms', async () => {
    const started = await api('POST', billingPath(org.organisationId, '/subscription'), {
      token: org.owner.token,
      body: { plan: 'growth' },
    });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ plan: 'free', requested_plan: 'growth', status: 'none' });
    expect(started.body.checkout_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/checkout\/cs_/);

    const account = await waitForAccount(
      org.organisationId,
      (a) => a.plan === 'growth' && a.subscriptionStatus === 'active',
    );
    // The rest of Growth's 64,000 included credits arrive at once, on top of the Free plan's 500.
    expect(credits(account.balanceUnits)).toBe(64_000);
    expect(account.requestedPlan).toBeUndefined();
    expect(
      await SubscribedAccountEntity.get({
        shard: shardOf(org.organisationId),
        organisationId: org.organisationId,
      }).go(),
    ).toMatchObject({
      data: { subscriptionId: account.providerSubscriptionId },
    });
    const view = await api('GET', billingPath(org.organisationId), { token: org.owner.token });
    expect(view.body).toMatchObject({
      plan: 'growth',
      status: 'active',
      credit_balance: 64_000,
      included_credits_this_period: 64_000,
    });
    const ledger = await fullLedger(org.organisationId, org.owner.token);
    expect(ledger[0]).toMatchObject({
      kind: 'grant',
      credits: 63_500,
      source: expect.stringMatching(/^grant:plan:growth:/),
    });
  });

  test('the same plan again is 409', async () => {
    const again = await api('POST', billingPath(org.organisationId, '/subscription'), {
      token: org.owner.token,
      body: { plan: 'growth' },
    });
    expect(again.status).toBe(409);
  });

  test('an upgrade grants the difference at once; a downgrade takes nothing back', async () => {
    const up = await api('POST', billingPath(org.organisationId, '/subscription'), {
      token: org.owner.token,
      body: { plan: 'scale' },
    });
    expect(up.status).toBe(202);
    expect(up.body).toMatchObject({ plan: 'growth', requested_plan: 'scale', checkout_url: null });
    let account = await subscribe.wait(org.organisationId, 'scale');
    expect(credits(account.balanceUnits)).toBe(220_000);

    const down = await api('POST', billingPath(org.organisationId, '/subscription'), {
      token: org.owner.token,
      body: { plan: 'starter' },
    });
    expect(down.status).toBe(202);
    account = await subscribe.wait(org.organisationId, 'starter');
    expect(credits(account.balanceUnits)).toBe(220_000);
  });

  test('cancelling moves the organisation back to Free once the provider confirms: the plan’s unused included credits expire, the Free plan’s 500 are granted', async () => {
    const before = await getBillingAccount(org.organisationId, { consistent: true });
    const cancelled = await api('DELETE', billingPath(org.organisationId, '/subscription'), {
      token: org.owner.token,
    });
    expect(cancelled.status).toBe(202);
    expect(cancelled.body).toMatchObject({ cancel_requested: true, status: 'active' });
    const account = await waitForAccount(org.organisationId, (a) => a.subscriptionStatus === 'canceled');
    expect(account.plan).toBe('free');
    expect(credits(account.balanceUnits)).toBe(500);
    const view = await api('GET', billingPath(org.organisationId), { token: org.owner.token });
    expect(view.body).toMatchObject({
      plan: 'free',
      credit_balance: 500,
      included_credits_this_period: 500,
      agents_suspended: false,
    });
    const ledger = await fullLedger(org.organisationId, org.owner.token);
    const subscriptionId = before!.providerSubscriptionId!;
    expect(ledger.slice(0, 2)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: 'expiry',
          credits: -220_000,
          source: `expiry:subscription:${subscriptionId}`,
        }),
        expect.objectContaining({
          kind: 'grant',
          credits: 500,
          source: `grant:subscription-end:${subscriptionId}`,
        }),
      ]),
    );

    // The provider delivers the subscription-deleted event again: nothing expires or is granted twice.
    const deleted = (await paymentsSimulator.events()).filter(
      (e) => e.type === 'customer.subscription.deleted',
    );
    const ours = [];
    for (const event of deleted) {
      const full = await paymentsSimulator.event(event.id);
      if (full.payload.data.object.id === subscriptionId) ours.push(full);
    }
    expect(ours).toHaveLength(1);
    expect((await paymentsSimulator.resendEvent(ours[0].id)).delivery?.status).toBe(200);
    // The same news under another event id (the provider may report an end more than once).
    const again = eventPayload('customer.subscription.deleted', ours[0].payload.data.object);
    const late = await webhook(again, signed(again));
    expect(late.status).toBe(200);
    expect(credits((await getBillingAccount(org.organisationId, { consistent: true }))!.balanceUnits)).toBe(
      500,
    );
    expect(await fullLedger(org.organisationId, org.owner.token)).toHaveLength(ledger.length);
    expect(
      (
        await SubscribedAccountEntity.get({
          shard: shardOf(org.organisationId),
          organisationId: org.organisationId,
        }).go()
      ).data,
    ).toBeNull();
    expect(
      (await api('DELETE', billingPath(org.organisationId, '/subscription'), { token: org.owner.token }))
        .status,
    ).toBe(409);
  });

  test('the customer portal is the provider’s page for this customer', async () => {
    const portal = await api('POST', billingPath(org.organisationId, '/portal-session'), {
      token: org.owner.token,
    });
    expect(portal.status).toBe(201);
    const account = await getBillingAccount(org.organisationId);
    expect(portal.body.url).toBe(
      `${process.env.PAYMENTS_SIMULATOR_URL}/portal/${account?.providerCustomerId}`,
    );
    const page = await fetch(portal.body.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('starter (canceled)');
  });
});

describe('buying credits', () => {
  let org: Org;
  beforeAll(async () => {
    org = await organisation('credits-owner');
  });

  test('credits are granted when the provider confirms the payment, once per payment', async () => {
    const purchase = await buyCredits(org.organisationId, org.owner.token, 1_500);
    expect(purchase).toMatchObject({ quantity: 1_500, amount_aud: 15, currency: 'AUD', status: 'pending' });
    expect(purchase.id).toBe(purchase.purchase_id);
    let account = await getBillingAccount(org.organisationId, { consistent: true });
    expect(credits(account!.balanceUnits)).toBe(2_000);
    const ledger = await fullLedger(org.organisationId, org.owner.token);
    expect(ledger[0]).toMatchObject({
      kind: 'purchase',
      credits: 1_500,
      source: `purchase:${purchase.purchase_id}`,
    });

    // The provider delivers the same event again: nothing a second time.
    const events = await paymentsSimulator.events();
    const completed = [];
    for (const event of events.filter((e) => e.type === 'checkout.session.completed')) {
      const full = await paymentsSimulator.event(event.id);
      if (full.payload.data.object.id === purchase.purchase_id) completed.push(full);
    }
    expect(completed).toHaveLength(1);
    const resent = await paymentsSimulator.resendEvent(completed[0].id);
    expect(resent.delivery?.status).toBe(200);

    // Another event about the same payment (a late async confirmation): nothing a second time either.
    const session = { ...completed[0].payload.data.object };
    const payload = eventPayload('checkout.session.async_payment_succeeded', session);
    const late = await webhook(payload, signed(payload));
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ outcome: 'already_granted' });

    account = await getBillingAccount(org.organisationId, { consistent: true });
    expect(credits(account!.balanceUnits)).toBe(2_000);
    expect(await fullLedger(org.organisationId, org.owner.token)).toHaveLength(ledger.length);
  });
});

describe('the billing webhook refuses forged and stale events', () => {
  let org: Org;
  let payload: string;
  let eventId: string;
  beforeAll(async () => {
    org = await organisation('webhook-owner');
    // A customer at the provider, so the event names a real one.
    expect(
      (await api('POST', billingPath(org.organisationId, '/portal-session'), { token: org.owner.token }))
        .status,
    ).toBe(201);
    const account = await getBillingAccount(org.organisationId, { consistent: true });
    payload = eventPayload('checkout.session.completed', {
      id: `cs_forged_${Date.now()}`,
      object: 'checkout.session',
      mode: 'payment',
      customer: account!.providerCustomerId,
      payment_status: 'paid',
      status: 'complete',
      metadata: { organisation_id: org.organisationId, purpose: 'credits', credits: '100000' },
      amount_subtotal: 100_000,
      currency: 'aud',
    });
    eventId = JSON.parse(payload).id as string;
  });

  async function unchanged() {
    const account = await getBillingAccount(org.organisationId, { consistent: true });
    expect(credits(account!.balanceUnits)).toBe(500);
    expect((await BillingEventEntity.get({ eventId }).go({ consistent: true })).data).toBeNull();
  }

  test.each([
    ['no signature', () => undefined],
    ['a signature made with another secret', () => signed(payload, { secret: 'whsec_forger' })],
    [
      'a stale signature (10 minutes old)',
      () => signed(payload, { timestamp: Math.floor(Date.now() / 1000) - 600 }),
    ],
    [
      'a signature from the future',
      () => signed(payload, { timestamp: Math.floor(Date.now() / 1000) + 600 }),
    ],
    ['a malformed header', () => 'v1=abc'],
  ])('%s → 401, nothing changes', async (_label, signature) => {
    const res = await webhook(payload, signature());
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Unauthorized' });
    await unchanged();
  });

  test('a payload altered after signing → 401, nothing changes', async () => {
    const signature = signed(payload);
    const res = await webhook(payload.replace('"100000"', '"9999999"'), signature);
    expect(res.status).toBe(401);
    await unchanged();
  });

  test('the same event correctly signed is accepted (the refusals above were the signature’s doing)', async () => {
    const res = await webhook(payload, signed(payload));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: true, outcome: 'granted' });
    const account = await getBillingAccount(org.organisationId, { consistent: true });
    expect(credits(account!.balanceUnits)).toBe(100_500);
    const duplicate = await webhook(payload, signed(payload));
    expect(duplicate.body).toEqual({ received: true, duplicate: true });
    expect(credits((await getBillingAccount(org.organisationId, { consistent: true }))!.balanceUnits)).toBe(
      100_500,
    );
  });
});

describe('a failed payment and good standing', () => {
  let org: Org;
  beforeAll(async () => {
    org = await organisation('standing-owner');
    await subscribe(org.organisationId, org.owner.token, 'starter');
  });

  test('payment failed → past due, not in good standing; paid again → good standing', async () => {
    expect(await isInGoodStanding(org.organisationId)).toBe(true);
    const account = await getBillingAccount(org.organisationId, { consistent: true });
    await paymentsSimulator.failPayment(account!.providerSubscriptionId!);
    expect(await isInGoodStanding(org.organisationId)).toBe(false);
    const view = await api('GET', billingPath(org.organisationId), { token: org.owner.token });
    expect(view.body).toMatchObject({ plan: 'starter', status: 'past_due', in_good_standing: false });

    await paymentsSimulator.recoverPayment(account!.providerSubscriptionId!);
    expect(await isInGoodStanding(org.organisationId)).toBe(true);
    expect((await getBillingAccount(org.organisationId, { consistent: true }))?.subscriptionStatus).toBe(
      'active',
    );
  });

  test('an older event arriving late does not move the subscription backwards', async () => {
    const account = await getBillingAccount(org.organisationId, { consistent: true });
    const payload = eventPayload(
      'customer.subscription.updated',
      {
        id: account!.providerSubscriptionId,
        object: 'subscription',
        customer: account!.providerCustomerId,
        status: 'past_due',
        metadata: { organisation_id: org.organisationId, plan: 'starter' },
        items: {
          object: 'list',
          data: [{ id: 'si_x', price: { id: 'price_x', lookup_key: 'voice-agent-plan-starter' } }],
        },
      },
      (account!.statusEventAt ?? 0) - 120,
    );
    const res = await webhook(payload, signed(payload));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: 'stale' });
    expect(await isInGoodStanding(org.organisationId)).toBe(true);
  });
});
