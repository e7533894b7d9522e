import { clock } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import { announcingCreation } from './creation.js';
import { afterCall, callFieldsOf, readContactAndCalls, type RecordedCall } from './call-summary.js';
import { contactItemTarget, contactsService, type Contact, type ContactSource } from './entities.js';
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
import { backOff, changeContact, ContactGone, insertContact, MAX_TRIES, stripUndefined } from './writes.js';

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
 * Records a call on the contact, once per call, in one transaction at the contact's own key (never
 * the contact item, nor its search entries: call-summary.ts): the call link, created with "does not
 * exist" (the call counted once); the call summary, conditioned on the version read (or on there
 * being none yet), with the count one up and the "last call" fields and `last_contacted_at`
 * following the most recent call even when calls are processed out of order; and `note` (the call's
 * summary) as a `post_call` note, also once. A contact without a summary yet seeds it from the call
 * fields on its item (written before summaries existed), so its count continues. A summary changed
 * meanwhile (another call) is read again and the write tried again. ContactGone when the contact
 * does not exist. The contact is read (with the summary, one BatchGetItem) but not conditioned on:
 * a condition check would cost write units at the workspace's key, so a call recorded while the
 * contact is deleted may leave its link, note and summary behind, unread (nothing lists a deleted
 * contact's items).
 */
export async function recordCallOnContact(
  workspaceId: string,
  contactId: string,
  call: RecordedCall & { note?: string },
): Promise<{ counted: boolean }> {
  const noteId = newId('note');
  const noteText = call.note?.trim().slice(0, 500);
  // A call recorded before call links had the contact's key (until `migrate calls` has run): its
  // link is moved first, so the create below finds it.
  await moveFromOldKey(
    { pk: `WS#${workspaceId}`, sk: `CONTACTCALL#${contactId}#${call.callId}` },
    contactItemTarget,
  );
  for (let attempt = 0; attempt < MAX_TRIES; attempt += 1) {
    const { contact, summary } = await readContactAndCalls(workspaceId, contactId);
    if (!contact) throw new ContactGone(contactId);
    const now = clock.now().toISOString();
    const next = {
      ...afterCall(summary ?? callFieldsOf(contact), call),
      workspaceId,
      contactId,
      updatedAt: now,
      version: (summary?.version ?? 0) + 1,
    };
    const kinds = ['summary', 'call', ...(noteText ? ['note'] : [])];
    const result = await contactsService.transaction
      .write((tx) => [
        summary
          ? tx.contactCallSummary
              .put(stripUndefined(next))
              .where((attr, op) => op.eq(attr.version, summary.version))
              .commit()
          : tx.contactCallSummary.create(stripUndefined(next)).commit(),
        tx.contactCall.create({ workspaceId, contactId, callId: call.callId, at: call.at }).commit(),
        ...(noteText
          ? [
              tx.contactNote
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
            ]
          : []),
      ])
      .go();
    if (!result.canceled) return { counted: true };
    // When canceled, ElectroDB gives each item's outcome in order (its types do not say so).
    const outcomes = result.data as unknown as { rejected: boolean; code: string }[];
    const refused = (kind: string) =>
      outcomes.some((o, i) => kinds[i] === kind && o.rejected && o.code === 'ConditionalCheckFailed');
    // The call link exists: this call was recorded already (with its note).
    if (refused('call')) return { counted: false };
    // Another call changed the summary meanwhile, or a transaction conflict: read again.
    await backOff(attempt);
  }
  throw new Error(`the calls of contact ${contactId} kept changing; try again`);
}
