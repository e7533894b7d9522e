import { requireOrganisation } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { billingRoutes } from '../routes.js';
import { cancelSubscription } from '../subscriptions.js';

/**
 * `DELETE /api/v1/organisations/{organisation_id}/billing/subscription`: cancel (owner). 202: the
 * provider confirms by webhook and the organisation returns to the Free plan.
 */
export const handler = implement(billingRoutes.cancelSubscription, async ({ principal, params }) => {
  const { organisationId } = await requireOrganisation(principal, params.organisation_id, 'billing:manage');
  const account = await cancelSubscription(organisationId);
  return {
    status: 202,
    body: {
      organisation_id: organisationId,
      plan: account.plan,
      status: account.subscriptionStatus,
      cancel_requested: true,
    },
  };
});
