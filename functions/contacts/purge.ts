import { logger } from '../platform/logger.js';
import { discardRecorded, outboxMessage, publishRecorded, type OutboxRecord } from '../platform/outbox.js';
import { sendMessage } from '../platform/queue.js';
import { batchDeleteItems, queryStoredItems, type TableKey } from '../platform/table.js';
import { readContact } from './entities.js';

/**
 * What a deleted contact leaves at its own key (`WS#<ws>#CONTACT#<ct>`: its notes, call links and call
 * summary) is deleted a bounded number at a time, so no request or message runs past its function's
 * time however many calls the contact had:
 * - the deletion's request deletes up to CONTACT_PURGE_PER_REQUEST of them after the contact itself;
 * - when more are left, the `contacts.purge` message its transaction recorded in the outbox goes to the
 *   `imports` queue, and each message deletes up to CONTACT_PURGE_PER_MESSAGE, then sends itself again;
 * - the request crashing after the contact's deletion leaves the message in the outbox, which its sweep
 *   publishes. Deleting is idempotent: a message received twice, or two at once, delete nothing twice.
 */

export const CONTACT_PURGE_PER_REQUEST = 100;
export const CONTACT_PURGE_PER_MESSAGE = 2_000;

/** Read and deleted a page at a time: a Query page, then BatchWriteItems of 25. */
const PAGE = 100;
const BATCH = 25;

/** The outbox item of a contact's purge, to create in the transaction that deletes the contact. */
export const purgeRecord = (workspaceId: string, contactId: string): OutboxRecord =>
  outboxMessage('imports', `purge_${contactId}`, workspaceId, {
    type: 'contacts.purge',
    workspace_id: workspaceId,
    contact_id: contactId,
  });

/** After the contact's deletion: its items purged in the request when few, else by the queue. */
export async function purgeAfterDeletion(record: OutboxRecord, workspaceId: string, contactId: string) {
  if (await purgeContactItems(workspaceId, contactId, CONTACT_PURGE_PER_REQUEST))
    await discardRecorded(record);
  else await publishRecorded([record]);
}

/** The `contacts.purge` message: a bounded part of the purge, then the message again while items are left. */
export async function purgeDeletedContact(workspaceId: string, contactId: string): Promise<void> {
  const { data: contact } = await readContact(workspaceId, contactId);
  if (contact) {
    // Only a committed deletion records the message, and ids are never reused: not ours to purge.
    logger.warn('contact purge for a contact that exists; ignored', { workspaceId, contactId });
    return;
  }
  if (await purgeContactItems(workspaceId, contactId, CONTACT_PURGE_PER_MESSAGE)) return;
  await sendMessage('imports', { type: 'contacts.purge', workspace_id: workspaceId, contact_id: contactId });
}

/**
 * Deletes up to `most` of the items at the contact's own key, reading each page again from the start
 * (consistent: what was deleted is gone). Whether none is left.
 */
export async function purgeContactItems(
  workspaceId: string,
  contactId: string,
  most: number,
): Promise<boolean> {
  let deleted = 0;
  for (;;) {
    const room = most - deleted;
    const page = await queryStoredItems({
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': 'pk' },
      ExpressionAttributeValues: { ':pk': `WS#${workspaceId}#CONTACT#${contactId}` },
      ProjectionExpression: '#pk, sk',
      ConsistentRead: true,
      // With no room left, one item says whether any is.
      Limit: room > 0 ? Math.min(PAGE, room) : 1,
    });
    const keys = page.items.map(({ pk, sk }) => ({ pk, sk }) as TableKey);
    if (keys.length === 0) return true;
    if (room <= 0) return false;
    for (let at = 0; at < keys.length; at += BATCH) await batchDeleteItems(keys.slice(at, at + BATCH));
    deleted += keys.length;
    if (!page.next) return true;
  }
}
