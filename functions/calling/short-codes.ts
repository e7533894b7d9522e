import { randomBytes } from 'node:crypto';
import { config } from '../platform/config.js';

/**
 * Short codes of recorded calls: the public recording page `GET /r/{short_code}` and the link in
 * post-call SMS. A code is 12 characters of base62 drawn from the system's CSPRNG (62^12 ≈ 2^71.5:
 * unguessable, well over 64 bits), made once when the call's recording is stored, and resolved
 * through its own item (`SHORTCODE#<code>`, entities.ts `RecordingLinkEntity`).
 */
export const SHORT_CODE_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const SHORT_CODE_LENGTH = 12;
const SHORT_CODE_PATTERN = new RegExp(`^[0-9A-Za-z]{${SHORT_CODE_LENGTH}}$`);

/** A new code: bytes ≥ 248 are dropped (rejection sampling), so every character is uniform. */
export function newShortCode(): string {
  let code = '';
  while (code.length < SHORT_CODE_LENGTH) {
    for (const byte of randomBytes(SHORT_CODE_LENGTH * 2)) {
      if (byte >= 248) continue;
      code += SHORT_CODE_ALPHABET[byte % 62];
      if (code.length === SHORT_CODE_LENGTH) break;
    }
  }
  return code;
}

/** Whether `value` has the shape of a short code (the length and the alphabet). */
export const isShortCode = (value: string): boolean => SHORT_CODE_PATTERN.test(value);

/** The public page of a short code. */
export const shortUrl = (code: string): string => `${config().PUBLIC_BASE_URL.replace(/\/+$/, '')}/r/${code}`;
