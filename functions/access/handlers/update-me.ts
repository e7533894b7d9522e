import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { updateProfile } from '../profile.js';
import { requireUser } from '../workspace-access.js';
import { meView } from '../views.js';

/** `PATCH /api/v1/me`: the caller changes their name (email is read-only: 422). */
export const handler = implement(accessRoutes.updateMe, async (req) => {
  const profile = await updateProfile(requireUser(req.principal), req.body);
  return { status: 200, body: meView(profile) };
});
