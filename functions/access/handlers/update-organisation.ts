import { httpHandler } from '../../platform/http/index.js';
import { updateOrganisation } from '../organisations.js';
import { UpdateOrganisationBody } from '../schemas.js';
import { requireOrganisation } from '../workspace-access.js';
import { organisationView } from '../views.js';

/** `PATCH /api/v1/organisations/{organisation_id}`: owner or admin renames the organisation. */
export const handler = httpHandler({ auth: 'user', body: UpdateOrganisationBody }, async (req) => {
  const access = await requireOrganisation(req.principal, req.params.organisation_id, 'organisation:update');
  const { organisation, role, account } = await updateOrganisation(access, req.body);
  return { status: 200, body: organisationView(organisation, role, account) };
});
