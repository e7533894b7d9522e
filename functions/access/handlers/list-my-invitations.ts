import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { listMyInvitations } from '../invitations.js';
import { requireUser } from '../workspace-access.js';

/** `GET /api/v1/invitations`: pending invitations addressed to the caller's email. */
export const handler = implement(accessRoutes.listMyInvitations, async (req) => {
  const page = await listMyInvitations(requireUser(req.principal), req.query);
  return {
    status: 200,
    body: {
      items: page.items.map(({ invitation, organisationName }) => ({
        id: invitation.invitationId,
        invitation_id: invitation.invitationId,
        organisation_id: invitation.organisationId,
        organisation_name: organisationName,
        role: invitation.role,
        status: invitation.status,
        created_at: invitation.createdAt,
      })),
      next_cursor: page.nextCursor,
    },
  };
});
