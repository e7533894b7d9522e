import { Webhook } from 'standardwebhooks';
import { unauthorized, ValidationError } from '../platform/errors.js';
import { webhookHandler } from '../platform/http/webhook-handler.js';
import { logger } from '../platform/logger.js';
import { secretString } from '../platform/secrets.js';
import { parseOrThrow } from '../platform/validation.js';
import { applyIdentityEvent, IdentityUserEvent } from '../access/identity-events.js';

/**
 * `POST /webhooks/identity` (a function URL): user events of the identity provider. Signed the
 * Standard Webhooks way — `webhook-id`, `webhook-timestamp` (unix seconds; older or newer than
 * 5 minutes is refused) and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">` —
 * with a shared secret (`whsec_…`): IDENTITY_WEBHOOK_SECRET locally, the `identity-webhook` secret in
 * the cloud. The signature is checked before anything is read; a bad one is 401 and changes nothing.
 * The `webhook-id` names the event: the same event twice changes nothing the second time.
 */
let verifier: Promise<Webhook> | undefined;

function webhookVerifier(): Promise<Webhook> {
  verifier ??= (
    process.env.IDENTITY_WEBHOOK_SECRET
      ? Promise.resolve(process.env.IDENTITY_WEBHOOK_SECRET)
      : secretString('identity-webhook').then((value) => value.trim())
  ).then((secret) => new Webhook(secret));
  verifier.catch(() => {
    verifier = undefined;
  });
  return verifier;
}

export const handler = webhookHandler(async ({ rawBody: body, headers }) => {
  const webhook = await webhookVerifier();
  try {
    webhook.verify(body, headers, { jsonParse: false });
  } catch (error) {
    logger.info('identity webhook refused', {
      reason: error instanceof Error ? error.message : String(error),
    });
    throw unauthorized();
  }
  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    throw new ValidationError([
      { type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', input: {} },
    ]);
  }
  const eventId = headers['webhook-id'];
  if (eventId.length > 200) {
    throw new ValidationError([
      {
        type: 'string_too_long',
        loc: ['header', 'webhook-id'],
        msg: 'String should have at most 200 characters',
        input: eventId,
      },
    ]);
  }
  const identityEvent = parseOrThrow(IdentityUserEvent, payload, 'body');
  const outcome = await applyIdentityEvent(eventId, identityEvent);
  logger.info('identity event applied', { eventId, outcome, trigger: identityEvent.triggerSource });
  return { status: 200, body: { received: true, outcome } };
});
