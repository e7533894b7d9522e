import { httpHandler } from '../../platform/http/index.js';
import { requireUser } from '../workspace-access.js';

/** `GET /api/v1/auth/verify`: who the caller's token names. */
export const handler = httpHandler({ auth: 'user' }, async (req) => {
  const user = requireUser(req.principal);
  return { status: 200, body: { user_id: user.userId, email: user.email } };
});
