import { implement } from '../../platform/http/index.js';
import { accessRoutes } from '../routes.js';
import { requireUser } from '../workspace-access.js';

/** `GET /api/v1/auth/verify`: who the caller's token names. */
export const handler = implement(accessRoutes.verifyAuth, async (req) => {
  const user = requireUser(req.principal);
  return { status: 200, body: { user_id: user.userId, email: user.email } };
});
