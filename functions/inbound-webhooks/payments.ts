import { handleBillingWebhook } from '../billing/webhooks.js';
import { webhookHandler } from '../platform/http/webhook-handler.js';

/**
 * `POST /webhooks/billing` (a function URL): the payment provider's events, signed with Stripe's
 * scheme (`Stripe-Signature`), verified with `stripe.webhooks.constructEvent` before anything is read.
 * A forged or stale event is 401 and changes nothing; a duplicate event id changes nothing again.
 */
export const handler = webhookHandler(async ({ rawBody, headers }) => {
  const result = await handleBillingWebhook(rawBody, headers['stripe-signature']);
  return { status: result.status, body: result.body };
});
