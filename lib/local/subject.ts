import { createHash } from 'node:crypto';

/** The stable local user id for an email: `local-` + the first 32 hex chars of sha256(lower-cased email). */
export function localSubject(email: string): string {
  return `local-${createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 32)}`;
}
