import { HttpError, notFound } from '../platform/errors.js';
import { isId } from '../platform/ids.js';
import { toE164 } from '../platform/phone.js';
import { asciiEmail } from '../platform/validation.js';
import { readContactAndCalls, withCallSummary } from './call-summary.js';
import { ContactEmailEntity, ContactPhoneEntity, readContact, type Contact } from './entities.js';

/**
 * Finding contacts: by id, by phone number, by email address (the keys that no two contacts share),
 * the normal forms those keys are kept in, and the answers when a contact is missing or a key taken.
 */

export const CONTACT_NOT_FOUND = 'Contact not found';
export const CONTACT_EXISTS = 'Contact already exists';
export const CONTACT_KEY_TAKEN = 'Another contact has this phone number or email address';

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normaliseEmail(email: string | undefined | null): string | undefined {
  if (!email) return undefined;
  const checked = asciiEmail(email);
  if (!checked.ok) return undefined;
  return EMAIL_PATTERN.test(checked.email) && checked.email.length <= 254 ? checked.email : undefined;
}

/** An international number (`+61 …`) in E.164, as telephony reports them (the post-call pipeline). */
export function normalisePhone(phone: string | undefined | null): string | undefined {
  if (!phone) return undefined;
  return toE164(phone);
}

/** 409 `{error, contact_id}`: the phone number or email address belongs to `contactId`. */
export class DuplicateContactError extends HttpError {
  constructor(
    readonly contactId: string,
    readonly field: 'phone' | 'email',
    message = CONTACT_EXISTS,
  ) {
    super(409, message, {}, { contact_id: contactId });
    this.name = 'DuplicateContactError';
  }
}

/**
 * How a contact is read. `withCalls`: as the API shows it, its call summary merged in
 * (call-summary.ts; one BatchGetItem of both where the contact alone is one GetItem). Without it,
 * the contact item as stored, which is what a write of the contact starts from.
 */
export interface ReadOptions {
  withCalls?: boolean;
}

export async function getContact(
  workspaceId: string,
  contactId: string,
  options: ReadOptions = {},
): Promise<Contact | null> {
  if (!isId('contact', contactId)) return null;
  if (!options.withCalls) return (await readContact(workspaceId, contactId)).data;
  const { contact, summary } = await readContactAndCalls(workspaceId, contactId);
  return contact && withCallSummary(contact, summary);
}

/** The contact, or 404 `Contact not found` (another workspace's contact included). */
export async function requireContact(
  workspaceId: string,
  contactId: string,
  options: ReadOptions = {},
): Promise<Contact> {
  const contact = await getContact(workspaceId, contactId, options);
  if (!contact) throw notFound(CONTACT_NOT_FOUND);
  return contact;
}

export async function findContactByPhone(
  workspaceId: string,
  phone: string,
  options: ReadOptions = {},
): Promise<Contact | null> {
  const e164 = normalisePhone(phone);
  if (!e164) return null;
  const { data: key } = await ContactPhoneEntity.get({ workspaceId, phone: e164 }).go({ consistent: true });
  return key ? getContact(workspaceId, key.contactId, options) : null;
}

export async function findContactByEmail(
  workspaceId: string,
  email: string,
  options: ReadOptions = {},
): Promise<Contact | null> {
  const normalised = normaliseEmail(email);
  if (!normalised) return null;
  const { data: key } = await ContactEmailEntity.get({ workspaceId, email: normalised }).go({
    consistent: true,
  });
  return key ? getContact(workspaceId, key.contactId, options) : null;
}

export async function ownerOf(workspaceId: string, field: 'phone' | 'email', value: string) {
  const { data } =
    field === 'phone'
      ? await ContactPhoneEntity.get({ workspaceId, phone: value }).go({ consistent: true })
      : await ContactEmailEntity.get({ workspaceId, email: value }).go({ consistent: true });
  return data?.contactId;
}
