import { requireContact } from '../contacts/lookup.js';
import { queryPage, type ListQuery, type Page } from '../platform/pagination.js';
import { SmsMessageEntity, SmsThreadEntity, type SmsMessage, type SmsThread } from './entities.js';

/**
 * The inbox: one thread per contact who was sent or sent us an SMS, newest activity first (one Query
 * of the threads' activity index), each with its last message and how many inbound messages came
 * since the thread was last read.
 */
export async function listThreads(workspaceId: string, query: ListQuery): Promise<Page<SmsThread>> {
  return queryPage(query.cursor, (cursor) =>
    SmsThreadEntity.query
      .byActivity({ inboxOf: workspaceId })
      .go({ cursor, limit: query.limit, order: 'desc' }),
  );
}

/**
 * A contact's messages, both directions, newest first (404 for a contact of another workspace).
 * Reading the first page marks the thread read (unread 0).
 */
export async function readThread(
  workspaceId: string,
  contactId: string,
  query: ListQuery,
): Promise<Page<SmsMessage>> {
  await requireContact(workspaceId, contactId);
  const page = await queryPage(query.cursor, (cursor) =>
    SmsMessageEntity.query
      .byThread({ workspaceId, contactId })
      .go({ cursor, limit: query.limit, order: 'desc' }),
  );
  if (query.cursor === undefined) {
    await SmsThreadEntity.patch({ workspaceId, contactId })
      .set({ unread: 0 })
      .go()
      .catch(() => undefined); // no thread yet: nothing to mark
  }
  return page;
}
