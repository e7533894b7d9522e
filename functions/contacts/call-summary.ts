import { batchGetStoredItems, entityKey, type StoredItem, type TableKey } from '../platform/table.js';
import {
  ContactCallSummaryEntity,
  ContactEntity,
  type Contact,
  type ContactCallSummary,
} from './entities.js';
import type { ListedContact } from './views.js';

/**
 * A contact's calls: its call count, last call and `last_contacted_at`, kept in an item at the
 * contact's own key (`WS#<ws>#CONTACT#<ct>` / `CONTACTCALLS`, entities.ts) rather than on the contact
 * item at the workspace's key, so that a call's post-call change writes nothing at `WS#<ws>` nor at
 * `WS#<ws>#CONTACTSEARCH` (docs/scale.md). The summary is written by recordCallOnContact
 * (post-call-changes.ts) and merged into the contact wherever a contact is shown:
 * - the summary, when there is one, wins over the call fields on the contact item (written before
 *   summaries existed; the first call recorded after seeds the summary from them);
 * - without one, the contact item's own fields show (nothing needs migrating);
 * - `last_contacted_at` is the later of the contact's own and the summary's, so a time another path
 *   sets on the contact still shows.
 */

/** The fields a contact's calls decide. */
export type CallFields = Pick<
  ContactCallSummary,
  'callCount' | 'lastCallId' | 'lastCallAt' | 'lastCallSentiment' | 'lastCallSummary' | 'lastContactedAt'
>;

/** A call as the post-call pipeline records it on a contact. */
export interface RecordedCall {
  callId: string;
  at: string;
  sentiment?: string;
  summary?: string;
}

/** The later of two ISO times (either may be absent). */
export const laterOf = (a: string | undefined, b: string | undefined): string | undefined =>
  !a ? b : !b ? a : a > b ? a : b;

/** A contact's call fields as the contact item holds them (`lastContactedAt` from its last call if absent). */
export function callFieldsOf(contact: Contact): CallFields {
  return {
    callCount: contact.callCount ?? 0,
    lastCallId: contact.lastCallId,
    lastCallAt: contact.lastCallAt,
    lastCallSentiment: contact.lastCallSentiment,
    lastCallSummary: contact.lastCallSummary,
    lastContactedAt: contact.lastContactedAt ?? contact.lastCallAt,
  };
}

/**
 * The call fields after recording `call` on `base`: one more call; the "last call" fields follow the
 * most recent call even when calls are recorded out of order (a call without a sentiment or summary
 * keeps the previous one's); `lastContactedAt` the later of the two.
 */
export function afterCall(base: CallFields, call: RecordedCall): CallFields {
  const latest = !base.lastCallAt || base.lastCallAt <= call.at;
  return {
    callCount: (base.callCount ?? 0) + 1,
    lastCallId: latest ? call.callId : base.lastCallId,
    lastCallAt: latest ? call.at : base.lastCallAt,
    lastCallSentiment: latest && call.sentiment ? call.sentiment : base.lastCallSentiment,
    lastCallSummary: latest && call.summary ? call.summary.slice(0, 1000) : base.lastCallSummary,
    lastContactedAt: laterOf(base.lastContactedAt, call.at),
  };
}

/** The contact as shown: its summary's call fields over its own, `lastContactedAt` the later. */
export function withCallSummary(contact: Contact, summary: ContactCallSummary | undefined): Contact {
  if (!summary) return contact;
  return {
    ...contact,
    callCount: summary.callCount,
    lastCallId: summary.lastCallId,
    lastCallAt: summary.lastCallAt,
    lastCallSentiment: summary.lastCallSentiment,
    lastCallSummary: summary.lastCallSummary,
    lastContactedAt: laterOf(contact.lastContactedAt ?? contact.lastCallAt, summary.lastContactedAt),
  };
}

/** A listed contact (the contact item or a search entry) with `lastContactedAt` from its summary. */
export function listedWithCallSummary<T extends ListedContact>(
  listed: T,
  summary: ContactCallSummary | undefined,
): T {
  if (!summary) return listed;
  return {
    ...listed,
    lastContactedAt: laterOf(listed.lastContactedAt ?? listed.lastCallAt, summary.lastContactedAt),
  };
}

const summaryKey = (workspaceId: string, contactId: string): TableKey =>
  entityKey(ContactCallSummaryEntity.get({ workspaceId, contactId }).params());

const parseSummary = (item: StoredItem | undefined): ContactCallSummary | undefined =>
  item ? (ContactCallSummaryEntity.parse({ Item: item }).data ?? undefined) : undefined;

/**
 * The contact and its call summary in one consistent read (one BatchGetItem, where the contact alone
 * was one GetItem): null when the contact does not exist.
 */
export async function readContactAndCalls(
  workspaceId: string,
  contactId: string,
): Promise<{ contact: Contact | null; summary: ContactCallSummary | undefined }> {
  const [contactItem, summaryItem] = await batchGetStoredItems([
    entityKey(ContactEntity.get({ workspaceId, contactId }).params()),
    summaryKey(workspaceId, contactId),
  ]);
  const contact = contactItem ? (ContactEntity.parse({ Item: contactItem }).data as Contact | null) : null;
  return { contact, summary: parseSummary(summaryItem) };
}

/** Keys a BatchGetItem may name. */
const BATCH_GET_KEYS = 100;

/**
 * A page of listed contacts with their `last_contacted_at` from their call summaries: one
 * BatchGetItem a hundred contacts (none for an empty page), in parallel.
 */
export async function withCallSummaries<T extends ListedContact>(
  workspaceId: string,
  items: T[],
): Promise<T[]> {
  if (items.length === 0) return items;
  const ids = [...new Set(items.map((item) => item.contactId))];
  const chunks: string[][] = [];
  for (let i = 0; i < ids.length; i += BATCH_GET_KEYS) chunks.push(ids.slice(i, i + BATCH_GET_KEYS));
  const read = await Promise.all(
    chunks.map((chunk) => batchGetStoredItems(chunk.map((contactId) => summaryKey(workspaceId, contactId)))),
  );
  const summaries = new Map<string, ContactCallSummary>();
  for (const item of read.flat()) {
    const summary = parseSummary(item);
    if (summary) summaries.set(summary.contactId, summary);
  }
  return items.map((item) => listedWithCallSummary(item, summaries.get(item.contactId)));
}
