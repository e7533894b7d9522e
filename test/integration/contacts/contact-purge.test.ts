import { ContactCallEntity, ContactNoteEntity, readContact } from '../../../functions/contacts/entities.js';
import { deleteContact } from '../../../functions/contacts/changes.js';
import {
  CONTACT_PURGE_PER_MESSAGE,
  CONTACT_PURGE_PER_REQUEST,
  purgeDeletedContact,
} from '../../../functions/contacts/purge.js';
import { resetClock, setClock } from '../../../functions/platform/clock.js';
import { newId } from '../../../functions/platform/ids.js';
import { OUTBOX_SHARDS, OutboxEventEntity, sweepOutbox } from '../../../functions/platform/outbox.js';
import { queueUrlEnv } from '../../../functions/platform/resources.js';
import { queryStoredItems } from '../../../functions/platform/table.js';
import { api } from '../../helpers/http.js';
import { readQuiescence, waitFor, waitForConsumed, waitForQuiescence } from '../../helpers/wait.js';
import {
  contactPath,
  createContact,
  newTenant,
  notesPath,
  uniqueMobile,
  type Tenant,
} from '../../e2e/contacts/fixtures.js';

/**
 * A deleted contact's notes, call links and call summary (functions/contacts/purge.ts): the request
 * deletes CONTACT_PURGE_PER_REQUEST of them at most, the `imports` queue the rest,
 * CONTACT_PURGE_PER_MESSAGE a message; the purge is recorded in the outbox with the contact's deletion,
 * so a request that could not send it (the queue down, a crash) leaves it to the outbox's sweep.
 */

afterEach(() => resetClock());

async function itemsAtContactKey(workspaceId: string, contactId: string): Promise<number> {
  let count = 0;
  let next: Record<string, unknown> | undefined;
  do {
    const page = await queryStoredItems({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `WS#${workspaceId}#CONTACT#${contactId}` },
      ConsistentRead: true,
      Select: 'COUNT',
      ...(next ? { ExclusiveStartKey: next } : {}),
    });
    count += page.scanned;
    next = page.next;
  } while (next);
  return count;
}

/** `notes` notes and `calls` call links at the contact's key, written as the API and the pipeline do. */
async function fill(workspaceId: string, contactId: string, notes: number, calls: number): Promise<void> {
  const at = new Date().toISOString();
  const noteItems = Array.from({ length: notes }, () => ({
    workspaceId,
    contactId,
    noteId: newId('note'),
    text: 'Called back.',
    authorId: 'system',
    createdAt: at,
  }));
  const callItems = Array.from({ length: calls }, () => ({
    workspaceId,
    contactId,
    callId: newId('call'),
    at,
  }));
  for (let i = 0; i < noteItems.length; i += 500) {
    const { unprocessed } = await ContactNoteEntity.put(noteItems.slice(i, i + 500)).go();
    expect(unprocessed).toEqual([]);
  }
  for (let i = 0; i < callItems.length; i += 500) {
    const { unprocessed } = await ContactCallEntity.put(callItems.slice(i, i + 500)).go();
    expect(unprocessed).toEqual([]);
  }
  expect(await itemsAtContactKey(workspaceId, contactId)).toBe(notes + calls);
}

async function outboxed(eventId: string) {
  for (let shard = 0; shard < OUTBOX_SHARDS; shard += 1) {
    const { data } = await OutboxEventEntity.get({ shard, eventId }).go({ consistent: true });
    if (data) return data;
  }
  return undefined;
}

async function contactWith(tenant: Tenant, notes: number, calls: number): Promise<string> {
  const contact = await createContact(tenant, { first_name: 'Purged', phone: uniqueMobile() });
  await fill(tenant.workspaceId, contact.id, notes, calls);
  return contact.id as string;
}

/** The purge messages received so far, counted from a quiet stack (no earlier suite's import still going). */
const purgeMessages = async () => (await waitForQuiescence()).pollers.ProcessContactImport.received;

test('at the cap: a contact with as many items as a request deletes is purged in the request, nothing queued or left in the outbox', async () => {
  const tenant = await newTenant();
  const contactId = await contactWith(tenant, CONTACT_PURGE_PER_REQUEST - 40, 40);
  const before = await purgeMessages();
  expect((await api('DELETE', contactPath(tenant, contactId), { token: tenant.owner.token })).status).toBe(
    204,
  );
  expect(await itemsAtContactKey(tenant.workspaceId, contactId)).toBe(0);
  expect(await outboxed(`purge_${contactId}`)).toBeUndefined();
  expect((await api('GET', notesPath(tenant, contactId), { token: tenant.owner.token })).status).toBe(404);
  await waitForQuiescence();
  expect(await purgeMessages()).toBe(before);
});

test('past both caps: the request deletes its share, the queue the rest in two messages (the first sends the second), each item once', async () => {
  const tenant = await newTenant();
  const total = CONTACT_PURGE_PER_REQUEST + CONTACT_PURGE_PER_MESSAGE + 50;
  const contactId = await contactWith(tenant, total - 300, 300);
  const before = await waitForQuiescence();
  expect((await api('DELETE', contactPath(tenant, contactId), { token: tenant.owner.token })).status).toBe(
    204,
  );
  // The contact is gone at once; the request deleted its share and left the rest to the queue.
  expect((await api('GET', contactPath(tenant, contactId), { token: tenant.owner.token })).status).toBe(404);
  expect(await itemsAtContactKey(tenant.workspaceId, contactId)).toBeLessThanOrEqual(
    total - CONTACT_PURGE_PER_REQUEST,
  );
  await waitFor(async () => (await itemsAtContactKey(tenant.workspaceId, contactId)) === 0 || undefined, {
    what: 'the contact’s items purged',
    timeoutMs: 60_000,
  });
  await waitForConsumed(before, { ProcessContactImport: 2 }, { timeoutMs: 60_000 });
  expect(
    (await readQuiescence()).pollers.ProcessContactImport.received -
      before.pollers.ProcessContactImport.received,
  ).toBe(2);
  expect(await outboxed(`purge_${contactId}`)).toBeUndefined();
}, 120_000);

test('the queue refusing the purge: the contact is deleted all the same, the purge waits in the outbox, and its sweep sends it once', async () => {
  const tenant = await newTenant();
  const contactId = await contactWith(tenant, CONTACT_PURGE_PER_REQUEST + 20, 0);
  const queue = queueUrlEnv('imports');
  const good = process.env[queue];
  process.env[queue] = `${good}-does-not-exist`;
  try {
    await deleteContact(tenant.workspaceId, contactId);
  } finally {
    process.env[queue] = good;
  }
  expect((await readContact(tenant.workspaceId, contactId)).data).toBeNull();
  expect(await itemsAtContactKey(tenant.workspaceId, contactId)).toBe(20);
  expect(await outboxed(`purge_${contactId}`)).toMatchObject({ queue: 'imports' });

  const before = await waitForQuiescence();
  setClock(new Date(Date.now() + 60_000));
  const report = await sweepOutbox();
  resetClock();
  expect(report.failed).toBe(0);
  await waitForConsumed(before, { ProcessContactImport: 1 });
  expect(await itemsAtContactKey(tenant.workspaceId, contactId)).toBe(0);
  expect(await outboxed(`purge_${contactId}`)).toBeUndefined();
  expect(
    (await readQuiescence()).pollers.ProcessContactImport.received -
      before.pollers.ProcessContactImport.received,
  ).toBe(1);
});

test('a purge message for a contact that exists deletes nothing', async () => {
  const tenant = await newTenant();
  const contactId = await contactWith(tenant, 3, 2);
  await purgeDeletedContact(tenant.workspaceId, contactId);
  expect(await itemsAtContactKey(tenant.workspaceId, contactId)).toBe(5);
  expect((await readContact(tenant.workspaceId, contactId)).data).not.toBeNull();
});
