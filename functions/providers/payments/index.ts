import * as z from 'zod';
import { secretString } from '../../platform/secrets.js';
import type { PaymentsProvider } from './port.js';
import { SimulatorPayments, simulatorRequest } from './simulator.js';
import { StripePayments } from './stripe.js';

export * from './port.js';

const PaymentsConfig = z.object({
  /** Default: Stripe where the stack gave the function the payments secret, the simulator elsewhere. */
  PAYMENTS_PROVIDER: z.enum(['simulator', 'stripe']).optional(),
  SECRET_ARN_PAYMENTS: z.string().optional(),
  PAYMENTS_SIMULATOR_URL: z.string().optional(),
  PAYMENTS_WEBHOOK_SECRET: z.string().optional(),
});

let provider: PaymentsProvider | undefined;

/** The configured adapter, built once per container. */
export function paymentsProvider(): PaymentsProvider {
  if (!provider) {
    const env = PaymentsConfig.parse(process.env);
    const name = env.PAYMENTS_PROVIDER ?? (env.SECRET_ARN_PAYMENTS ? 'stripe' : 'simulator');
    provider =
      name === 'stripe'
        ? new StripePayments(() => secretString('payments'))
        : new SimulatorPayments(() => ({
            url: process.env.PAYMENTS_SIMULATOR_URL,
            webhookSecret: process.env.PAYMENTS_WEBHOOK_SECRET,
          }));
  }
  return provider;
}

/**
 * Controls of the local payments simulator, for tests and demos: what a customer or the bank would do.
 * Each call returns once the resulting webhook events have been delivered.
 */
/** An invoice item the payments simulator holds (an extra number billed to a subscription). */
export interface SimulatorInvoiceItem {
  id: string;
  customer: string;
  subscription: string;
  amount: number;
  currency: string;
  description: string;
}

export const paymentsSimulator = {
  /** The renewal payment of a subscription fails: `invoice.payment_failed`, then the subscription goes past due. */
  failPayment: (subscriptionId: string) =>
    simulatorRequest<{ status: string }>(
      process.env.PAYMENTS_SIMULATOR_URL,
      'POST',
      `/control/subscriptions/${encodeURIComponent(subscriptionId)}/payment-failed`,
    ),
  /** The customer pays (a new card): `invoice.paid`, then the subscription is active again. */
  recoverPayment: (subscriptionId: string) =>
    simulatorRequest<{ status: string }>(
      process.env.PAYMENTS_SIMULATOR_URL,
      'POST',
      `/control/subscriptions/${encodeURIComponent(subscriptionId)}/payment-succeeded`,
    ),
  /** Sends an event again with the same id (a duplicate delivery); resolves with that delivery's status. */
  resendEvent: (eventId: string) =>
    simulatorRequest<{ delivery: { status: number | null } | null }>(
      process.env.PAYMENTS_SIMULATOR_URL,
      'POST',
      `/control/events/${encodeURIComponent(eventId)}/resend`,
    ),
  /** Every event sent so far, oldest first, with its deliveries. */
  events: () =>
    simulatorRequest<
      { id: string; type: string; created: number; deliveries: { status: number | null }[] }[]
    >(process.env.PAYMENTS_SIMULATOR_URL, 'GET', '/control/events'),
  /** One event with its payload (as sent). */
  event: (eventId: string) =>
    simulatorRequest<{ id: string; type: string; payload: { data: { object: Record<string, unknown> } } }>(
      process.env.PAYMENTS_SIMULATOR_URL,
      'GET',
      `/control/events/${encodeURIComponent(eventId)}`,
    ),
  invoiceItems: () =>
    simulatorRequest<SimulatorInvoiceItem[]>(
      process.env.PAYMENTS_SIMULATOR_URL,
      'GET',
      '/control/invoiceitems',
    ),
  /** Resolves once every event so far has been delivered. */
  settle: () =>
    simulatorRequest<{ events: number }>(process.env.PAYMENTS_SIMULATOR_URL, 'POST', '/control/settle'),
};
