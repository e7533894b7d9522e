import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { listOrganisationMembers } from '../members.js';
import { requireOrganisation } from '../workspace-access.js';
import { organisationMemberView } from '../views.js';

/** `GET /api/v1/organisations/{organisation_id}/members`: accepted members and pending invitations. */
export const handler = implement(accessRoutes.listOrganisationMembers, async (req) => {
  const access = await requireOrganisation(req.principal, req.params.organisation_id, 'organisation:read');
  const page = await listOrganisationMembers(access, req.query);
  return {
    status: 200,
    body: { items: page.items.map(organisationMemberView), next_cursor: page.nextCursor },
  };
});
