import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): each request carries `webhook-id`
 * (stable across retries and resends), `webhook-timestamp` (epoch seconds of this attempt) and
 * `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, one per secret,
 * separated by spaces — during the 24 hours after a rotation, the new and the old secret both sign.
 */

export const SECRET_PREFIX = 'whsec_';

/** How long the secret before a rotation keeps signing. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3600 * 1000;

/** A new secret: `whsec_` and 32 random bytes in base64 (the Standard Webhooks format). */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three Standard Webhooks headers for one attempt, signed by every given secret (newest first). */
export function signatureHeaders(input: {
  webhookId: string;
  timestamp: Date;
  payload: string;
  secrets: readonly string[];
}): SignedHeaders {
  if (input.secrets.length === 0) throw new Error('at least one signing secret is needed');
  const seconds = Math.floor(input.timestamp.getTime() / 1000);
  const signatures = input.secrets.map((secret) =>
    new Webhook(secret).sign(input.webhookId, new Date(seconds * 1000), input.payload),
  );
  return {
    'webhook-id': input.webhookId,
    'webhook-timestamp': String(seconds),
    'webhook-signature': signatures.join(' '),
  };
}

/** The secrets that sign now: the current one, and the previous one while its grace lasts. */
export function activeSecrets(
  record: { secret: string; previousSecret?: string; previousExpiresAt?: string },
  now: Date,
): string[] {
  const secrets = [record.secret];
  if (
    record.previousSecret &&
    record.previousExpiresAt &&
    Date.parse(record.previousExpiresAt) > now.getTime()
  ) {
    secrets.push(record.previousSecret);
  }
  return secrets;
}

/**
 * Verifies a request as a receiver would (the demo receiver and the tests use it). Returns the
 * parsed payload, or throws when no signature matches or the timestamp is older than 5 minutes.
 */
export function verifySignedRequest(
  secret: string,
  body: string,
  headers: Record<string, string | string[] | undefined>,
): unknown {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return new Webhook(secret).verify(body, flat);
}
