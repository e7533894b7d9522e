import { describe, expect, test } from '@jest/globals';
import Stripe from 'stripe';
import { subscriptionPlan } from '../../functions/billing/plans.js';
import { WebhookSignatureError } from '../../functions/providers/payments/port.js';
import {
  subscriptionStatus,
  verifyStripeWebhook,
  WEBHOOK_TOLERANCE_SECONDS,
} from '../../functions/providers/payments/stripe-events.js';

/** Stripe's signature scheme, exercised with the official library on both sides. */
const SECRET = 'whsec_unit_test_secret_0123456789';

function stripeEvent(
  type: string,
  object: Record<string, unknown>,
  id = `evt_${Math.random().toString(36).slice(2)}`,
) {
  return JSON.stringify({
    id,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: 1_800_000_000,
    livemode: false,
    type,
    data: { object },
  });
}
const sign = (payload: string, options: { secret?: string; timestamp?: number } = {}) =>
  Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? SECRET,
    timestamp: options.timestamp,
  });

const subscription = (status: string, lookupKey = 'voice-agent-plan-growth') => ({
  id: 'sub_1',
  object: 'subscription',
  customer: 'cus_1',
  status,
  metadata: { organisation_id: 'org_1', plan: 'growth' },
  items: { object: 'list', data: [{ id: 'si_1', price: { id: 'price_1', lookup_key: lookupKey } }] },
});

describe('verifying billing webhooks', () => {
  const payload = stripeEvent('customer.subscription.updated', subscription('active'));

  test('a correctly signed event is read', () => {
    const event = verifyStripeWebhook(payload, sign(payload), SECRET);
    expect(event).toMatchObject({
      kind: 'subscription',
      type: 'customer.subscription.updated',
      customerId: 'cus_1',
      subscriptionId: 'sub_1',
      status: 'active',
      priceLookupKey: 'voice-agent-plan-growth',
      metadataPlan: 'growth',
      organisationId: 'org_1',
      created: 1_800_000_000,
    });
  });

  test.each([
    ['no signature', () => undefined],
    ['another secret', () => sign(payload, { secret: 'whsec_someone_else' })],
    [
      'a stale signature',
      () => sign(payload, { timestamp: Math.floor(Date.now() / 1000) - WEBHOOK_TOLERANCE_SECONDS - 60 }),
    ],
    [
      'a signature dated ahead of the tolerance',
      () => sign(payload, { timestamp: Math.floor(Date.now() / 1000) + WEBHOOK_TOLERANCE_SECONDS + 60 }),
    ],
    ['garbage', () => 't=1,v1=deadbeef'],
  ])('%s is refused', (_label, header) => {
    expect(() => verifyStripeWebhook(payload, header(), SECRET)).toThrow(WebhookSignatureError);
  });

  test('an altered payload is refused', () => {
    const header = sign(payload);
    const altered = payload.replace('"active"', '"canceled"');
    expect(() => verifyStripeWebhook(altered, header, SECRET)).toThrow(WebhookSignatureError);
  });
});

describe('reading provider events', () => {
  const read = (type: string, object: Record<string, unknown>) => {
    const payload = stripeEvent(type, object);
    return verifyStripeWebhook(payload, sign(payload), SECRET);
  };

  test('subscription states map to active, past_due, canceled or pending', () => {
    expect(subscriptionStatus('active')).toBe('active');
    expect(subscriptionStatus('trialing')).toBe('active');
    expect(subscriptionStatus('past_due')).toBe('past_due');
    expect(subscriptionStatus('unpaid')).toBe('past_due');
    expect(subscriptionStatus('canceled')).toBe('canceled');
    expect(subscriptionStatus('incomplete_expired')).toBe('canceled');
    expect(subscriptionStatus('incomplete')).toBe('pending');
    expect(read('customer.subscription.deleted', subscription('active'))).toMatchObject({
      kind: 'subscription',
      status: 'canceled',
    });
  });

  test('the plan comes from the price lookup key, else the metadata', () => {
    const planOf = (lookupKey: string) => {
      const event = read('customer.subscription.updated', subscription('active', lookupKey));
      return event.kind === 'subscription' ? subscriptionPlan(event) : undefined;
    };
    expect(planOf('voice-agent-plan-scale')).toBe('scale');
    expect(planOf('unrelated')).toBe('growth');
    expect(planOf('voice-agent-plan-free')).toBe('growth');
    expect(subscriptionPlan({ priceLookupKey: 'unrelated', metadataPlan: 'free' })).toBeUndefined();
  });

  test('invoices name their subscription through the parent', () => {
    const invoice = {
      id: 'in_1',
      object: 'invoice',
      customer: 'cus_1',
      parent: { type: 'subscription_details', subscription_details: { subscription: 'sub_1', metadata: {} } },
    };
    expect(read('invoice.payment_failed', invoice)).toMatchObject({
      kind: 'invoice',
      outcome: 'payment_failed',
      subscriptionId: 'sub_1',
    });
    expect(read('invoice.paid', invoice)).toMatchObject({
      kind: 'invoice',
      outcome: 'paid',
      customerId: 'cus_1',
    });
  });

  test('a paid credits checkout grants its credits; anything else is ignored', () => {
    const session = {
      id: 'cs_1',
      object: 'checkout.session',
      mode: 'payment',
      customer: 'cus_1',
      payment_status: 'paid',
      metadata: { organisation_id: 'org_1', purpose: 'credits', credits: '1000' },
      amount_subtotal: 1000,
      currency: 'aud',
    };
    expect(read('checkout.session.completed', session)).toMatchObject({
      kind: 'credits_paid',
      paymentId: 'cs_1',
      credits: 1000,
      amountCents: 1000,
      currency: 'aud',
      organisationId: 'org_1',
    });
    expect(read('checkout.session.completed', { ...session, payment_status: 'unpaid' })).toMatchObject({
      kind: 'ignored',
    });
    expect(read('checkout.session.completed', { ...session, mode: 'subscription' })).toMatchObject({
      kind: 'ignored',
    });
    expect(
      read('checkout.session.completed', { ...session, metadata: { purpose: 'credits', credits: 'x' } }),
    ).toMatchObject({ kind: 'ignored' });
    expect(read('charge.succeeded', { id: 'ch_1', object: 'charge' })).toMatchObject({ kind: 'ignored' });
  });
});
