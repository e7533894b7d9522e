import { Service } from '../platform/entity.js';
import * as z from 'zod';
import { clock } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import { entityConfig } from '../platform/table.js';
import { UserEntity, UserIdentityEntity } from '../platform/auth/entities.js';
import { IdentityEventEntity } from './entities.js';

/**
 * User events of the identity provider (Cognito's post-confirmation and similar triggers, relayed to
 * `POST /webhooks/identity`): they create or update the user profile. Each event applies once: its id
 * is recorded in the same transaction as the change, with a condition.
 */
export const IdentityUserEvent = z.object({
  triggerSource: z.string().max(100).optional(),
  userName: z.string().min(1).max(256),
  request: z.object({
    userAttributes: z.object({
      sub: z.string().min(1).max(256),
      email: z.email().max(254),
      name: z.string().max(200).optional(),
    }),
  }),
});
export type IdentityUserEvent = z.infer<typeof IdentityUserEvent>;

export type IdentityEventOutcome = 'created' | 'updated' | 'unchanged' | 'duplicate';

const EVENT_RETENTION_SECONDS = 30 * 24 * 3600;

const identityEvents = new Service(
  { identityEvent: IdentityEventEntity, userIdentity: UserIdentityEntity, user: UserEntity },
  entityConfig(),
);

export async function applyIdentityEvent(
  eventId: string,
  event: IdentityUserEvent,
): Promise<IdentityEventOutcome> {
  const seen = await IdentityEventEntity.get({ eventId }).go({ consistent: true });
  if (seen.data) return 'duplicate';
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const outcome = await applyOnce(eventId, event);
    if (outcome !== 'retry') return outcome;
  }
  throw new Error(`identity event ${eventId} kept conflicting`);
}

async function applyOnce(eventId: string, event: IdentityUserEvent): Promise<IdentityEventOutcome | 'retry'> {
  const { sub: subject, name } = event.request.userAttributes;
  const email = event.request.userAttributes.email.toLowerCase();
  const now = clock.now();
  const marker = (outcome: 'created' | 'updated' | 'unchanged') => ({
    eventId,
    subject,
    outcome,
    receivedAt: now.toISOString(),
    expiresAt: Math.floor(now.getTime() / 1000) + EVENT_RETENTION_SECONDS,
  });

  const { data: identity } = await UserIdentityEntity.get({ subject }).go({ consistent: true });
  if (!identity) {
    const userId = newId('user');
    const createdAt = now.toISOString();
    const result = await identityEvents.transaction
      .write(({ identityEvent, userIdentity, user }) => [
        identityEvent.create(marker('created')).commit(),
        userIdentity.create({ subject, userId, createdAt }).commit(),
        user.create({ userId, email, name, createdAt }).commit(),
      ])
      .go();
    if (!result.canceled) return 'created';
    if (result.data[0]?.rejected) return 'duplicate';
    return 'retry'; // the user signed in (or another event arrived) meanwhile: update instead
  }

  const { data: user } = await UserEntity.get({ userId: identity.userId }).go({ consistent: true });
  const changes: { email?: string; name?: string } = {};
  if (!user || user.email !== email) changes.email = email;
  if (name !== undefined && user?.name !== name) changes.name = name;
  if (user && Object.keys(changes).length === 0) {
    try {
      await IdentityEventEntity.create(marker('unchanged')).go();
      return 'unchanged';
    } catch {
      return 'duplicate';
    }
  }
  const result = await identityEvents.transaction
    .write(({ identityEvent, user: userOp }) => [
      identityEvent.create(marker(user ? 'updated' : 'created')).commit(),
      user
        ? userOp
            .patch({ userId: identity.userId })
            .set({ ...changes, updatedAt: now.toISOString() })
            .commit()
        : userOp.create({ userId: identity.userId, email, name, createdAt: now.toISOString() }).commit(),
    ])
    .go();
  if (!result.canceled) return user ? 'updated' : 'created';
  if (result.data[0]?.rejected) return 'duplicate';
  return 'retry';
}
