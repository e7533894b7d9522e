import { isConditionFailure } from '../platform/table.js';
import { clock } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import { toE164 } from '../platform/phone.js';
import {
  ContactEmailEntity,
  ContactEntity,
  ContactPhoneEntity,
  contactsService,
  readContact,
  type Contact,
  type ContactSource,
} from './entities.js';

/**
 * Contacts: found by phone or email, created when none matches, never duplicated. Every write that
 * gives a contact a phone number or an email claims the matching key item with a condition in the
 * same transaction, so concurrent writers cannot create two contacts with one number or address.
 */

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normaliseEmail(email: string | undefined | null): string | undefined {
  if (!email) return undefined;
  const trimmed = email.trim().toLowerCase();
  return EMAIL_PATTERN.test(trimmed) && trimmed.length <= 254 ? trimmed : undefined;
}

export function normalisePhone(phone: string | undefined | null): string | undefined {
  if (!phone) return undefined;
  return toE164(phone);
}

export async function getContact(workspaceId: string, contactId: string): Promise<Contact | null> {
  return (await readContact(workspaceId, contactId)).data;
}

export async function findContactByPhone(workspaceId: string, phone: string): Promise<Contact | null> {
  const e164 = normalisePhone(phone);
  if (!e164) return null;
  const { data: key } = await ContactPhoneEntity.get({ workspaceId, phone: e164 }).go({ consistent: true });
  return key ? getContact(workspaceId, key.contactId) : null;
}

export async function findContactByEmail(workspaceId: string, email: string): Promise<Contact | null> {
  const normalised = normaliseEmail(email);
  if (!normalised) return null;
  const { data: key } = await ContactEmailEntity.get({ workspaceId, email: normalised }).go({
    consistent: true,
  });
  return key ? getContact(workspaceId, key.contactId) : null;
}

/**
 * The contact with this phone number (or, failing that, this email address), created when none
 * matches. An email-only contact that matches by email gets the phone number added instead of a
 * second contact being made.
 */
export async function ensureContact(
  workspaceId: string,
  input: { phone?: string; email?: string; name?: string; source: ContactSource },
): Promise<{ contact: Contact; created: boolean }> {
  const phone = normalisePhone(input.phone);
  const email = normaliseEmail(input.email);
  if (!phone && !email) throw new Error('a contact needs a phone number or an email address');
  for (let tries = 0; tries < 5; tries += 1) {
    if (phone) {
      const byPhone = await findContactByPhone(workspaceId, phone);
      if (byPhone) return { contact: byPhone, created: false };
    }
    if (email) {
      const byEmail = await findContactByEmail(workspaceId, email);
      if (byEmail) {
        if (phone && !byEmail.phone) await attachPhone(workspaceId, byEmail.contactId, phone);
        const contact = (await getContact(workspaceId, byEmail.contactId)) ?? byEmail;
        return { contact, created: false };
      }
    }
    const contactId = newId('contact');
    const createdAt = clock.now().toISOString();
    const result = await contactsService.transaction
      .write(({ contact, contactPhone, contactEmail }) => [
        contact
          .create({
            workspaceId,
            contactId,
            phone,
            email,
            name: input.name?.trim() || undefined,
            source: input.source,
            contactability: 'Contactable',
            callCount: 0,
            createdAt,
            updatedAt: createdAt,
          })
          .commit(),
        ...(phone ? [contactPhone.create({ workspaceId, phone, contactId }).commit()] : []),
        ...(email ? [contactEmail.create({ workspaceId, email, contactId }).commit()] : []),
      ])
      .go();
    if (!result.canceled) {
      const created = await getContact(workspaceId, contactId);
      if (created) return { contact: created, created: true };
    }
    // Another writer took the number or the address first: look again and use theirs.
  }
  throw new Error('could not find or create the contact (keys kept changing)');
}

/** Gives a contact without a phone number this one, unless another contact has it. */
async function attachPhone(workspaceId: string, contactId: string, phone: string): Promise<boolean> {
  const updatedAt = clock.now().toISOString();
  const result = await contactsService.transaction
    .write(({ contact, contactPhone }) => [
      contactPhone.create({ workspaceId, phone, contactId }).commit(),
      contact
        .patch({ workspaceId, contactId })
        .set({ phone, updatedAt })
        .where((attr, op) => op.notExists(attr.phone))
        .commit(),
    ])
    .go();
  return !result.canceled;
}

/**
 * Gives a contact this email address when it has none and no other contact has it.
 * `taken`: another contact has it (nothing changes: no duplicates by email).
 */
export async function setEmailIfFree(
  workspaceId: string,
  contactId: string,
  email: string,
): Promise<'set' | 'unchanged' | 'taken' | 'invalid'> {
  const normalised = normaliseEmail(email);
  if (!normalised) return 'invalid';
  const current = await getContact(workspaceId, contactId);
  if (!current) throw new Error(`contact ${contactId} not found`);
  if (current.email) return 'unchanged';
  const result = await contactsService.transaction
    .write(({ contact, contactEmail }) => [
      contactEmail.create({ workspaceId, email: normalised, contactId }).commit(),
      contact
        .patch({ workspaceId, contactId })
        .set({ email: normalised, updatedAt: clock.now().toISOString() })
        .where((attr, op) => op.notExists(attr.email))
        .commit(),
    ])
    .go();
  if (!result.canceled) return 'set';
  const owner = await findContactByEmail(workspaceId, normalised);
  return owner && owner.contactId !== contactId ? 'taken' : 'unchanged';
}

/** Sets the name when the contact has none (a name typed by a person is never overwritten). */
export async function setNameIfMissing(
  workspaceId: string,
  contactId: string,
  name: string,
): Promise<boolean> {
  const trimmed = name.trim();
  if (!trimmed) return false;
  try {
    await ContactEntity.patch({ workspaceId, contactId })
      .set({ name: trimmed.slice(0, 200), updatedAt: clock.now().toISOString() })
      .where((attr, op) => op.notExists(attr.name))
      .go();
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * Records a call on the contact: the call count goes up once per call (a link item with a
 * condition), and the "last call" fields follow the most recent call even when calls are
 * processed out of order.
 */
export async function recordCallOnContact(
  workspaceId: string,
  contactId: string,
  call: { callId: string; at: string; sentiment?: string; summary?: string },
): Promise<{ counted: boolean }> {
  const updatedAt = clock.now().toISOString();
  const counted = await contactsService.transaction
    .write(({ contact, contactCall }) => [
      contactCall.create({ workspaceId, contactId, callId: call.callId, at: call.at }).commit(),
      contact.patch({ workspaceId, contactId }).add({ callCount: 1 }).set({ updatedAt }).commit(),
    ])
    .go();
  try {
    await ContactEntity.patch({ workspaceId, contactId })
      .set({
        lastCallId: call.callId,
        lastCallAt: call.at,
        ...(call.sentiment ? { lastCallSentiment: call.sentiment } : {}),
        ...(call.summary ? { lastCallSummary: call.summary.slice(0, 1000) } : {}),
        updatedAt,
      })
      .where((attr, op) => `${op.notExists(attr.lastCallAt)} OR ${op.lte(attr.lastCallAt, call.at)}`)
      .go();
  } catch (error) {
    if (!isConditionFailure(error)) throw error; // a later call is already recorded as the last one
  }
  return { counted: !counted.canceled };
}

export type ProfileFacts = Record<string, unknown>;

/**
 * Merges enrichment facts into the contact's profile (lists are merged without duplicates, other
 * values replaced), conditioned on the profile not having changed since it was read.
 */
export async function mergeProfile(
  workspaceId: string,
  contactId: string,
  facts: ProfileFacts,
): Promise<ProfileFacts> {
  for (let tries = 0; tries < 5; tries += 1) {
    const current = await getContact(workspaceId, contactId);
    if (!current) throw new Error(`contact ${contactId} not found`);
    const before = (current.profile ?? {}) as ProfileFacts;
    const merged = mergeFacts(before, facts);
    const now = clock.now().toISOString();
    const previousStamp = current.profileUpdatedAt;
    try {
      await ContactEntity.patch({ workspaceId, contactId })
        .set({ profile: merged, profileUpdatedAt: now, updatedAt: now })
        .where((attr, op) =>
          previousStamp ? op.eq(attr.profileUpdatedAt, previousStamp) : op.notExists(attr.profileUpdatedAt),
        )
        .go();
      return merged;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
  throw new Error('contact profile kept changing');
}

export function mergeFacts(before: ProfileFacts, facts: ProfileFacts): ProfileFacts {
  const merged: ProfileFacts = { ...before };
  for (const [key, value] of Object.entries(facts)) {
    if (value === undefined || value === null) continue;
    const previous = merged[key];
    if (Array.isArray(value) && Array.isArray(previous)) {
      const seen = new Set(previous.map((v) => JSON.stringify(v)));
      merged[key] = [...previous, ...value.filter((v) => !seen.has(JSON.stringify(v)))];
    } else {
      merged[key] = value;
    }
  }
  return merged;
}

/** The wire shape used inside post-call records and payloads. */
export function contactSummary(contact: Contact) {
  return {
    contact_id: contact.contactId,
    name: contact.name ?? null,
    phone: contact.phone ?? null,
    email: contact.email ?? null,
  };
}
