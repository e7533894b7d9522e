import { clock } from '../clock.js';
import { newId } from '../ids.js';
import { identityService, UserEntity, UserIdentityEntity } from './entities.js';

/**
 * Maps an identity provider subject to our user id. The mapping never changes once written, so it is
 * cached per container: a user costs one read on their first request to a container, none after.
 * The user profile is created on the first authenticated request (the identity webhook may also
 * create it earlier; whichever comes first wins, the other finds it).
 */
const userBySubject = new Map<string, { userId: string; email: string }>();

/**
 * The user behind a verified token. Cognito access tokens carry no `email` claim: then the profile
 * written by the identity webhook (post-confirmation) supplies it, and an unknown subject without an
 * email is not a user yet (undefined → 401).
 */
export async function resolveUser(
  subject: string,
  emailFromToken?: string,
): Promise<{ userId: string; email: string } | undefined> {
  const cached = userBySubject.get(subject);
  if (cached) return cached;
  let resolved: { userId: string; email: string } | undefined;
  if (emailFromToken) {
    resolved = { userId: await findOrCreateUser(subject, emailFromToken), email: emailFromToken };
  } else {
    const { data: identity } = await UserIdentityEntity.get({ subject }).go();
    const profile = identity ? await getUser(identity.userId) : undefined;
    if (profile) resolved = { userId: profile.userId, email: profile.email };
  }
  if (resolved) userBySubject.set(subject, resolved);
  return resolved;
}

export async function findOrCreateUser(subject: string, email: string, name?: string): Promise<string> {
  const existing = await UserIdentityEntity.get({ subject }).go();
  if (existing.data) return existing.data.userId;
  const userId = newId('user');
  const createdAt = clock.now().toISOString();
  const result = await identityService.transaction
    .write(({ userIdentity, user }) => [
      userIdentity.create({ subject, userId, createdAt }).commit(),
      user.create({ userId, email, name, createdAt }).commit(),
    ])
    .go();
  if (result.canceled) {
    // Another request created this user first: use theirs.
    const again = await UserIdentityEntity.get({ subject }).go({ consistent: true });
    if (again.data) return again.data.userId;
    throw new Error('could not create user');
  }
  return userId;
}

export async function getUser(userId: string) {
  return (await UserEntity.get({ userId }).go()).data;
}

export async function findUserByEmail(email: string) {
  const result = await UserEntity.query.byEmail({ email: email.toLowerCase() }).go();
  return result.data[0];
}
