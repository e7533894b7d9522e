import { clock } from '../clock.js';
import { unauthorized } from '../errors.js';
import { logger } from '../logger.js';
import { parseApiKey, secretMatches } from './api-key-secret.js';
import { getStoredItem } from '../table.js';
import { ApiKeyEntity, apiKeyItemKey, type ApiKey } from './entities.js';
import { verifyAccessToken } from './jwt.js';
import type { ApiKeyScope, Principal } from './principal.js';
import { resolveUser } from './users.js';

const LAST_USED_WRITE_INTERVAL_MS = 60_000;
const lastUsedWrittenAt = new Map<string, number>();

/**
 * The one authentication step: `Authorization: Bearer <jwt | api key>` → a principal, or 401
 * `Unauthorized` for anything missing, malformed, expired, revoked or unknown.
 */
export async function authenticateBearer(header: string | undefined): Promise<Principal> {
  const match = /^Bearer ([^\s]+)$/i.exec(header?.trim() ?? '');
  if (!match) throw unauthorized();
  const token = match[1];
  if (token.startsWith('vak_')) return authenticateApiKey(token);
  return authenticateJwt(token);
}

async function authenticateJwt(token: string): Promise<Principal> {
  let identity;
  try {
    identity = await verifyAccessToken(token);
  } catch (error) {
    logger.info('jwt rejected', { reason: error instanceof Error ? error.message : String(error) });
    throw unauthorized();
  }
  const user = await resolveUser(identity.subject, identity.email);
  if (!user) throw unauthorized();
  return { kind: 'user', userId: user.userId, email: user.email, subject: identity.subject };
}

async function authenticateApiKey(token: string): Promise<Principal> {
  const parsed = parseApiKey(token);
  if (!parsed) throw unauthorized();
  // Every API-key request reads its key: plainly, without ElectroDB's work on each request.
  const key = (await getStoredItem(apiKeyItemKey(parsed.keyId))) as ApiKey | undefined;
  if (!key || key.revokedAt || !secretMatches(parsed.secret, key.secretHash)) throw unauthorized();
  await recordUse(key.keyId);
  return {
    kind: 'api_key',
    keyId: key.keyId,
    workspaceId: key.workspaceId,
    organisationId: key.organisationId,
    scopes: key.scopes as ApiKeyScope[],
  };
}

/**
 * `last_used_at` is written at most once a minute per key per container, so it costs a round trip on
 * few requests. The write is awaited: Lambda may freeze the container as soon as the response is
 * out, and a write left pending would then run minutes later or never. A failed write is logged and
 * never fails the request (the key is valid either way).
 */
async function recordUse(keyId: string): Promise<void> {
  const now = clock.now();
  const last = lastUsedWrittenAt.get(keyId) ?? 0;
  if (now.getTime() - last < LAST_USED_WRITE_INTERVAL_MS) return;
  lastUsedWrittenAt.set(keyId, now.getTime());
  try {
    await ApiKeyEntity.patch({ keyId }).set({ lastUsedAt: now.toISOString() }).go();
  } catch (error) {
    logger.warn('could not record api key use', { keyId, error: String(error) });
  }
}
