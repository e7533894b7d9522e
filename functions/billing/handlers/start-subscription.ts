import { requireOrganisation } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { billingRoutes } from '../routes.js';
import { startSubscription } from '../subscriptions.js';

/**
 * `POST /api/v1/organisations/{organisation_id}/billing/subscription` `{plan}`: subscribe, or change
 * the plan of the live subscription (owner). 202: the provider confirms by webhook.
 */
export const handler = implement(billingRoutes.startSubscription, async ({ principal, params, body }) => {
  const { organisationId } = await requireOrganisation(principal, params.organisation_id, 'billing:manage');
  const request = await startSubscription(organisationId, body.plan, { returnUrl: body.return_url });
  return {
    status: 202,
    body: {
      organisation_id: request.organisationId,
      plan: request.plan,
      requested_plan: request.requestedPlan,
      status: request.subscriptionStatus,
      checkout_url: request.checkoutUrl,
    },
  };
});
