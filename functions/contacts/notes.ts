import { createConversions } from 'electrodb';
import { clock } from '../platform/clock.js';
import { notFound } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import type { ListQuery } from '../platform/pagination.js';
import { isConditionFailure } from '../platform/table.js';
import { parseOrThrow } from '../platform/validation.js';
import { ContactNoteEntity, contactsService, type ContactNote, type NoteChannel } from './entities.js';
import { onePage, type Page } from './paging.js';
import { CreateNoteBody, UpdateNoteBody } from './schemas.js';
import { CONTACT_NOT_FOUND, requireContact } from './service.js';

/**
 * A contact's notes: written by people (`direct` unless they say which channel) or by the system
 * (the post-call pipeline's `post_call` note, written with the call in service.ts). A note is written
 * only while its contact exists (a condition on the contact in the same transaction), so deleting a
 * contact and then its notes leaves none behind.
 */

export const NOTE_NOT_FOUND = 'Note not found';

const noteConversions = createConversions(ContactNoteEntity);

export async function addNote(
  workspaceId: string,
  contactId: string,
  input: { text: string; channel?: NoteChannel },
  authorId: string,
): Promise<ContactNote> {
  const body = parseOrThrow(CreateNoteBody, input, 'body');
  if (!isId('contact', contactId)) throw notFound(CONTACT_NOT_FOUND);
  const now = clock.now().toISOString();
  const note: ContactNote = {
    workspaceId,
    contactId,
    noteId: newId('note'),
    text: body.text,
    channel: body.channel,
    authorId,
    createdAt: now,
    updatedAt: now,
  };
  const result = await contactsService.transaction
    .write(({ contact, contactNote }) => [
      contact
        .check({ workspaceId, contactId })
        .where((attr, op) => op.exists(attr.createdAt))
        .commit(),
      contactNote.create(note).commit(),
    ])
    .go();
  if (result.canceled) throw notFound(CONTACT_NOT_FOUND);
  return note;
}

/** The contact's notes, newest first; 404 when the contact does not exist. */
export async function listNotes(
  workspaceId: string,
  contactId: string,
  query: ListQuery,
): Promise<Page<ContactNote>> {
  await requireContact(workspaceId, contactId);
  return onePage({
    cursor: query.cursor,
    limit: query.limit,
    read: query.limit + 1,
    order: 'desc',
    run: (options) => ContactNoteEntity.query.byContact({ workspaceId, contactId }).go(options),
    cursorAfter: (note) =>
      noteConversions.byAccessPattern.byContact.fromComposite.toCursor({
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
  try {
    await ContactNoteEntity.delete({ workspaceId, contactId, noteId })
      .where((attr, op) => op.exists(attr.createdAt))
      .go();
  } catch (error) {
    if (isConditionFailure(error)) throw notFound(NOTE_NOT_FOUND);
    throw error;
  }
}
