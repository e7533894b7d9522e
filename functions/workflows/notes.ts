import { ContactNoteEntity, contactsService } from '../contacts/entities.js';
import { CreateNoteBody } from '../contacts/schemas.js';
import { clock } from '../platform/clock.js';
import { isId } from '../platform/ids.js';
import { parseOrThrow } from '../platform/validation.js';

/**
 * A note a run writes on its contact (an `add_note` task, the Outcome's record), once: its id is chosen
 * before the first attempt and recorded on the run (the stage's `prepared`), and the note is created
 * with "does not exist" in a transaction that also checks the contact, as the contacts service's
 * addNote does. A retry after a crash between the note and the run's write finds the note there and
 * returns its id instead of adding a second one. Undefined: the contact is gone.
 */
export async function addRunNote(input: {
  workspaceId: string;
  contactId: string;
  noteId: string;
  text: string;
  authorId: string;
}): Promise<string | undefined> {
  const { workspaceId, contactId, noteId, authorId } = input;
  if (!isId('contact', contactId) || !isId('note', noteId)) return undefined;
  const body = parseOrThrow(CreateNoteBody, { text: input.text }, 'body');
  const now = clock.now().toISOString();
  const result = await contactsService.transaction
    .write(({ contact, contactNote }) => [
      contact
        .check({ workspaceId, contactId })
        .where((attr, op) => op.exists(attr.createdAt))
        .commit(),
      contactNote
        .create({
          workspaceId,
          contactId,
          noteId,
          text: body.text,
          channel: body.channel,
          authorId,
          createdAt: now,
          updatedAt: now,
        })
        .commit(),
    ])
    .go();
  if (!result.canceled) return noteId;
  const { data: existing } = await ContactNoteEntity.get({ workspaceId, contactId, noteId }).go({
    consistent: true,
  });
  if (existing) return noteId; // written by an earlier attempt of the same stage
  if (result.data.some((reason) => reason.code === 'TransactionConflict')) {
    throw new Error(`note ${noteId}: transaction conflict; received again`);
  }
  return undefined;
}
