import * as z from 'zod';
import {
  PaymentsProviderError,
  type BillingEvent,
  type PaymentsProvider,
  type ProviderPlan,
  invoiceItemParams,
  type InvoiceItemInput,
} from './port.js';
import { verifyStripeWebhook } from './stripe-events.js';
import { stripeRequest, type StripeParams } from './stripe-rest.js';

/**
 * The payments secret, put by the operator into Secrets Manager (ARN in SECRET_ARN_PAYMENTS) as JSON:
 *   { "secret_key": "sk_live_…", "webhook_secret": "whsec_…" }
 * The plans' prices are found in Stripe by the lookup key billing names (`ProviderPlan.priceLookupKey`),
 * so no price id is configured anywhere.
 */
export const StripeSecret = z.object({ secret_key: z.string().min(1), webhook_secret: z.string().min(1) });
export type StripeSecret = z.infer<typeof StripeSecret>;

/** The Stripe adapter (Stripe's REST API, `stripe-rest.ts`): Checkout, subscriptions, the customer portal, invoice items. */
export class StripePayments implements PaymentsProvider {
  readonly name = 'stripe' as const;
  private state: Promise<StripeSecret> | undefined;
  private readonly prices = new Map<string, Promise<string>>();

  constructor(private readonly loadSecret: () => Promise<string>) {}

  private connect(): Promise<StripeSecret> {
    this.state ??= this.loadSecret().then((raw) => StripeSecret.parse(JSON.parse(raw)));
    this.state.catch(() => (this.state = undefined));
    return this.state;
  }

  private async call<T>(
    what: string,
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    params: StripeParams = {},
    options: { idempotencyKey?: string } = {},
  ): Promise<T> {
    const secret = await this.connect();
    try {
      return await stripeRequest<T>(secret.secret_key, method, path, params, options);
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
      price = this.call<{ data: { id: string }[] }>('find the plan price', 'GET', '/v1/prices', {
        lookup_keys: [lookupKey],
        active: true,
        limit: 1,
      }).then((list) => {
        const found = list.data[0];
        if (!found) {
          throw new PaymentsProviderError(
            `Stripe refused to find the plan price: no active price with lookup key ${lookupKey}`,
          );
        }
        return found.id;
      });
      price.catch(() => this.prices.delete(lookupKey));
      this.prices.set(lookupKey, price);
    }
    return price;
  }

  async createCustomer(input: { organisationId: string; name: string; email: string }) {
    const customer = await this.call<{ id: string }>(
      'create a customer',
      'POST',
      '/v1/customers',
      { email: input.email, name: input.name, metadata: { organisation_id: input.organisationId } },
      { idempotencyKey: `customer:${input.organisationId}` },
    );
    return { customerId: customer.id };
  }

  async createSubscriptionCheckout(input: {
    customerId: string;
    organisationId: string;
    plan: ProviderPlan;
    returnUrl: string;
    cycleAnchor: number;
  }) {
    const price = await this.price(input.plan);
    const metadata = {
      organisation_id: input.organisationId,
      plan: input.plan.id,
      purpose: 'subscription',
    };
    const session = await this.call<{ id: string; url: string | null }>(
      'start a subscription checkout',
      'POST',
      '/v1/checkout/sessions',
      {
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
      },
    );
    if (!session.url) {
      throw new PaymentsProviderError(
        'Stripe refused to start a subscription checkout: checkout session without a URL',
      );
    }
    return { checkoutId: session.id, url: session.url };
  }

  async changeSubscriptionPlan(input: {
    subscriptionId: string;
    organisationId: string;
    plan: ProviderPlan;
  }) {
    const price = await this.price(input.plan);
    const path = `/v1/subscriptions/${encodeURIComponent(input.subscriptionId)}`;
    const subscription = await this.call<{ items: { data: { id: string }[] } }>(
      'change the subscription plan',
      'GET',
      path,
    );
    const item = subscription.items.data[0];
    if (!item) {
      throw new PaymentsProviderError(
        `Stripe refused to change the subscription plan: subscription ${input.subscriptionId} has no item`,
      );
    }
    // Setting the same price again changes nothing, so a retried request is harmless.
    await this.call('change the subscription plan', 'POST', path, {
      items: [{ id: item.id, price }],
      proration_behavior: 'always_invoice',
      metadata: { organisation_id: input.organisationId, plan: input.plan.id, purpose: 'subscription' },
    });
  }

  async cancelSubscription(input: { subscriptionId: string }) {
    await this.call(
      'cancel the subscription',
      'DELETE',
      `/v1/subscriptions/${encodeURIComponent(input.subscriptionId)}`,
    );
  }

  async createPortalSession(input: { customerId: string; returnUrl: string }) {
    const session = await this.call<{ url: string }>(
      'open the customer portal',
      'POST',
      '/v1/billing_portal/sessions',
      { customer: input.customerId, return_url: input.returnUrl },
    );
    return { url: session.url };
  }

  async createCreditsCheckout(input: {
    customerId: string;
    organisationId: string;
    credits: number;
    unitAmountCents: number;
    currency: string;
    returnUrl: string;
  }) {
    const metadata = {
      organisation_id: input.organisationId,
      purpose: 'credits',
      credits: String(input.credits),
    };
    const session = await this.call<{ id: string; url: string | null }>(
      'start a credits checkout',
      'POST',
      '/v1/checkout/sessions',
      {
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
      },
    );
    if (!session.url) {
      throw new PaymentsProviderError(
        'Stripe refused to start a credits checkout: checkout session without a URL',
      );
    }
    return { checkoutId: session.id, url: session.url };
  }

  async addInvoiceItem(input: InvoiceItemInput) {
    const item = await this.call<{ id: string }>(
      'add an invoice item',
      'POST',
      '/v1/invoiceitems',
      {
        ...invoiceItemParams(input),
        metadata: { idempotency_key: input.idempotencyKey },
      },
      { idempotencyKey: input.idempotencyKey },
    );
    return { itemId: item.id };
  }

  async parseWebhook(payload: string, signature: string | undefined): Promise<BillingEvent> {
    const secret = await this.connect();
    return verifyStripeWebhook(payload, signature, secret.webhook_secret);
  }
}
