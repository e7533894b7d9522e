import { clock } from '../platform/clock.js';
import { notFound } from '../platform/errors.js';
import { UserEntity } from '../platform/auth/entities.js';
import { getUser } from '../platform/auth/users.js';
import type { UserPrincipal } from '../platform/auth/principal.js';
import { listMyOrganisations } from './organisations.js';

/** The caller's own profile and the organisations they belong to. */
export async function getProfile(principal: UserPrincipal) {
  const [user, organisations] = await Promise.all([
    getUser(principal.userId),
    listMyOrganisations(principal.userId),
  ]);
  if (!user) throw notFound('User');
  return { user, organisations };
}

/** Changes what a user may change of their profile: their name (null clears it). Email is the identity provider's. */
export async function updateProfile(principal: UserPrincipal, changes: { name?: string | null }) {
  if (changes.name === null) {
    await UserEntity.patch({ userId: principal.userId })
      .remove(['name'])
      .set({ updatedAt: clock.now().toISOString() })
      .go();
  } else if (changes.name !== undefined) {
    await UserEntity.patch({ userId: principal.userId })
      .set({ name: changes.name, updatedAt: clock.now().toISOString() })
      .go();
  }
  return getProfile(principal);
}
