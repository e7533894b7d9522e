import { nationalDigits } from '../platform/phone.js';

/**
 * Search tokens of contacts, and the normalised form of a query `q` (pure functions; the entries are
 * written by writes.ts, the access pattern is described in entities.ts).
 *
 * Normalisation (the same for tokens and queries): Unicode NFKD, accents removed, lower case,
 * whitespace collapsed, `#` and control characters removed (`#` separates the token from the contact
 * id in the sort key, so a query can never reach past the token). A query that looks like a phone
 * number (digits, spaces, `+ ( ) . - /`) is reduced to its digits, and phone tokens are digits only.
 */

export const MAX_TOKEN_LENGTH = 300;

export function normaliseText(value: string): string {
  return value
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[#\p{Cc}\p{Cf}]/gu, '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_TOKEN_LENGTH);
}

const PHONE_LIKE = /^[+\d\s()./-]+$/;

/** The prefix a query matches tokens by; empty when nothing searchable is left. */
export function normaliseQuery(q: string): string {
  const trimmed = q.trim();
  if (PHONE_LIKE.test(trimmed) && /\d/.test(trimmed)) return trimmed.replace(/\D/g, '');
  return normaliseText(trimmed);
}

export interface Searchable {
  firstName?: string;
  lastName?: string;
  name?: string;
  phone?: string;
  email?: string;
}

/**
 * The contact's tokens, sorted, without repeats and without any token that is a prefix of another
 * (a query matching it matches the longer one too): first, last and full name; the email address;
 * the phone number's E.164 digits and its national digits, with and without the trunk prefix.
 */
export function searchTokens(contact: Searchable): string[] {
  const candidates: string[] = [];
  const first = contact.firstName ? normaliseText(contact.firstName) : '';
  const last = contact.lastName ? normaliseText(contact.lastName) : '';
  candidates.push(first, last);
  if (first && last) candidates.push(normaliseText(`${first} ${last}`));
  if (!first && !last && contact.name) {
    const full = normaliseText(contact.name);
    candidates.push(full, ...full.split(' '));
  }
  if (contact.email) candidates.push(normaliseText(contact.email));
  if (contact.phone) {
    candidates.push(contact.phone.replace(/\D/g, ''), ...nationalDigits(contact.phone));
  }
  const distinct = [...new Set(candidates.filter((t) => t.length > 0))].sort();
  return distinct.filter((token) => !distinct.some((other) => other !== token && other.startsWith(token)));
}

/** Length of the common prefix of two strings. */
export function commonPrefixLength(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i += 1;
  return i;
}

/** Each token (sorted, as searchTokens returns them) with the common prefix length of its predecessor. */
export function withPrefixLengths(tokens: string[]): { token: string; lcpPrev: number }[] {
  return tokens.map((token, i) => ({
    token,
    lcpPrev: i === 0 ? 0 : commonPrefixLength(tokens[i - 1], token),
  }));
}
