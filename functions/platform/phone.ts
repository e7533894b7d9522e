import { parsePhoneNumberFromString } from 'libphonenumber-js/min';

/**
 * E.164 normalisation. A number is accepted only when it is written in international form (leading
 * `+`) and libphonenumber considers it a possible number of its country; it is returned in E.164.
 * The `min` metadata is enough: parsing, the possible-length check and the country come out as with
 * `max`, which only adds per-type patterns (number types we never ask for; ~75 KB more in every bundle).
 */
export function toE164(input: string): string | undefined {
  const trimmed = input.trim();
  if (!/^\+[1-9][\d\s().-]{5,20}$/.test(trimmed)) return undefined;
  const parsed = parsePhoneNumberFromString(trimmed);
  if (!parsed || !parsed.isPossible()) return undefined;
  return parsed.number;
}

export function isE164(input: string): boolean {
  return /^\+[1-9]\d{6,14}$/.test(input) && toE164(input) === input;
}

/** Country of a valid E.164 number (ISO 3166 alpha-2), when known. */
export function countryOf(e164: string): string | undefined {
  return parsePhoneNumberFromString(e164)?.country;
}
