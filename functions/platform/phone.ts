import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import {
  isSupportedCountry as isSupportedCountryWith,
  parsePhoneNumberFromString as parseWith,
  type CountryCode,
  type MetadataJson,
} from 'libphonenumber-js/core';

/**
 * libphonenumber's `min` metadata (~80 KB), read when a number is first parsed rather than compiled
 * into every bundle and evaluated at every cold start. A Lambda asset carries it beside its entry
 * (`PHONE_METADATA_FILE`, copied by the stack for every function); elsewhere it comes from the
 * package in node_modules.
 */
export const PHONE_METADATA = {
  packageFile: 'libphonenumber-js/metadata.min.json',
  assetFile: 'phone-metadata.json',
};

let metadata: MetadataJson | undefined;
function phoneMetadata(): MetadataJson {
  if (!metadata) {
    const taskRoot = process.env.LAMBDA_TASK_ROOT;
    const file = taskRoot
      ? join(taskRoot, PHONE_METADATA.assetFile)
      : createRequire(import.meta.url).resolve(PHONE_METADATA.packageFile);
    metadata = JSON.parse(readFileSync(file, 'utf8')) as MetadataJson;
  }
  return metadata;
}

const parsePhoneNumberFromString = (text: string, defaultCountry?: CountryCode) =>
  parseWith(text, { defaultCountry }, phoneMetadata());
const isSupportedCountry = (code: string) => isSupportedCountryWith(code as CountryCode, phoneMetadata());

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

/** An ISO 3166 alpha-2 code (upper case) whose numbering plan libphonenumber knows (`AU`, `NZ`, `US`). */
export function isPhoneCountry(code: string): boolean {
  return /^[A-Z]{2}$/.test(code) && isSupportedCountry(code);
}

/**
 * A phone number as a person typed it, in E.164: international (`+61 491 570 156`) or national in
 * `country` (`0491 570 156` in AU). Stricter than `toE164`: the number must be valid for its
 * country (length and leading digits, as far as the `min` metadata knows), not merely possible, so
 * `12345` is refused. Used where people enter numbers by hand (contacts); undefined when invalid.
 */
export function toE164InCountry(input: string, country: string): string | undefined {
  const trimmed = input.trim();
  if (!/^\+?[\d\s()./-]{3,30}$/.test(trimmed) || !/\d/.test(trimmed)) return undefined;
  const defaultCountry = isPhoneCountry(country) ? (country as CountryCode) : undefined;
  const parsed = parsePhoneNumberFromString(trimmed, defaultCountry);
  if (!parsed || !parsed.isValid()) return undefined;
  return parsed.number;
}

/** The national forms of an E.164 number, digits only: with the trunk prefix (`0491570156`) and without (`491570156`). */
export function nationalDigits(e164: string): string[] {
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed) return [];
  const national = parsed.formatNational().replace(/\D/g, '');
  return [...new Set([national, String(parsed.nationalNumber)])].filter((d) => d.length > 0);
}
