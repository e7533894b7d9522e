import { createContact } from '../../../functions/contacts/creation.js';
import { addNote, listNotes } from '../../../functions/contacts/notes.js';
import { newId } from '../../../functions/platform/ids.js';
import { ListQuery } from '../../../functions/platform/pagination.js';

/**
 * A contact's notes moved from the workspace's key to the contact's (docs/scale.md): a cursor handed
 * out before the move (ElectroDB's, of `WS#<ws>` / `CONTACTNOTE#<ct>#<note>`) keeps its position.
 */

const oldCursor = (workspaceId: string, contactId: string, noteId: string) =>
  Buffer.from(
    JSON.stringify({ pk: `WS#${workspaceId}`, sk: `CONTACTNOTE#${contactId}#${noteId}` }),
    'utf8',
  ).toString('base64url');

test('a notes cursor from before the move lists the notes after its position, once each', async () => {
  const workspaceId = newId('workspace');
  const { contactId } = await createContact(
    workspaceId,
    { phone: '+61491570177', source: 'csv' },
    {
      country: 'AU',
    },
  );
  const notes = [];
  for (const text of ['first', 'second', 'third'])
    notes.push(await addNote(workspaceId, contactId, { text }, 'user_test'));
  const [first, second, third] = notes.map((n) => n.noteId);

  const all = await listNotes(workspaceId, contactId, ListQuery.parse({ limit: '10' }));
  expect(all.items.map((n) => n.noteId)).toEqual([third, second, first]);

  const after = await listNotes(
    workspaceId,
    contactId,
    ListQuery.parse({ limit: '10', cursor: oldCursor(workspaceId, contactId, third) }),
  );
  expect(after.items.map((n) => n.noteId)).toEqual([second, first]);
  expect(after.nextCursor).toBeNull();

  // Another contact's old cursor is not this one's position: refused as any foreign cursor is.
  const foreign = await listNotes(
    workspaceId,
    contactId,
    ListQuery.parse({ limit: '10', cursor: oldCursor(workspaceId, newId('contact'), third) }),
  ).catch((error: unknown) => error);
  expect(foreign).toMatchObject({ status: 422 });
});
