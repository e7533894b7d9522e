import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isId } from '../ids.js';

/**
 * API keys look like `vak_<key_id>_<secret>`: the key id finds the record in one read, and the
 * secret is compared in constant time with its stored SHA-256 hash. Secrets are 32 random bytes, so a
 * fast hash is enough (no password stretching needed for high-entropy secrets).
 */
const PREFIX = 'vak_';
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

export const formatApiKey = (keyId: string, secret: string): string => `${PREFIX}${keyId}_${secret}`;

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const given = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}

/** Splits a bearer token into key id and secret, or undefined when it is not an API key's shape. */
export function parseApiKey(token: string): { keyId: string; secret: string } | undefined {
  if (!token.startsWith(PREFIX)) return undefined;
  const rest = token.slice(PREFIX.length);
  const keyId = rest.slice(0, 'key_'.length + 26);
  const secret = rest.slice(keyId.length + 1);
  if (!isId('apiKey', keyId) || rest[keyId.length] !== '_' || !SECRET_PATTERN.test(secret)) return undefined;
  return { keyId, secret };
}

export const secretHint = (secret: string): string => secret.slice(-4);
