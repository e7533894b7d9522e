import type Stripe from 'stripe';
import * as z from 'zod';
import {
  PaymentsProviderError,
  type BillingEvent,
  type PaymentsProvider,
  type ProviderPlan,
} from './port.js';
import { verifyStripeWebhook } from './stripe-events.js';

/**
 * The payments secret, put by the operator into Secrets Manager (ARN in SECRET_ARN_PAYMENTS) as JSON:
 *   { "secret_key": "sk_live_…", "webhook_secret": "whsec_…" }
 * The plans' prices are found in Stripe by the lookup key billing names (`ProviderPlan.priceLookupKey`),
 * so no price id is configured anywhere.
 */
export const StripeSecret = z.object({ secret_key: z.string().min(1), webhook_secret: z.string().min(1) });
export type StripeSecret = z.infer<typeof StripeSecret>;

/** The Stripe adapter (official `stripe` library): Checkout, subscriptions, the customer portal, invoice items. */
export class StripePayments implements PaymentsProvider {
  readonly name = 'stripe' as const;
  private state: Promise<{ stripe: Stripe; secret: StripeSecret }> | undefined;
  private readonly prices = new Map<string, Promise<string>>();

  constructor(private readonly loadSecret: () => Promise<string>) {}

  /** The library is loaded on first use: a function that only checks webhooks never evaluates it. */
  private connect(): Promise<{ stripe: Stripe; secret: StripeSecret }> {
    this.state ??= this.loadSecret().then(async (raw) => {
      const secret = StripeSecret.parse(JSON.parse(raw));
      const { default: StripeClient } = await import('stripe');
      return { stripe: new StripeClient(secret.secret_key, { maxNetworkRetries: 2, timeout: 8000 }), secret };
    });
    this.state.catch(() => (this.state = undefined));
    return this.state;
  }

  private async call<T>(what: string, fn: (stripe: Stripe) => Promise<T>): Promise<T> {
    const { stripe } = await this.connect();
    try {
      return await fn(stripe);
    } catch (error) {
      throw new PaymentsProviderError(
        `Stripe refused to ${what}: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  private price(plan: ProviderPlan): Promise<string> {
    const lookupKey = plan.priceLookupKey;
    let price = this.prices.get(lookupKey);
    if (!price) {
      price = this.call('find the plan price', async (stripe) => {
        const list = await stripe.prices.list({ lookup_keys: [lookupKey], active: true, limit: 1 });
        const found = list.data[0];
        if (!found) throw new Error(`no active price with lookup key ${lookupKey}`);
        return found.id;
      });
      price.catch(() => this.prices.delete(lookupKey));
      this.prices.set(lookupKey, price);
    }
    return price;
  }

  createCustomer(input: { organisationId: string; name: string; email: string }) {
    return this.call('create a customer', async (stripe) => {
      const customer = await stripe.customers.create(
        { email: input.email, name: input.name, metadata: { organisation_id: input.organisationId } },
        { idempotencyKey: `customer:${input.organisationId}` },
      );
      return { customerId: customer.id };
    });
  }

  async createSubscriptionCheckout(input: {
    customerId: string;
    organisationId: string;
    plan: ProviderPlan;
    returnUrl: string;
    cycleAnchor: number;
  }) {
    const price = await this.price(input.plan);
    return this.call('start a subscription checkout', async (stripe) => {
      const metadata = {
        organisation_id: input.organisationId,
        plan: input.plan.id,
        purpose: 'subscription',
      };
      const session = await stripe.checkout.sessions.create({
        mode: 'subscription',
        customer: input.customerId,
        client_reference_id: input.organisationId,
        line_items: [{ price, quantity: 1 }],
        metadata,
        subscription_data: {
          metadata,
          billing_cycle_anchor: input.cycleAnchor,
          proration_behavior: 'create_prorations',
        },
        success_url: input.returnUrl,
        cancel_url: input.returnUrl,
      });
      if (!session.url) throw new Error('checkout session without a URL');
      return { checkoutId: session.id, url: session.url };
    });
  }

  async changeSubscriptionPlan(input: {
    subscriptionId: string;
    organisationId: string;
    plan: ProviderPlan;
  }) {
    const price = await this.price(input.plan);
    await this.call('change the subscription plan', async (stripe) => {
      const subscription = await stripe.subscriptions.retrieve(input.subscriptionId);
      const item = subscription.items.data[0];
      if (!item) throw new Error(`subscription ${input.subscriptionId} has no item`);
      // Setting the same price again changes nothing, so a retried request is harmless.
      await stripe.subscriptions.update(input.subscriptionId, {
        items: [{ id: item.id, price }],
        proration_behavior: 'always_invoice',
        metadata: { organisation_id: input.organisationId, plan: input.plan.id, purpose: 'subscription' },
      });
    });
  }

  async cancelSubscription(input: { subscriptionId: string }) {
    await this.call('cancel the subscription', (stripe) => stripe.subscriptions.cancel(input.subscriptionId));
  }

  createPortalSession(input: { customerId: string; returnUrl: string }) {
    return this.call('open the customer portal', async (stripe) => {
      const session = await stripe.billingPortal.sessions.create({
        customer: input.customerId,
        return_url: input.returnUrl,
      });
      return { url: session.url };
    });
  }

  createCreditsCheckout(input: {
    customerId: string;
    organisationId: string;
    credits: number;
    unitAmountCents: number;
    currency: string;
    returnUrl: string;
  }) {
    return this.call('start a credits checkout', async (stripe) => {
      const metadata = {
        organisation_id: input.organisationId,
        purpose: 'credits',
        credits: String(input.credits),
      };
      const session = await stripe.checkout.sessions.create({
        mode: 'payment',
        customer: input.customerId,
        client_reference_id: input.organisationId,
        line_items: [
          {
            price_data: {
              currency: input.currency,
              unit_amount: input.unitAmountCents,
              product_data: { name: 'Voice agent credits' },
            },
            quantity: input.credits,
          },
        ],
        metadata,
        payment_intent_data: { metadata },
        success_url: input.returnUrl,
        cancel_url: input.returnUrl,
      });
      if (!session.url) throw new Error('checkout session without a URL');
      return { checkoutId: session.id, url: session.url };
    });
  }

  addInvoiceItem(input: {
    customerId: string;
    subscriptionId: string;
    amountCents: number;
    currency: string;
    description: string;
    idempotencyKey: string;
  }) {
    return this.call('add an invoice item', async (stripe) => {
      const item = await stripe.invoiceItems.create(
        {
          customer: input.customerId,
          subscription: input.subscriptionId,
          amount: input.amountCents,
          currency: input.currency,
          description: input.description,
          metadata: { idempotency_key: input.idempotencyKey },
        },
        { idempotencyKey: input.idempotencyKey },
      );
      return { itemId: item.id };
    });
  }

  async parseWebhook(payload: string, signature: string | undefined): Promise<BillingEvent> {
    const { secret } = await this.connect();
    return verifyStripeWebhook(payload, signature, secret.webhook_secret);
  }
}
