import { handleBillingWebhook } from '../billing/webhooks.js';
import { webhookHandler } from '../platform/http/webhook-handler.js';
import { releaseHeldActions } from '../post-call/held-actions.js';
import { releaseHeldSms } from '../sms/held.js';

/**
 * `POST /webhooks/billing` (a function URL): the payment provider's events, signed with Stripe's
 * scheme (`Stripe-Signature`), verified with `stripe.webhooks.constructEvent` before anything is read.
 * A forged or stale event is 401 and changes nothing; a duplicate event id changes nothing again.
 * When an organisation is back in good standing, the post-call actions held meanwhile are released
 * and the SMS sends held meanwhile (billing sits below post-call and sms and is handed that step here).
 */
export const handler = webhookHandler(async ({ rawBody, headers }) => {
  const result = await handleBillingWebhook(rawBody, headers['stripe-signature'], {
    goodStandingRestored: async (organisationId: string) => {
      await releaseHeldActions(organisationId);
      await releaseHeldSms(organisationId);
    },
  });
  return { status: result.status, body: result.body };
});
