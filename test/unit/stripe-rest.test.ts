import { afterEach, describe, expect, it } from '@jest/globals';
import Stripe from 'stripe';
import { PaymentsProviderError } from '../../functions/providers/payments/port.js';
import { StripePayments } from '../../functions/providers/payments/stripe.js';
import {
  STRIPE_API_VERSION,
  StripeRestError,
  stripeForm,
} from '../../functions/providers/payments/stripe-rest.js';

/**
 * The Stripe adapter calls Stripe's REST API with fetch (not the `stripe` library, ~245 KB per bundle).
 * Each request is checked against the one the official library sends for the same call (its fetch
 * replaced by a recorder): method, path, query and form parameters, API version, credentials and
 * idempotency key.
 */
const KEY = 'sk_test_0123456789abcdef';
const SECRET = JSON.stringify({ secret_key: KEY, webhook_secret: 'whsec_x' });

interface Sent {
  method: string;
  path: string;
  params: [string, string][];
  headers: Record<string, string | undefined>;
}

const sorted = (params: URLSearchParams): [string, string][] =>
  [...params.entries()].sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1));

/** A fetch that records each request and answers from `answers` in turn. */
function recorder(answers: unknown[]) {
  const sent: Sent[] = [];
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    const headers = new Headers(init?.headers);
    const body = typeof init?.body === 'string' ? init.body : '';
    sent.push({
      method: (init?.method ?? 'GET').toUpperCase(),
      path: url.pathname,
      params: sorted(new URLSearchParams(body || url.search)),
      headers: {
        authorization: headers.get('authorization') ?? undefined,
        'stripe-version': headers.get('stripe-version') ?? undefined,
        'idempotency-key': headers.get('idempotency-key') ?? undefined,
        'content-type': headers.get('content-type') ?? undefined,
      },
    });
    const answer = answers.shift() ?? {};
    return new Response(JSON.stringify(answer), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  }) as typeof fetch;
  return { sent, fetchFn };
}

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

/** What our adapter sends for `run`, and what the library sends for `official`, given the same answers. */
async function compare(
  answers: unknown[],
  run: (payments: StripePayments) => Promise<unknown>,
  official: (stripe: Stripe) => Promise<unknown>,
) {
  const ours = recorder([...answers]);
  globalThis.fetch = ours.fetchFn;
  const result = await run(new StripePayments(async () => SECRET));
  globalThis.fetch = realFetch;
  const theirs = recorder([...answers]);
  await official(
    new Stripe(KEY, { httpClient: Stripe.createFetchHttpClient(theirs.fetchFn), maxNetworkRetries: 0 }),
  );
  const anonymous = (s: Sent) => ({
    ...s,
    headers: {
      ...s.headers,
      'idempotency-key': s.headers['idempotency-key']?.replace(/^stripe-node-retry-[0-9a-f-]{36}$/, 'AUTO'),
    },
  });
  expect(ours.sent.map(anonymous)).toEqual(theirs.sent.map(anonymous));
  for (const request of ours.sent) {
    expect(request.headers).toMatchObject({
      authorization: `Bearer ${KEY}`,
      'stripe-version': Stripe.API_VERSION,
    });
  }
  return { result, sent: ours.sent };
}

const plan = { id: 'growth', priceLookupKey: 'voice-agent-plan-growth' };
const PRICES = { object: 'list', data: [{ id: 'price_1' }] };

describe('Stripe over REST', () => {
  it('pins the API version of the library', () => {
    expect(STRIPE_API_VERSION).toBe(Stripe.API_VERSION);
  });

  it('encodes nested parameters as the library does', () => {
    expect(stripeForm({ a: { b: [{ c: 1 }, { d: "x y!'()*" }] }, e: undefined, f: null, g: true })).toBe(
      'a[b][0][c]=1&a[b][1][d]=x%20y%21%27%28%29%2A&f=&g=true',
    );
  });

  it('creates a customer (with its idempotency key)', async () => {
    const input = { organisationId: 'org_1', name: 'Acme', email: 'owner@acme.test' };
    const { result, sent } = await compare(
      [{ id: 'cus_1' }],
      (p) => p.createCustomer(input),
      (s) =>
        s.customers.create(
          { email: input.email, name: input.name, metadata: { organisation_id: input.organisationId } },
          { idempotencyKey: `customer:${input.organisationId}` },
        ),
    );
    expect(result).toEqual({ customerId: 'cus_1' });
    expect(sent[0].headers['idempotency-key']).toBe('customer:org_1');
  });

  it('finds the price and starts a subscription checkout', async () => {
    const input = {
      customerId: 'cus_1',
      organisationId: 'org_1',
      plan,
      returnUrl: 'https://app.example/billing',
      cycleAnchor: 1_800_000_000,
    };
    const metadata = { organisation_id: 'org_1', plan: 'growth', purpose: 'subscription' };
    const { result } = await compare(
      [PRICES, { id: 'cs_1', url: 'https://checkout.stripe.com/cs_1' }],
      (p) => p.createSubscriptionCheckout(input),
      async (s) => {
        await s.prices.list({ lookup_keys: [plan.priceLookupKey], active: true, limit: 1 });
        await s.checkout.sessions.create({
          mode: 'subscription',
          customer: input.customerId,
          client_reference_id: input.organisationId,
          line_items: [{ price: 'price_1', quantity: 1 }],
          metadata,
          subscription_data: {
            metadata,
            billing_cycle_anchor: input.cycleAnchor,
            proration_behavior: 'create_prorations',
          },
          success_url: input.returnUrl,
          cancel_url: input.returnUrl,
        });
      },
    );
    expect(result).toEqual({ checkoutId: 'cs_1', url: 'https://checkout.stripe.com/cs_1' });
  });

  it('changes a subscription plan and cancels a subscription', async () => {
    const subscription = {
      id: 'sub_1',
      object: 'subscription',
      items: { object: 'list', data: [{ id: 'si_1' }] },
    };
    await compare(
      [PRICES, subscription, subscription, subscription],
      async (p) => {
        await p.changeSubscriptionPlan({ subscriptionId: 'sub_1', organisationId: 'org_1', plan });
        await p.cancelSubscription({ subscriptionId: 'sub_1' });
      },
      async (s) => {
        await s.prices.list({ lookup_keys: [plan.priceLookupKey], active: true, limit: 1 });
        await s.subscriptions.retrieve('sub_1');
        await s.subscriptions.update('sub_1', {
          items: [{ id: 'si_1', price: 'price_1' }],
          proration_behavior: 'always_invoice',
          metadata: { organisation_id: 'org_1', plan: 'growth', purpose: 'subscription' },
        });
        await s.subscriptions.cancel('sub_1');
      },
    );
  });

  it('opens the portal, starts a credits checkout and adds an invoice item', async () => {
    const returnUrl = 'https://app.example/billing';
    const metadata = { organisation_id: 'org_1', purpose: 'credits', credits: '500' };
    const { sent } = await compare(
      [
        { url: 'https://billing.stripe.com/p' },
        { id: 'cs_2', url: 'https://checkout.stripe.com/cs_2' },
        { id: 'ii_1' },
      ],
      async (p) => {
        await p.createPortalSession({ customerId: 'cus_1', returnUrl });
        await p.createCreditsCheckout({
          customerId: 'cus_1',
          organisationId: 'org_1',
          credits: 500,
          unitAmountCents: 4,
          currency: 'aud',
          returnUrl,
        });
        await p.addInvoiceItem({
          customerId: 'cus_1',
          subscriptionId: 'sub_1',
          amountCents: 1500,
          currency: 'aud',
          description: 'Extra numbers',
          idempotencyKey: 'extra-numbers:org_1:2026-11',
        });
      },
      async (s) => {
        await s.billingPortal.sessions.create({ customer: 'cus_1', return_url: returnUrl });
        await s.checkout.sessions.create({
          mode: 'payment',
          customer: 'cus_1',
          client_reference_id: 'org_1',
          line_items: [
            {
              price_data: { currency: 'aud', unit_amount: 4, product_data: { name: 'Voice agent credits' } },
              quantity: 500,
            },
          ],
          metadata,
          payment_intent_data: { metadata },
          success_url: returnUrl,
          cancel_url: returnUrl,
        });
        await s.invoiceItems.create(
          {
            customer: 'cus_1',
            subscription: 'sub_1',
            amount: 1500,
            currency: 'aud',
            description: 'Extra numbers',
            metadata: { idempotency_key: 'extra-numbers:org_1:2026-11' },
          },
          { idempotencyKey: 'extra-numbers:org_1:2026-11' },
        );
      },
    );
    expect(sent[2].headers['idempotency-key']).toBe('extra-numbers:org_1:2026-11');
  });

  it("reports Stripe's refusal in the adapter's terms, and does not retry it", async () => {
    let calls = 0;
    globalThis.fetch = (async () => {
      calls += 1;
      return new Response(
        JSON.stringify({ error: { type: 'invalid_request_error', message: 'No such customer: cus_x' } }),
        {
          status: 400,
        },
      );
    }) as typeof fetch;
    const error = await new StripePayments(async () => SECRET)
      .createPortalSession({ customerId: 'cus_x', returnUrl: 'https://x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentsProviderError);
    expect((error as Error).message).toBe(
      'Stripe refused to open the customer portal: No such customer: cus_x',
    );
    expect((error as Error).cause).toBeInstanceOf(StripeRestError);
    expect(calls).toBe(1);
  });

  it('retries a 409 or a 5xx with the same idempotency key, as the library does', async () => {
    const keys: (string | null)[] = [];
    const statuses = [409, 503, 200];
    globalThis.fetch = (async (_input: unknown, init?: RequestInit) => {
      keys.push(new Headers(init?.headers).get('idempotency-key'));
      const status = statuses.shift() ?? 200;
      return new Response(
        JSON.stringify(status === 200 ? { url: 'https://billing.stripe.com/p' } : { error: {} }),
        {
          status,
        },
      );
    }) as typeof fetch;
    await expect(
      new StripePayments(async () => SECRET).createPortalSession({
        customerId: 'cus_1',
        returnUrl: 'https://x',
      }),
    ).resolves.toEqual({ url: 'https://billing.stripe.com/p' });
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^stripe-node-retry-/);
  }, 20_000);
});
