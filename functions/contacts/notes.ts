import { createConversions } from 'electrodb';
import { onFirstUse } from '../platform/first-use.js';
import { clock } from '../platform/clock.js';
import { notFound } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import type { ListQuery } from '../platform/pagination.js';
import { isConditionFailure } from '../platform/table.js';
import { parseOrThrow } from '../platform/validation.js';
import {
  ContactNoteEntity,
  contactsService,
  moveLegacyContactItems,
  type ContactNote,
  type NoteChannel,
} from './entities.js';
import { onePage, type Page } from './paging.js';
import { CreateNoteBody, UpdateNoteBody } from './schemas.js';
import { CONTACT_NOT_FOUND, requireContact } from './lookup.js';

/**
 * A contact's notes: written by people (`direct` unless they say which channel) or by the system
 * (the post-call pipeline's `post_call` note, written with the call in post-call-changes.ts). A note
 * is written only while its contact exists (a condition on the contact in the same transaction), so
 * deleting a contact and then its notes leaves none behind.
 */

export const NOTE_NOT_FOUND = 'Note not found';

const noteConversions = onFirstUse(() => createConversions(ContactNoteEntity));

export async function addNote(
  workspaceId: string,
  contactId: string,
  input: { text: string; channel?: NoteChannel },
  authorId: string,
): Promise<ContactNote> {
  const body = parseOrThrow(CreateNoteBody, input, 'body');
  if (!isId('contact', contactId)) throw notFound(CONTACT_NOT_FOUND);
  const note = newNote(workspaceId, contactId, newId('note'), body, authorId);
  const result = await writeNote(note);
  if (result.canceled) throw notFound(CONTACT_NOT_FOUND);
  return note;
}

/**
 * A note whose id the caller chose, added once: called again with the same id (a retry after a crash
 * between the note and the caller's own record, e.g. a workflow run's stage), it finds the note and
 * adds no second one. The note's id; undefined when the contact is gone.
 */
export async function addNoteOnce(
  workspaceId: string,
  contactId: string,
  noteId: string,
  input: { text: string; channel?: NoteChannel },
  authorId: string,
): Promise<string | undefined> {
  if (!isId('contact', contactId) || !isId('note', noteId)) return undefined;
  const body = parseOrThrow(CreateNoteBody, input, 'body');
  const result = await writeNote(newNote(workspaceId, contactId, noteId, body, authorId));
  if (!result.canceled) return noteId;
  const { data: existing } = await ContactNoteEntity.get({ workspaceId, contactId, noteId }).go({
    consistent: true,
  });
  if (existing) return noteId;
  if (result.data.some((reason) => reason.code === 'TransactionConflict')) {
    throw new Error(`note ${noteId}: transaction conflict; received again`);
  }
  return undefined;
}

function newNote(
  workspaceId: string,
  contactId: string,
  noteId: string,
  body: { text: string; channel: NoteChannel },
  authorId: string,
): ContactNote {
  const now = clock.now().toISOString();
  return {
    workspaceId,
    contactId,
    noteId,
    text: body.text,
    channel: body.channel,
    authorId,
    createdAt: now,
    updatedAt: now,
  };
}

/** The note created ("does not exist") while its contact exists, in one transaction. */
const writeNote = (note: ContactNote) =>
  contactsService.transaction
    .write(({ contact, contactNote }) => [
      contact
        .check({ workspaceId: note.workspaceId, contactId: note.contactId })
        .where((attr, op) => op.exists(attr.createdAt))
        .commit(),
      contactNote.create(note).commit(),
    ])
    .go();

/**
 * A cursor handed out while notes were at the workspace's key (`WS#<ws>` / `CONTACTNOTE#<ct>#<note>`),
 * as the same position at the contact's key (the notes keep their order: by id); any other as given.
 */
function noteCursorNow(
  workspaceId: string,
  contactId: string,
  cursor: string | undefined,
): string | undefined {
  if (cursor === undefined) return undefined;
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return cursor; // Not one of ours: the query refuses it (422).
  }
  const { pk, sk } = (key ?? {}) as { pk?: unknown; sk?: unknown };
  const before = `CONTACTNOTE#${contactId}#`;
  if (pk !== `WS#${workspaceId}` || typeof sk !== 'string' || !sk.startsWith(before)) return cursor;
  return noteConversions().byAccessPattern.byContact.fromComposite.toCursor({
    workspaceId,
    contactId,
    noteId: sk.slice(before.length),
  });
}

/** The contact's notes, newest first; 404 when the contact does not exist. */
export async function listNotes(
  workspaceId: string,
  contactId: string,
  query: ListQuery,
): Promise<Page<ContactNote>> {
  await requireContact(workspaceId, contactId);
  await moveLegacyContactItems(workspaceId, contactId);
  return onePage({
    cursor: noteCursorNow(workspaceId, contactId, query.cursor),
    limit: query.limit,
    read: query.limit + 1,
    order: 'desc',
    run: (options) => ContactNoteEntity.query.byContact({ workspaceId, contactId }).go(options),
    cursorAfter: (note) =>
      noteConversions().byAccessPattern.byContact.fromComposite.toCursor({
        workspaceId,
        contactId,
        noteId: note.noteId,
      }),
  });
}

export async function updateNote(
  workspaceId: string,
  contactId: string,
  noteId: string,
  input: UpdateNoteBody,
): Promise<ContactNote> {
  const body = parseOrThrow(UpdateNoteBody, input, 'body');
  if (!isId('contact', contactId)) throw notFound(CONTACT_NOT_FOUND);
  if (!isId('note', noteId)) throw notFound(NOTE_NOT_FOUND);
  await moveLegacyContactItems(workspaceId, contactId);
  try {
    const { data } = await ContactNoteEntity.patch({ workspaceId, contactId, noteId })
      .set({
        ...(body.text !== undefined ? { text: body.text } : {}),
        ...(body.channel !== undefined ? { channel: body.channel } : {}),
        updatedAt: clock.now().toISOString(),
      })
      .go({ response: 'all_new' });
    return data as ContactNote;
  } catch (error) {
    if (isConditionFailure(error)) throw notFound(NOTE_NOT_FOUND);
    throw error;
  }
}

export async function deleteNote(workspaceId: string, contactId: string, noteId: string): Promise<void> {
  if (!isId('contact', contactId)) throw notFound(CONTACT_NOT_FOUND);
  if (!isId('note', noteId)) throw notFound(NOTE_NOT_FOUND);
  await moveLegacyContactItems(workspaceId, contactId);
  try {
    await ContactNoteEntity.delete({ workspaceId, contactId, noteId })
      .where((attr, op) => op.exists(attr.createdAt))
      .go();
  } catch (error) {
    if (isConditionFailure(error)) throw notFound(NOTE_NOT_FOUND);
    throw error;
  }
}
