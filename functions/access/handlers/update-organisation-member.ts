import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { changeMemberRole } from '../members.js';
import { requireOrganisation } from '../workspace-access.js';
import { organisationMemberView } from '../views.js';

/** `PATCH /api/v1/organisations/{organisation_id}/members/{user_id}`: owner or admin sets `regular`/`admin`. */
export const handler = implement(accessRoutes.updateOrganisationMember, async (req) => {
  const access = await requireOrganisation(
    req.principal,
    req.params.organisation_id,
    'organisation:manage_members',
  );
  const member = await changeMemberRole(access, req.params.user_id, req.body.role);
  return {
    status: 200,
    body: organisationMemberView({
      userId: member.userId,
      email: member.email,
      role: member.role,
      status: 'accepted',
      invitationId: null,
      joinedAt: member.joinedAt,
    }),
  };
});
