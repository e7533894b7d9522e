import { config } from '../../platform/config.js';
import { implement } from '../../platform/http/index.js';
import { isId } from '../../platform/ids.js';
import { invitationPage, signInFrom } from '../invitation-page.js';
import { accessRoutes } from '../routes.js';

/**
 * GET /i/{invitation_id} — the invitation email's link: a page that signs the invitee in and
 * accepts (functions/access/invitation-page.ts). It reads nothing: a link of the wrong shape is 404.
 */
export const handler = implement(accessRoutes.invitationPage, async (req) => {
  const invitationId = req.params.invitation_id;
  if (!isId('invitation', invitationId)) return { status: 404, body: { error: 'Invitation not found' } };
  const page = invitationPage(invitationId, signInFrom(config()));
  return {
    status: 200,
    raw: { contentType: 'text/html; charset=utf-8', body: page.html },
    headers: page.headers,
  };
});
