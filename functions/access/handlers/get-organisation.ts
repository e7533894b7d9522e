import { implement } from '../../platform/http/index.js';
import { organisationBilling } from '../../billing/organisations.js';
import { accessRoutes } from '../routes.js';
import { getOrganisation } from '../organisations.js';
import { requireOrganisation } from '../workspace-access.js';
import { organisationView } from '../views.js';

/** `GET /api/v1/organisations/{organisation_id}`: any member; with the plan and balance billing reports. */
export const handler = implement(accessRoutes.getOrganisation, async (req) => {
  const access = await requireOrganisation(req.principal, req.params.organisation_id, 'organisation:read');
  const [{ organisation, role }, billing] = await Promise.all([
    getOrganisation(access),
    organisationBilling(access.organisationId),
  ]);
  return { status: 200, body: organisationView(organisation, role, billing) };
});
