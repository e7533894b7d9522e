import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { inviteMember } from '../invitations.js';
import { requireOrganisation } from '../workspace-access.js';
import { invitationView } from '../views.js';

/**
 * `POST /api/v1/organisations/{organisation_id}/invitations`: owner or admin invites an address.
 * 201 for a new invitation; 200 when the address was already pending (resent, same invitation).
 */
export const handler = implement(accessRoutes.createInvitation, async (req) => {
  const access = await requireOrganisation(req.principal, req.params.organisation_id, 'organisation:invite');
  const outcome = await inviteMember(access, req.body);
  return { status: outcome.created ? 201 : 200, body: invitationView(outcome.invitation) };
});
