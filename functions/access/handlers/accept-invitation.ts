import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { acceptInvitation } from '../invitations.js';
import { requireUser } from '../workspace-access.js';
import { acceptedInvitationView } from '../views.js';

/** `POST /api/v1/invitations/{invitation_id}/accept`: the invited user (token email = invited address). */
export const handler = implement(accessRoutes.acceptInvitation, async (req) => {
  const invitation = await acceptInvitation(requireUser(req.principal), req.params.invitation_id);
  return { status: 200, body: acceptedInvitationView(invitation) };
});
