import { ValidationError, type ValidationIssue } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { toE164InCountry } from '../platform/phone.js';
import { parseOrThrow } from '../platform/validation.js';
import type { ContactSource } from './entities.js';
import { storedAttributes } from './model.js';
import { CreateContactBody, type ContactInput } from './schemas.js';
import { contactabilityLabel, sourceLabel } from './views.js';
import { fullName, stripUndefined, withoutBlankText, type ContactRecord } from './writes.js';

/**
 * Input: the body of `POST …/contacts` (`ContactInput`) checked and made into a new contact's fields
 * and record; phone numbers in national form are read in the `country` given (the workspace's).
 */

export const NEEDS_PHONE_OR_EMAIL = 'a contact needs a phone number or an email address';

/** The fields of a new contact from a validated body (the phone read in `country`). */
export interface NewContactFields {
  firstName?: string;
  lastName?: string;
  phone?: string;
  email?: string;
  contactability: ContactRecord['contactability'];
  source: ContactSource;
  integrationName?: string;
  tags?: string[];
  customAttributes?: Record<string, string>;
  timezone?: string;
}

const phoneIssue = (input: unknown, loc: (string | number)[]): ValidationIssue => ({
  type: 'value_error',
  loc,
  msg: 'Value error, phone is not a valid phone number (international +…, or national in the workspace’s country)',
  input,
});

/** A phone number as typed, read in `country`; 422 on `loc` when it is not a valid number. */
export function phoneIn(value: string, country: string, loc: (string | number)[]): string {
  const e164 = toE164InCountry(value, country);
  if (!e164) throw new ValidationError([phoneIssue(value, loc)]);
  return e164;
}

export function newContactFields(input: ContactInput, country: string): NewContactFields {
  const body = parseOrThrow(CreateContactBody, input, 'body');
  const phone = body.phone ? phoneIn(body.phone, country, ['body', 'phone']) : undefined;
  return stripUndefined({
    firstName: body.first_name || undefined,
    lastName: body.last_name || undefined,
    phone,
    email: body.email ?? undefined,
    contactability: contactabilityLabel(body.contactability),
    source: sourceLabel(body.source),
    integrationName: body.source === 'integration' ? body.source_label : undefined,
    tags: body.tags,
    customAttributes: body.attributes && storedAttributes(body.attributes),
    timezone: body.timezone ?? undefined,
  });
}

/**
 * Checks a contact as `createContact` would, without writing: ok, or the 422 issues (`loc` starting
 * at `body`, as the route reports them). For importers that report row by row.
 */
export function validateContactInput(
  input: ContactInput,
  country: string,
): { ok: true } | { ok: false; issues: ValidationIssue[] } {
  const checked = checkContactInput(input, country);
  return checked.ok ? { ok: true } : checked;
}

/** As validateContactInput, with the contact's fields when it is valid (for `createImportedContacts`). */
export function checkContactInput(
  input: ContactInput,
  country: string,
): { ok: true; fields: NewContactFields } | { ok: false; issues: ValidationIssue[] } {
  try {
    return { ok: true, fields: newContactFields(input, country) };
  } catch (error) {
    if (error instanceof ValidationError) return { ok: false, issues: error.detail };
    throw error;
  }
}

export const tagKeysOf = (tags: string[] | undefined) =>
  tags && tags.length > 0 ? tags.map((t) => t.toLowerCase()) : undefined;

export function newRecord(
  workspaceId: string,
  fields: NewContactFields,
  now: string,
  contactId: string = newId('contact'),
): ContactRecord {
  return withoutBlankText({
    workspaceId,
    contactId,
    ...fields,
    name: fullName(fields.firstName, fields.lastName),
    tags: fields.tags && fields.tags.length > 0 ? fields.tags : undefined,
    tagKeys: tagKeysOf(fields.tags),
    customAttributes:
      fields.customAttributes && Object.keys(fields.customAttributes).length > 0
        ? fields.customAttributes
        : undefined,
    callCount: 0,
    createdAt: now,
    updatedAt: now,
  }) as ContactRecord;
}
