import { requireOrganisation } from '../../access/workspace-access.js';
import { notFound } from '../../platform/errors.js';
import { implement } from '../../platform/http/index.js';
import { billingRoutes } from '../routes.js';
import { getBillingAccount } from '../ledger.js';
import { ORGANISATION_NOT_FOUND } from '../subscriptions.js';
import { toBillingResponse } from '../views.js';

/** `GET /api/v1/organisations/{organisation_id}/billing`: plan, standing, balance, period and usage (members). */
export const handler = implement(billingRoutes.getBilling, async ({ principal, params }) => {
  const { organisationId } = await requireOrganisation(principal, params.organisation_id, 'billing:read');
  const account = await getBillingAccount(organisationId);
  if (!account) throw notFound(ORGANISATION_NOT_FOUND);
  return { status: 200, body: toBillingResponse(account) };
});
