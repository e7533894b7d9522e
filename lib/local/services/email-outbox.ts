import { join } from 'node:path';
import { registerLocalService } from '../services.js';

/**
 * The local email provider is an outbox file the email port appends to
 * (functions/providers/email/local-outbox.ts). This puts the state folder in the handlers' env and in
 * stack.json, so the port and the tests agree on `<LOCAL_STATE_DIR>/outbox/email.jsonl`.
 */
registerLocalService({
  name: 'email-outbox',
  start(ctx) {
    return {
      env: { LOCAL_STATE_DIR: ctx.stateDir },
      description: `emails are appended to ${join(ctx.stateDir, 'outbox', 'email.jsonl')}`,
    };
  },
});
