import {
  PaymentsProviderError,
  type BillingEvent,
  type PaymentsProvider,
  type ProviderPlan,
  invoiceItemParams,
  type InvoiceItemInput,
} from './port.js';
import { verifyStripeWebhook } from './stripe-events.js';

/**
 * The local adapter: calls the payments simulator (lib/local/simulators/payments/server.ts, started by the local stack;
 * its URL in PAYMENTS_SIMULATOR_URL) as the Stripe adapter calls Stripe, and verifies its webhooks
 * with Stripe's scheme and the secret it was started with (PAYMENTS_WEBHOOK_SECRET).
 */
export class SimulatorPayments implements PaymentsProvider {
  readonly name = 'simulator' as const;

  constructor(private readonly settings: () => { url?: string; webhookSecret?: string }) {}

  async parseWebhook(payload: string, signature: string | undefined): Promise<BillingEvent> {
    const secret = this.settings().webhookSecret;
    if (!secret)
      throw new Error('PAYMENTS_WEBHOOK_SECRET is not set: is the local payments simulator running?');
    return verifyStripeWebhook(payload, signature, secret);
  }

  createCustomer(input: { organisationId: string; name: string; email: string }) {
    return simulatorRequest<{ id: string }>(
      this.settings().url,
      'POST',
      '/v1/customers',
      { organisation_id: input.organisationId, name: input.name, email: input.email },
      `customer:${input.organisationId}`,
    ).then((customer) => ({ customerId: customer.id }));
  }

  createSubscriptionCheckout(input: {
    customerId: string;
    organisationId: string;
    plan: ProviderPlan;
    returnUrl: string;
  }) {
    return simulatorRequest<{ id: string; url: string }>(
      this.settings().url,
      'POST',
      '/v1/checkout/sessions',
      {
        mode: 'subscription',
        customer: input.customerId,
        organisation_id: input.organisationId,
        plan: input.plan.id,
        return_url: input.returnUrl,
      },
    ).then((session) => ({ checkoutId: session.id, url: session.url }));
  }

  async changeSubscriptionPlan(input: {
    subscriptionId: string;
    organisationId: string;
    plan: ProviderPlan;
  }) {
    await simulatorRequest(
      this.settings().url,
      'POST',
      `/v1/subscriptions/${encodeURIComponent(input.subscriptionId)}/change`,
      {
        plan: input.plan.id,
        organisation_id: input.organisationId,
      },
    );
  }

  async cancelSubscription(input: { subscriptionId: string }) {
    await simulatorRequest(
      this.settings().url,
      'POST',
      `/v1/subscriptions/${encodeURIComponent(input.subscriptionId)}/cancel`,
      {},
    );
  }

  createPortalSession(input: { customerId: string; returnUrl: string }) {
    return simulatorRequest<{ url: string }>(this.settings().url, 'POST', '/v1/billing_portal/sessions', {
      customer: input.customerId,
      return_url: input.returnUrl,
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
    return simulatorRequest<{ id: string; url: string }>(
      this.settings().url,
      'POST',
      '/v1/checkout/sessions',
      {
        mode: 'payment',
        customer: input.customerId,
        organisation_id: input.organisationId,
        credits: input.credits,
        unit_amount: input.unitAmountCents,
        currency: input.currency,
        return_url: input.returnUrl,
      },
    ).then((session) => ({ checkoutId: session.id, url: session.url }));
  }

  addInvoiceItem(input: InvoiceItemInput) {
    return simulatorRequest<{ id: string }>(
      this.settings().url,
      'POST',
      '/v1/invoiceitems',
      {
        ...invoiceItemParams(input),
      },
      input.idempotencyKey,
    ).then((item) => ({ itemId: item.id }));
  }
}

/** One request to the payments simulator; a refusal is a PaymentsProviderError with its message. */
export async function simulatorRequest<T = unknown>(
  baseUrl: string | undefined,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  idempotencyKey?: string,
): Promise<T> {
  if (!baseUrl)
    throw new PaymentsProviderError(
      'PAYMENTS_SIMULATOR_URL is not set: is the local payments simulator running?',
    );
  let response: Response;
  try {
    response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new PaymentsProviderError('the payments simulator did not answer', { cause: error });
  }
  const text = await response.text();
  const parsed = text === '' ? undefined : (JSON.parse(text) as unknown);
  if (!response.ok) {
    const message = (parsed as { error?: { message?: string } } | undefined)?.error?.message ?? text;
    throw new PaymentsProviderError(
      `the payments simulator refused ${method} ${path}: ${response.status} ${message}`,
    );
  }
  return parsed as T;
}
