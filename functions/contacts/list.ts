import { createConversions } from 'electrodb';
import { onFirstUse } from '../platform/first-use.js';
import { withCallSummaries } from './call-summary.js';
import { ContactEntity, ContactSearchEntity, type Contact } from './entities.js';
import { onePage, type Page } from './paging.js';
import type { ContactListQuery } from './schemas.js';
import { normaliseQuery } from './search.js';
import { contactabilityLabel, sourceLabel, type ListedContact } from './views.js';
import { changeContact, ContactGone, searchConversions } from './writes.js';

/** A workspace's contacts listed and searched (one Query a page), and their search entries rebuilt. */

const contactConversions = onFirstUse(() => createConversions(ContactEntity));

/** Index entries a filtered page reads at most (one Query; it returns the first `limit` that match). */
export const FILTERED_PAGE_READ = 250;

/**
 * One page of a workspace's contacts: without `q`, the contacts newest first; with `q`, the search
 * entries whose token starts with it, in token order, each contact once. One Query either way, the
 * filters in its filter expression. A page reads `limit + 1` entries, or FILTERED_PAGE_READ when it
 * filters (`q` always does: repeats of a contact are filtered out), and returns the first `limit`
 * that match; `next_cursor` points after the last one returned, or is DynamoDB's own when fewer
 * matched. So a filtered page may be short or empty with a `next_cursor`; the list has ended only
 * when `next_cursor` is null.
 */
export async function listContacts(
  workspaceId: string,
  query: ContactListQuery,
): Promise<Page<ListedContact>> {
  const q = query.q === undefined ? '' : normaliseQuery(query.q);
  const contactability = query.contactability ? contactabilityLabel(query.contactability) : undefined;
  const source = query.source ? sourceLabel(query.source) : undefined;
  const tag = query.tag?.toLowerCase();
  const filtered = Boolean(contactability || source || tag);
  if (q) {
    const search = ContactSearchEntity.query
      .byToken({ workspaceId })
      .begins({ token: q })
      .where((attr, op) =>
        [
          op.lt(attr.lcpPrev, q.length),
          ...(contactability ? [op.eq(attr.contactability, contactability)] : []),
          ...(source ? [op.eq(attr.source, source as string)] : []),
          ...(tag ? [op.contains(attr.tagKeys, tag)] : []),
        ].join(' AND '),
      );
    return onePage({
      cursor: query.cursor,
      limit: query.limit,
      read: FILTERED_PAGE_READ,
      run: (options) => search.go(options),
      cursorAfter: (entry) =>
        searchConversions().byAccessPattern.byToken.fromComposite.toCursor({
          workspaceId,
          token: entry.token,
          contactId: entry.contactId,
        }),
    });
  }
  const base = ContactEntity.query.byId({ workspaceId });
  const contacts = filtered
    ? base.where((attr, op) =>
        [
          ...(contactability ? [op.eq(attr.contactability, contactability)] : []),
          ...(source ? [op.eq(attr.source, source as string)] : []),
          ...(tag ? [op.contains(attr.tagKeys, tag)] : []),
        ].join(' AND '),
      )
    : base;
  return onePage({
    cursor: query.cursor,
    limit: query.limit,
    read: filtered ? FILTERED_PAGE_READ : query.limit + 1,
    order: 'desc',
    run: (options) => contacts.go(options),
    cursorAfter: (contact) =>
      contactConversions().byAccessPattern.byId.fromComposite.toCursor({
        workspaceId,
        contactId: contact.contactId,
      }),
  });
}

/**
 * A page as the API lists it: listContacts' page, each contact's `last_contacted_at` taken from its
 * call summary when later (call-summary.ts: a call writes only that, not the contact or its search
 * entries). One more request a page: a BatchGetItem of the page's summaries.
 */
export async function listContactsShown(
  workspaceId: string,
  query: ContactListQuery,
): Promise<Page<ListedContact>> {
  const page = await listContacts(workspaceId, query);
  return { ...page, items: await withCallSummaries(workspaceId, page.items) };
}

/**
 * Rewrites every contact of a workspace once (search entries included): for contacts written before
 * search entries existed. Safe to run again; returns how many contacts it wrote.
 */
export async function reindexContacts(workspaceId: string): Promise<number> {
  let cursor: string | null = null;
  let count = 0;
  do {
    const page: { data: Contact[]; cursor: string | null } = await ContactEntity.query
      .byId({ workspaceId })
      .go({ cursor, limit: 100 });
    for (const contact of page.data) {
      try {
        await changeContact(workspaceId, contact.contactId, () => ({
          write: true,
          changes: {},
          result: undefined,
        }));
        count += 1;
      } catch (error) {
        if (!(error instanceof ContactGone)) throw error; // deleted meanwhile
      }
    }
    cursor = page.cursor;
  } while (cursor);
  return count;
}
