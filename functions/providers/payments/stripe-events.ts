import { createHmac, timingSafeEqual } from 'node:crypto';
import type Stripe from 'stripe';
import { WebhookSignatureError, type BillingEvent, type ProviderSubscriptionStatus } from './port.js';

/** Signatures older than this (seconds) are refused: a replayed capture of a real event is stale. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * Stripe's `webhooks.constructEvent`, as the library does it (`Stripe-Signature: t=<timestamp>,v1=<hex>`,
 * one or more v1 signatures; HMAC-SHA256 of `<timestamp>.<payload>` with the endpoint secret; refused
 * when older than the tolerance) without loading the library (~240 KB, ~16 ms of a cold start) where
 * only a webhook is checked. test/unit/billing-webhook-events.test.ts signs with the library.
 */
function constructEvent(
  payload: string,
  header: string,
  secret: string,
  toleranceSeconds: number,
): Stripe.Event {
  if (!payload) throw new Error('No webhook payload was provided.');
  let timestamp = -1;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const [key, value] = item.split('=');
    if (key === 't') timestamp = parseInt(value, 10);
    if (key === 'v1') signatures.push(value);
  }
  if (timestamp === -1 || Number.isNaN(timestamp)) {
    throw new Error('Unable to extract timestamp and signatures from header');
  }
  if (signatures.length === 0) throw new Error('No signatures found with expected scheme');
  const expected = Buffer.from(
    createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex'),
  );
  const matches = signatures.some((candidate) => {
    const given = Buffer.from(candidate ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new Error('No signatures found matching the expected signature for payload.');
  if (toleranceSeconds > 0 && Math.floor(Date.now() / 1000) - timestamp > toleranceSeconds) {
    throw new Error('Timestamp outside the tolerance zone');
  }
  return JSON.parse(payload) as Stripe.Event;
}

/**
 * Verifies a Stripe webhook with Stripe's own signature scheme (`Stripe-Signature`: HMAC-SHA256 of
 * `<timestamp>.<payload>` with the endpoint secret, timestamp within the tolerance) and reads it into
 * billing's terms. Both adapters use it: the local simulator signs its events exactly as Stripe does.
 */
export function verifyStripeWebhook(
  payload: string,
  signature: string | undefined,
  secret: string,
): BillingEvent {
  if (!signature) throw new WebhookSignatureError('missing Stripe-Signature header');
  // Stripe's library refuses signatures older than the tolerance; one dated further ahead than the
  // tolerance is refused too (no honest clock is that far off).
  const timestamp = Number(/(?:^|,)t=(\d+)/.exec(signature)?.[1]);
  if (Number.isFinite(timestamp) && timestamp > Date.now() / 1000 + WEBHOOK_TOLERANCE_SECONDS) {
    throw new WebhookSignatureError('webhook signature timestamp is in the future');
  }
  let event: Stripe.Event;
  try {
    event = constructEvent(payload, signature, secret, WEBHOOK_TOLERANCE_SECONDS);
  } catch (error) {
    throw new WebhookSignatureError('webhook signature verification failed', { cause: error });
  }
  return toBillingEvent(event);
}

const idOf = (value: string | { id: string } | null | undefined): string | undefined =>
  typeof value === 'string' ? value : (value?.id ?? undefined);

export function subscriptionStatus(status: Stripe.Subscription.Status): ProviderSubscriptionStatus {
  switch (status) {
    case 'active':
    case 'trialing':
      return 'active';
    case 'past_due':
    case 'unpaid':
    case 'paused':
      return 'past_due';
    case 'canceled':
    case 'incomplete_expired':
      return 'canceled';
    default:
      return 'pending';
  }
}

/** Stripe's event → billing's event; types billing does not act on are `ignored`. */
export function toBillingEvent(event: Stripe.Event): BillingEvent {
  const base = { id: event.id, type: event.type, created: event.created };
  switch (event.type) {
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
    case 'customer.subscription.paused':
    case 'customer.subscription.resumed': {
      const subscription = event.data.object;
      const customerId = idOf(subscription.customer);
      if (!customerId) return { ...base, kind: 'ignored' };
      return {
        ...base,
        kind: 'subscription',
        customerId,
        subscriptionId: subscription.id,
        status:
          event.type === 'customer.subscription.deleted'
            ? 'canceled'
            : subscriptionStatus(subscription.status),
        priceLookupKey: subscription.items?.data?.[0]?.price?.lookup_key ?? undefined,
        metadataPlan: subscription.metadata?.plan,
        organisationId: subscription.metadata?.organisation_id,
      };
    }
    case 'invoice.paid':
    case 'invoice.payment_failed': {
      const invoice = event.data.object;
      const customerId = idOf(invoice.customer);
      if (!customerId) return { ...base, kind: 'ignored' };
      return {
        ...base,
        kind: 'invoice',
        outcome: event.type === 'invoice.paid' ? 'paid' : 'payment_failed',
        customerId,
        subscriptionId: idOf(invoice.parent?.subscription_details?.subscription),
      };
    }
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const session = event.data.object;
      const credits = Number(session.metadata?.credits);
      if (
        session.mode !== 'payment' ||
        session.metadata?.purpose !== 'credits' ||
        session.payment_status !== 'paid'
      ) {
        return { ...base, kind: 'ignored' };
      }
      if (!Number.isInteger(credits) || credits <= 0) return { ...base, kind: 'ignored' };
      return {
        ...base,
        kind: 'credits_paid',
        customerId: idOf(session.customer),
        organisationId: session.metadata?.organisation_id ?? session.client_reference_id ?? undefined,
        paymentId: session.id,
        credits,
        amountCents: session.amount_subtotal ?? 0,
        currency: session.currency ?? '',
      };
    }
    default:
      return { ...base, kind: 'ignored' };
  }
}
