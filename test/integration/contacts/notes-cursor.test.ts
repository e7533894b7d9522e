import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { createContact } from '../../../functions/contacts/creation.js';
import { CONTACT_MOVES_PER_REQUEST, ContactNoteEntity } from '../../../functions/contacts/entities.js';
import { docClient, tableName } from '../../../functions/platform/table.js';
import { addNote, listNotes } from '../../../functions/contacts/notes.js';
import { newId } from '../../../functions/platform/ids.js';
import { ListQuery } from '../../../functions/platform/pagination.js';
import { beforeMigration } from '../../helpers/migration-mark.js';

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

describe('until migrated, a contact with more notes at the old key than a request moves', () => {
  beforeMigration();

  test('answers 503 (Retry-After 1) while it moves them, a bounded number a request, then lists every note once', async () => {
    const workspaceId = newId('workspace');
    const { contactId } = await createContact(
      workspaceId,
      { phone: '+61491570178', source: 'csv' },
      { country: 'AU' },
    );
    const count = CONTACT_MOVES_PER_REQUEST + 20;
    const noteIds: string[] = [];
    const at = new Date().toISOString();
    for (let i = 0; i < count; i += 1) {
      const noteId = newId('note');
      noteIds.push(noteId);
      const { Item } = ContactNoteEntity.create({
        workspaceId,
        contactId,
        noteId,
        text: `note ${i}`,
        channel: 'post_call',
        authorId: 'system',
        createdAt: at,
        updatedAt: at,
      }).params() as { Item: Record<string, unknown> };
      await docClient().send(
        new PutCommand({
          TableName: tableName(),
          Item: { ...Item, pk: `WS#${workspaceId}`, sk: `CONTACTNOTE#${contactId}#${noteId}` },
        }),
      );
    }
    const first = await listNotes(workspaceId, contactId, ListQuery.parse({ limit: '100' })).catch(
      (error: unknown) => error,
    );
    expect(first).toMatchObject({ status: 503, headers: { 'retry-after': '1' } });
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listNotes(
        workspaceId,
        contactId,
        ListQuery.parse({ limit: '100', ...(cursor ? { cursor } : {}) }),
      );
      listed.push(...page.items.map((n) => n.noteId));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(listed).toEqual([...noteIds].sort().reverse());
  });
});
