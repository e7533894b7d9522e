/**
 * The payments port: what billing needs from a payment provider. Adapters: Stripe (`stripe.ts`, the
 * cloud) and the local simulator (`simulator.ts`, talking to the local stack's simulator server,
 * lib/local/simulators/payments/server.ts), which sends the same signed webhook events Stripe would.
 * Amounts are integer cents.
 *
 * The port knows no plan catalogue: billing names a plan by its id and the lookup key of its price
 * (`ProviderPlan`), and reads the plan of a subscription event back from what the provider reports.
 */
export interface PaymentsProvider {
  readonly name: 'stripe' | 'simulator';
  createCustomer(input: {
    organisationId: string;
    name: string;
    email: string;
  }): Promise<{ customerId: string }>;
  /** A hosted checkout that starts a subscription to `plan`, its cycles anchored at `cycleAnchor` (epoch s). */
  createSubscriptionCheckout(input: {
    customerId: string;
    organisationId: string;
    plan: ProviderPlan;
    returnUrl: string;
    cycleAnchor: number;
  }): Promise<{ checkoutId: string; url: string }>;
  /** Moves a live subscription to another plan (prorated); the provider confirms by webhook. */
  changeSubscriptionPlan(input: {
    subscriptionId: string;
    organisationId: string;
    plan: ProviderPlan;
  }): Promise<void>;
  /** Ends a subscription now; the provider confirms by webhook. */
  cancelSubscription(input: { subscriptionId: string }): Promise<void>;
  /** The provider's customer portal (payment method, invoices). */
  createPortalSession(input: { customerId: string; returnUrl: string }): Promise<{ url: string }>;
  /** A hosted checkout for a one-off purchase of `credits` at `unitAmountCents` each. */
  createCreditsCheckout(input: {
    customerId: string;
    organisationId: string;
    credits: number;
    unitAmountCents: number;
    currency: string;
    returnUrl: string;
  }): Promise<{ checkoutId: string; url: string }>;
  /** A charge added to the subscription's next invoice; the same key never adds it twice. */
  addInvoiceItem(input: InvoiceItemInput): Promise<{ itemId: string }>;
  /** Verifies a webhook's signature (and age) and reads the event; WebhookSignatureError when it fails. */
  parseWebhook(payload: string, signature: string | undefined): Promise<BillingEvent>;
}

/**
 * A paid plan as the provider sees it: billing's plan id (written into the checkout's and the
 * subscription's metadata) and the lookup key of its price (so no price id is configured anywhere).
 */
export interface ProviderPlan {
  id: string;
  priceLookupKey: string;
}

/** Subscription states as billing sees them; `pending` (not paid yet) changes nothing. */
export type ProviderSubscriptionStatus = 'active' | 'past_due' | 'canceled' | 'pending';

/** A verified provider event, in billing's terms. */
export type BillingEvent = { id: string; type: string; created: number } & (
  | {
      kind: 'subscription';
      customerId: string;
      subscriptionId: string;
      status: ProviderSubscriptionStatus;
      /** The lookup key of the subscription's price, as the provider reports it. */
      priceLookupKey?: string;
      /** The plan id written into the subscription's metadata at checkout (`ProviderPlan.id`). */
      metadataPlan?: string;
      organisationId?: string;
    }
  | { kind: 'invoice'; outcome: 'paid' | 'payment_failed'; customerId: string; subscriptionId?: string }
  | {
      kind: 'credits_paid';
      customerId?: string;
      organisationId?: string;
      /** Idempotency of the grant: one payment grants its credits once. */
      paymentId: string;
      credits: number;
      amountCents: number;
      currency: string;
    }
  | { kind: 'ignored' }
);

/** A forged, altered or stale webhook: answered 401, nothing read further. */
export class WebhookSignatureError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WebhookSignatureError';
  }
}

/** The provider refused or failed a request. */
export class PaymentsProviderError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PaymentsProviderError';
  }
}

/** A charge to add to a subscription's next invoice. */
export interface InvoiceItemInput {
  customerId: string;
  subscriptionId: string;
  amountCents: number;
  currency: string;
  description: string;
  idempotencyKey: string;
}

/** Stripe's invoice-item parameters (the simulator takes Stripe's shape too). */
export const invoiceItemParams = (input: InvoiceItemInput) => ({
  customer: input.customerId,
  subscription: input.subscriptionId,
  amount: input.amountCents,
  currency: input.currency,
  description: input.description,
});
