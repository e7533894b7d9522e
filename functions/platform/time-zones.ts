import * as z from 'zod';

/*
 * Time zones as every domain reads them (workspaces, contacts, agents, campaign windows): apart from
 * the access routes' schemas, so a domain that checks a zone does not build those.
 */

/** An IANA time zone name the runtime knows (`Australia/Sydney`, `UTC`). */
export function isTimeZone(value: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(value)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/** An IANA time zone name (workspaces, contacts). */
export const TimeZoneName = z
  .string()
  .trim()
  .max(64)
  .refine(isTimeZone, { message: 'timezone must be an IANA time zone name' });
