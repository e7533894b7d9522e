import { clock } from '../platform/clock.js';
import { notFound, ValidationError } from '../platform/errors.js';
import { isId } from '../platform/ids.js';
import { parseOrThrow } from '../platform/validation.js';
import { contactsService, moveLegacyContactItems, type Contact } from './entities.js';
import { NEEDS_PHONE_OR_EMAIL, phoneIn, tagKeysOf } from './input.js';
import { CONTACT_NOT_FOUND, getContact, requireContact } from './lookup.js';
import { normaliseAttributeKey } from './model.js';
import { MAX_ATTRIBUTES, UpdateContactBody } from './schemas.js';
import { attributesOf, contactabilityLabel } from './views.js';
import { backOff, changeContact, ContactGone, MAX_TRIES, type ContactRecord } from './writes.js';
import { purgeAfterDeletion, purgeRecord } from './purge.js';

/** The API's changes of a contact: PATCH and DELETE …/contacts/{contact_id}. */

/** 404 `Contact not found` for a contact that does not exist (any more). */
async function orNotFound<T>(change: Promise<T>): Promise<T> {
  try {
    return await change;
  } catch (error) {
    if (error instanceof ContactGone) throw notFound(CONTACT_NOT_FOUND);
    throw error;
  }
}

/**
 * Applies a PATCH: 422 when it leaves neither phone nor email; 409 when the phone or email is another
 * contact's. Returns the contact as shown (its call summary merged in).
 */
export async function updateContact(
  workspaceId: string,
  contactId: string,
  input: UpdateContactBody,
  options: { country: string },
): Promise<Contact> {
  const body = parseOrThrow(UpdateContactBody, input, 'body');
  if (!isId('contact', contactId)) throw notFound(CONTACT_NOT_FOUND);
  const phone =
    body.phone === undefined
      ? undefined
      : body.phone === null
        ? null
        : phoneIn(body.phone, options.country, ['body', 'phone']);
  await orNotFound(
    changeContact(workspaceId, contactId, (current) => {
      const changes: Partial<ContactRecord> = {};
      if (body.first_name !== undefined) changes.firstName = body.first_name || undefined;
      if (body.last_name !== undefined) changes.lastName = body.last_name || undefined;
      if (phone !== undefined) changes.phone = phone ?? undefined;
      if (body.email !== undefined) changes.email = body.email ?? undefined;
      if (body.contactability !== undefined)
        changes.contactability = contactabilityLabel(body.contactability);
      if (body.tags !== undefined) {
        changes.tags = body.tags.length > 0 ? body.tags : undefined;
        changes.tagKeys = tagKeysOf(body.tags);
      }
      if (body.attributes !== undefined) {
        const merged: Record<string, string> = attributesOf(current.customAttributes);
        for (const [key, value] of Object.entries(body.attributes)) {
          // One key per attribute however it is spelt; "" (or blank) removes it, as null does.
          const name = normaliseAttributeKey(key);
          if (value === null || !value.trim()) delete merged[name];
          else merged[name] = value;
        }
        if (Object.keys(merged).length > MAX_ATTRIBUTES) {
          throw new ValidationError([
            {
              type: 'value_error',
              loc: ['body', 'attributes'],
              msg: `Value error, a contact has at most ${MAX_ATTRIBUTES} attributes`,
              input: body.attributes,
            },
          ]);
        }
        changes.customAttributes = Object.keys(merged).length > 0 ? merged : undefined;
      }
      if (body.timezone !== undefined) changes.timezone = body.timezone ?? undefined;
      const next = { ...current, ...changes };
      if (!next.phone && !next.email) {
        throw new ValidationError([
          { type: 'value_error', loc: ['body'], msg: `Value error, ${NEEDS_PHONE_OR_EMAIL}`, input },
        ]);
      }
      const changed = (Object.keys(changes) as (keyof ContactRecord)[]).some(
        (key) => JSON.stringify(changes[key]) !== JSON.stringify(current[key as keyof Contact]),
      );
      if (!changed) return { write: false, result: undefined };
      return {
        write: true,
        changes: { ...changes, updatedAt: clock.now().toISOString() },
        result: undefined,
      };
    }),
  );
  return requireContact(workspaceId, contactId, { withCalls: true });
}

/**
 * Deletes a contact with its phone/email keys and search entries, and records the purge of its notes,
 * call links and call summary in the outbox (one transaction); then purges them, a bounded number in the
 * request and the rest on the queue (purge.ts).
 */
export async function deleteContact(workspaceId: string, contactId: string): Promise<void> {
  if (!isId('contact', contactId)) throw notFound(CONTACT_NOT_FOUND);
  // First, while nothing is deleted: a contact with many items at the old key answers 503 until moved.
  await moveLegacyContactItems(workspaceId, contactId);
  const purge = purgeRecord(workspaceId, contactId);
  for (let attempt = 0; ; attempt += 1) {
    const current = await getContact(workspaceId, contactId);
    if (!current) throw notFound(CONTACT_NOT_FOUND);
    const result = await contactsService.transaction
      .write((tx) => [
        tx.contact
          .delete({ workspaceId, contactId })
          .where((attr, op) =>
            current.version === undefined
              ? `${op.exists(attr.createdAt)} AND ${op.notExists(attr.version)}`
              : op.eq(attr.version, current.version),
          )
          .commit(),
        ...(current.phone ? [tx.contactPhone.delete({ workspaceId, phone: current.phone }).commit()] : []),
        ...(current.email ? [tx.contactEmail.delete({ workspaceId, email: current.email }).commit()] : []),
        ...(current.searchTokens ?? []).map((token) =>
          tx.contactSearch.delete({ workspaceId, token, contactId }).commit(),
        ),
        tx.outboxEvent.create(purge).commit(),
      ])
      .go();
    if (!result.canceled) break;
    if (attempt >= MAX_TRIES) throw new Error(`contact ${contactId} kept changing; try again`);
    await backOff(attempt);
  }
  // The API's and workflows' notes are written only while the contact exists (a condition on it), so
  // none can follow the purge; a call recorded at this very moment may leave its link, note and summary
  // (written at the contact's key without a condition on it: post-call-changes.ts), unread.
  await purgeAfterDeletion(purge, workspaceId, contactId);
}
