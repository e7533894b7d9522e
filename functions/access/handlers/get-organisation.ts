import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { getOrganisation } from '../organisations.js';
import { requireOrganisation } from '../workspace-access.js';
import { organisationView } from '../views.js';

/** `GET /api/v1/organisations/{organisation_id}`: any member. */
export const handler = implement(accessRoutes.getOrganisation, async (req) => {
  const access = await requireOrganisation(req.principal, req.params.organisation_id, 'organisation:read');
  const { organisation, role, account } = await getOrganisation(access);
  return { status: 200, body: organisationView(organisation, role, account) };
});
