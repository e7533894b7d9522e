import { requireOrganisation } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { billingRoutes } from '../routes.js';
import { centsToAud } from '../credits.js';
import { buyCredits } from '../purchases.js';

/**
 * `POST /api/v1/organisations/{organisation_id}/billing/credits` `{quantity}`: extra credits at
 * 0.01 AUD each (owner). 202: the credits are granted when the provider confirms the payment.
 */
export const handler = implement(billingRoutes.buyCredits, async ({ principal, params, body }) => {
  const { organisationId } = await requireOrganisation(principal, params.organisation_id, 'billing:manage');
  const purchase = await buyCredits(organisationId, body.quantity, { returnUrl: body.return_url });
  return {
    status: 202,
    body: {
      id: purchase.purchaseId,
      purchase_id: purchase.purchaseId,
      quantity: purchase.quantity,
      amount_aud: centsToAud(purchase.amountCents),
      currency: purchase.currency.toUpperCase(),
      status: 'pending',
      checkout_url: purchase.checkoutUrl,
    },
  };
});
