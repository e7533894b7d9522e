import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { removeMember } from '../members.js';
import { requireOrganisation } from '../workspace-access.js';

/**
 * `DELETE /api/v1/organisations/{organisation_id}/members/{user_id}`: owner or admin removes a member
 * (or withdraws a pending one by its invitation id). 409 for the owner and for a workspace's only admin.
 */
export const handler = implement(accessRoutes.removeOrganisationMember, async (req) => {
  const access = await requireOrganisation(
    req.principal,
    req.params.organisation_id,
    'organisation:manage_members',
  );
  await removeMember(access, req.params.user_id);
  return { status: 204 };
});
