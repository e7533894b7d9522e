import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { resendInvitation } from '../invitations.js';
import { requireOrganisation } from '../workspace-access.js';
import { invitationView } from '../views.js';

/** `POST /api/v1/organisations/{organisation_id}/invitations/{invitation_id}/resend`: same invitation, new email. */
export const handler = implement(accessRoutes.resendInvitation, async (req) => {
  const access = await requireOrganisation(req.principal, req.params.organisation_id, 'organisation:invite');
  const { invitation } = await resendInvitation(access, req.params.invitation_id);
  return { status: 200, body: invitationView(invitation) };
});
