import { registerLocalService } from '../services.js';

/**
 * The identity webhook (`POST /webhooks/identity`) checks Standard Webhooks signatures made with a
 * shared secret. Locally it is IDENTITY_WEBHOOK_SECRET (this default unless the environment sets
 * one); in the cloud, the `identity-webhook` secret in Secrets Manager.
 */
export const LOCAL_IDENTITY_WEBHOOK_SECRET = `whsec_${Buffer.from('local-identity-webhook-secret-0001').toString('base64')}`;

registerLocalService({
  name: 'identity-webhook',
  start(ctx) {
    const secret = process.env.IDENTITY_WEBHOOK_SECRET || LOCAL_IDENTITY_WEBHOOK_SECRET;
    return {
      env: { IDENTITY_WEBHOOK_SECRET: secret },
      description: `POST ${ctx.baseUrl}/webhooks/identity, signed with IDENTITY_WEBHOOK_SECRET (stack.json env)`,
    };
  },
});
