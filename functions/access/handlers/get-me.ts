import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { getProfile } from '../profile.js';
import { requireUser } from '../workspace-access.js';
import { meView } from '../views.js';

/** `GET /api/v1/me`: the caller's profile and organisations. */
export const handler = implement(accessRoutes.getMe, async (req) => {
  const profile = await getProfile(requireUser(req.principal));
  return { status: 200, body: meView(profile) };
});
