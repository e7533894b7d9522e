import { implement } from '../../platform/http/index.js';
import { organisationBilling } from '../../billing/organisations.js';
import { accessRoutes } from '../routes.js';
import { updateOrganisation } from '../organisations.js';
import { requireOrganisation } from '../workspace-access.js';
import { organisationView } from '../views.js';

/** `PATCH /api/v1/organisations/{organisation_id}`: owner or admin renames the organisation. */
export const handler = implement(accessRoutes.updateOrganisation, async (req) => {
  const access = await requireOrganisation(req.principal, req.params.organisation_id, 'organisation:update');
  const [{ organisation, role }, billing] = await Promise.all([
    updateOrganisation(access, req.body),
    organisationBilling(access.organisationId),
  ]);
  return { status: 200, body: organisationView(organisation, role, billing) };
});
