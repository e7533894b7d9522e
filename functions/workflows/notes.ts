import { addNoteOnce } from '../contacts/notes.js';

/**
 * A note a run writes on its contact (an `add_note` task, the Outcome's record), once: its id is chosen
 * before the first attempt and recorded on the run (the stage's `prepared`), and the contacts service
 * adds a note of that id only if there is none (addNoteOnce). A retry after a crash between the note
 * and the run's write finds the note there and returns its id instead of adding a second one.
 * Undefined: the contact is gone.
 */
export function addRunNote(input: {
  workspaceId: string;
  contactId: string;
  noteId: string;
  text: string;
  authorId: string;
}): Promise<string | undefined> {
  const { workspaceId, contactId, noteId, text, authorId } = input;
  return addNoteOnce(workspaceId, contactId, noteId, { text }, authorId);
}
