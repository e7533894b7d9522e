import { clock } from '../platform/clock.js';
import { readSecret, WebhookSecretEntity, type WebhookSecretRecord } from './entities.js';
import { activeSecrets, newSigningSecret, PREVIOUS_SECRET_GRACE_MS } from './signing.js';
import { isConditionFailure } from '../platform/table.js';

/**
 * The workspace's one webhook signing secret. It is made on first use (a read of the secret or the
 * first delivery), with a condition, so two first uses agree on one secret.
 */
export async function getOrCreateSecret(workspaceId: string): Promise<WebhookSecretRecord> {
  const existing = await readSecret(workspaceId);
  if (existing.data) return existing.data;
  try {
    const created = await WebhookSecretEntity.create({
      workspaceId,
      secret: newSigningSecret(),
      createdAt: clock.now().toISOString(),
    }).go();
    return created.data;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const again = await readSecret(workspaceId);
    if (!again.data) throw error;
    return again.data;
  }
}

/**
 * Rotates: a new secret signs from now on, and the one it replaces keeps signing too for 24 hours
 * (deliveries carry both signatures), so receivers can switch without missing an event. The update
 * is conditioned on the secret it replaces, so two concurrent rotations cannot lose one.
 */
export async function rotateSecret(workspaceId: string): Promise<WebhookSecretRecord> {
  for (let tries = 0; tries < 5; tries += 1) {
    const current = await getOrCreateSecret(workspaceId);
    const now = clock.now();
    try {
      const updated = await WebhookSecretEntity.patch({ workspaceId })
        .set({
          secret: newSigningSecret(),
          previousSecret: current.secret,
          previousExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS).toISOString(),
          rotatedAt: now.toISOString(),
        })
        .where((attr, op) => op.eq(attr.secret, current.secret))
        .go({ response: 'all_new' });
      return updated.data as WebhookSecretRecord;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
  throw new Error('webhook secret rotation kept conflicting');
}

/** The secrets that sign a delivery made now (newest first). */
export async function signingSecrets(workspaceId: string): Promise<string[]> {
  return activeSecrets(await getOrCreateSecret(workspaceId), clock.now());
}

/** The wire shape of `…/webhook-secret` (the previous secret itself is never shown again). */
export function secretToWire(record: WebhookSecretRecord) {
  const graceLasts = record.previousExpiresAt && Date.parse(record.previousExpiresAt) > clock.now().getTime();
  return {
    secret: record.secret,
    previous_secret_expires_at: graceLasts ? (record.previousExpiresAt ?? null) : null,
    created_at: record.createdAt,
    rotated_at: record.rotatedAt ?? null,
  };
}
