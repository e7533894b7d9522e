import { clock } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import { announcingCreation } from './creation.js';
import { contactItemTarget, type Contact, type ContactSource } from './entities.js';
import { moveFromOldKey } from '../platform/key-moves.js';
import { NEEDS_PHONE_OR_EMAIL, newRecord } from './input.js';
import {
  findContactByEmail,
  findContactByPhone,
  getContact,
  normaliseEmail,
  normalisePhone,
  ownerOf,
} from './lookup.js';
import { namesOf } from './views.js';
import { changeContact, ContactGone, insertContact, MAX_TRIES, type ContactRecord } from './writes.js';

/**
 * The post-call pipeline's changes of contacts (and SMS's): a contact found or made for a call, the
 * email address and name it learns, and each call recorded on it once.
 */

/**
 * The contact with this phone number (or, failing that, this email address), created when none
 * matches. An email-only contact that matches by email gets the phone number added instead of a
 * second contact being made.
 */
export async function ensureContact(
  workspaceId: string,
  input: { phone?: string; email?: string; name?: string; source: ContactSource },
  /** `publishCreated`: publish `contact.created` when the contact is created (see announcingCreation). */
  options: { publishCreated?: boolean } = {},
): Promise<{ contact: Contact; created: boolean }> {
  const phone = normalisePhone(input.phone);
  const email = normaliseEmail(input.email);
  if (!phone && !email) throw new Error(NEEDS_PHONE_OR_EMAIL);
  for (let attempt = 0; attempt < MAX_TRIES; attempt += 1) {
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
    const { firstName, lastName } = namesOf({ name: input.name?.trim().slice(0, 200) });
    const now = clock.now().toISOString();
    const record = newRecord(
      workspaceId,
      {
        firstName: firstName || undefined,
        lastName: lastName || undefined,
        phone,
        email,
        contactability: 'Contactable',
        source: input.source,
      },
      now,
    );
    const announced = options.publishCreated ? await announcingCreation(record) : undefined;
    const inserted = await insertContact(record, announced?.extras);
    if ('created' in inserted) {
      await announced?.publish();
      return { contact: inserted.created, created: true };
    }
    // Another writer took the number or the address first: look again and use theirs.
  }
  throw new Error('could not find or create the contact (keys kept changing)');
}

/** Gives a contact without a phone number this one, unless another contact has it. */
async function attachPhone(workspaceId: string, contactId: string, phone: string): Promise<boolean> {
  try {
    return await changeContact(workspaceId, contactId, (current) =>
      current.phone
        ? { write: false, result: false }
        : {
            write: true,
            changes: { phone, updatedAt: clock.now().toISOString() },
            result: true,
            onRefused: () => false,
          },
    );
  } catch (error) {
    if (error instanceof ContactGone) return false;
    throw error;
  }
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
  return changeContact<'set' | 'unchanged' | 'taken'>(workspaceId, contactId, (contact) =>
    contact.email
      ? { write: false, result: 'unchanged' }
      : {
          write: true,
          changes: { email: normalised, updatedAt: clock.now().toISOString() },
          result: 'set',
          onRefused: async () => {
            const owner = await ownerOf(workspaceId, 'email', normalised);
            return owner && owner !== contactId ? 'taken' : 'unchanged';
          },
        },
  );
}

/** Sets the name when the contact has none (a name typed by a person is never overwritten). */
export async function setNameIfMissing(
  workspaceId: string,
  contactId: string,
  name: string,
): Promise<boolean> {
  const trimmed = name.trim().slice(0, 200);
  if (!trimmed) return false;
  const { firstName, lastName } = namesOf({ name: trimmed });
  return changeContact(workspaceId, contactId, (current) =>
    current.firstName !== undefined || current.lastName !== undefined || current.name
      ? { write: false, result: false }
      : {
          write: true,
          changes: {
            firstName: firstName.slice(0, 100) || undefined,
            lastName: lastName.slice(0, 100) || undefined,
            updatedAt: clock.now().toISOString(),
          },
          result: true,
        },
  );
}

/**
 * Records a call on the contact, once per call (a call link created with "does not exist" in the same
 * transaction): the call count goes up, the "last call" fields and `last_contacted_at` follow the most
 * recent call even when calls are processed out of order, and `note` (the call's summary) becomes a
 * `post_call` note on the contact, also once.
 */
export async function recordCallOnContact(
  workspaceId: string,
  contactId: string,
  call: { callId: string; at: string; sentiment?: string; summary?: string; note?: string },
): Promise<{ counted: boolean }> {
  const noteId = newId('note');
  const noteText = call.note?.trim().slice(0, 500);
  // A call recorded before call links had the contact's key (until `migrate calls` has run): its
  // link is moved first, so the create below finds it.
  await moveFromOldKey(
    { pk: `WS#${workspaceId}`, sk: `CONTACTCALL#${contactId}#${call.callId}` },
    contactItemTarget,
  );
  return changeContact<{ counted: boolean }>(workspaceId, contactId, (current) => {
    const now = clock.now().toISOString();
    const latest = !current.lastCallAt || current.lastCallAt <= call.at;
    const changes: Partial<ContactRecord> = {
      callCount: (current.callCount ?? 0) + 1,
      updatedAt: now,
      lastContactedAt:
        current.lastContactedAt && current.lastContactedAt > call.at ? current.lastContactedAt : call.at,
    };
    if (latest) {
      changes.lastCallId = call.callId;
      changes.lastCallAt = call.at;
      if (call.sentiment) changes.lastCallSentiment = call.sentiment;
      if (call.summary) changes.lastCallSummary = call.summary.slice(0, 1000);
    }
    return {
      write: true,
      changes,
      result: { counted: true },
      extras: (tx) => [
        {
          kind: 'call',
          item: tx.contactCall.create({ workspaceId, contactId, callId: call.callId, at: call.at }).commit(),
        },
        ...(noteText
          ? [
              {
                kind: 'note',
                item: tx.contactNote
                  .create({
                    workspaceId,
                    contactId,
                    noteId,
                    text: noteText,
                    channel: 'post_call' as const,
                    authorId: 'system',
                    callId: call.callId,
                    createdAt: now,
                    updatedAt: now,
                  })
                  .commit(),
              },
            ]
          : []),
      ],
      // The call link exists: this call was recorded already (with its note).
      onRefused: () => ({ counted: false }),
    };
  });
}
