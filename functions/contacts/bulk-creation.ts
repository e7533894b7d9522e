import { clock } from '../platform/clock.js';
import { inParallel } from '../platform/parallel.js';
import { batchPutItems } from '../platform/table.js';
import {
  ContactEmailEntity,
  ContactEntity,
  ContactPhoneEntity,
  ContactSearchEntity,
  contactsService,
  type Contact,
} from './entities.js';
import { newContactFields, newRecord, type NewContactFields } from './input.js';
import type { ContactInput } from './schemas.js';
import {
  addContactItems,
  changeContact,
  ContactGone,
  deleteAll,
  finalRecord,
  MAX_TRIES,
  searchConversions,
  searchEntries,
  type ContactRecord,
  type TxEntities,
  type TxItem,
} from './writes.js';

/**
 * Contacts created in bulk, for imports: many to a transaction, their search entries in batch writes.
 */

/** A contact to create in bulk, with the items its caller writes in the same transaction (an import's row outcome). */
export interface NewContactDraft {
  input: ContactInput;
  alsoWrite: (tx: TxEntities, contactId: string) => TxItem[];
}

/** DynamoDB's limit of items in one transaction. */
const MAX_TRANSACTION_ITEMS = 100;

/**
 * For imports: whether each contact is new — no contact has its phone number or email address —
 * from one consistent batch read of their keys (a guess that the write's conditions confirm).
 */
export async function newAmong(
  workspaceId: string,
  inputs: ContactInput[],
  country: string,
): Promise<boolean[]> {
  const fields = inputs.map((input) => newContactFields(input, country));
  const phones = [...new Set(fields.flatMap((f) => (f.phone ? [f.phone] : [])))];
  const emails = [...new Set(fields.flatMap((f) => (f.email ? [f.email] : [])))];
  const taken = new Set<string>();
  const read = async <K>(
    keys: K[],
    get: (batch: K[]) => Promise<{ data: object[]; unprocessed: unknown[] }>,
  ) => {
    for (let i = 0; i < keys.length; i += 100) {
      const { data, unprocessed } = await get(keys.slice(i, i + 100));
      if (unprocessed.length > 0) throw new Error('the table is busy: try again');
      for (const item of data) {
        const key = item as { phone?: string; email?: string };
        if (key.phone) taken.add(`p:${key.phone}`);
        if (key.email) taken.add(`e:${key.email}`);
      }
    }
  };
  await read(phones, (batch) =>
    ContactPhoneEntity.get(batch.map((phone) => ({ workspaceId, phone }))).go({
      consistent: true,
      concurrency: 1,
    }),
  );
  await read(emails, (batch) =>
    ContactEmailEntity.get(batch.map((email) => ({ workspaceId, email }))).go({
      consistent: true,
      concurrency: 1,
    }),
  );
  return fields.map(
    (f) => !(f.phone && taken.has(`p:${f.phone}`)) && !(f.email && taken.has(`e:${f.email}`)),
  );
}

/**
 * For imports: creates new contacts (free of charge), as many as fit in each transaction with their
 * callers' items. A transaction that a condition refuses (a key taken meanwhile, an item of the caller
 * written already) writes nothing: its drafts are returned, for the caller to create one at a time.
 */
export async function createContactsTogether(
  workspaceId: string,
  drafts: NewContactDraft[],
  options: { country: string },
): Promise<NewContactDraft[]> {
  const now = clock.now().toISOString();
  const packs: { draft: NewContactDraft; record: ContactRecord; items: number }[][] = [];
  let pack: (typeof packs)[number] = [];
  let size = 0;
  for (const draft of drafts) {
    const record = finalRecord(
      undefined,
      newRecord(workspaceId, newContactFields(draft.input, options.country), now),
    );
    const items =
      1 + (record.phone ? 1 : 0) + (record.email ? 1 : 0) + (record.searchTokens?.length ?? 0) + 1;
    if (size + items > MAX_TRANSACTION_ITEMS && pack.length > 0) {
      packs.push(pack);
      pack = [];
      size = 0;
    }
    pack.push({ draft, record, items });
    size += items;
  }
  if (pack.length > 0) packs.push(pack);
  const refused: NewContactDraft[] = [];
  for (const entries of packs) {
    const result = await contactsService.transaction
      .write((tx) => {
        const items: TxItem[] = [];
        for (const { draft, record } of entries) {
          addContactItems(tx, undefined, record, (_kind, item) => items.push(item));
          items.push(...draft.alsoWrite(tx, record.contactId));
        }
        return items;
      })
      .go();
    if (result.canceled) refused.push(...entries.map((e) => e.draft));
  }
  return refused;
}

/** An import's transactions written at once (DynamoDB Local applies transactions one after another:
 * more at once only overlaps building and sending one with the writing of another). */
const IMPORT_TRANSACTIONS_AT_ONCE = 3;
/** An import's search entries: BatchWriteItem requests (25 entries each) sent at once. */
const IMPORT_BATCHES_AT_ONCE = 4;

/**
 * What became of a contact an import asked to create: `created` (now, or by an earlier receive of the
 * same chunk: one of its keys is already its own), `taken` (another contact has its phone number or
 * email address: merge into it) or `refused` (its transaction was refused by a condition, a key taken
 * meanwhile or its id used already: decide it alone, with `mergeContact`).
 */
export type ImportedOutcome = 'created' | 'taken' | 'refused';

/**
 * For imports: creates, free of charge, the contacts whose phone number and email address nobody
 * has. Each contact's id is given by the caller and is the same each time the same row is imported
 * (functions/contacts/contact-import-rows.ts: importedContactId), so a key that points at it tells that an
 * earlier receive created it.
 *
 * 1. One consistent batch read of the keys.
 * 2. The new contacts with their phone and email keys, created with "does not exist", as many as fit
 *    in a transaction of at most 100 items (a lost race refuses the whole transaction, and its
 *    contacts come back `refused`), IMPORT_TRANSACTIONS_AT_ONCE transactions at once.
 * 3. Their search entries (derived data: the same items whenever they are derived from the same
 *    contact) in batch writes: an entry costs DynamoDB a third of what an item of a transaction does.
 *    Also those of contacts an earlier receive created and that are still as created (`version` 1):
 *    that receive may have stopped before writing them.
 * 4. The contacts read again: one changed meanwhile (a write between its creation and its entries'
 *    batch write, whose own entries the batch may have overwritten) has its entries rewritten from
 *    the contact as it is now (repairSearchEntries). A write after the batch needs nothing: its own
 *    transaction replaces the entries.
 * `onWritten` is told each transaction's contacts.
 */
export async function createImportedContacts(
  workspaceId: string,
  drafts: { contactId: string; fields: NewContactFields }[],
  options: { onWritten?: (contacts: number) => void } = {},
): Promise<ImportedOutcome[]> {
  const owners = await keyOwners(
    workspaceId,
    drafts.map((d) => d.fields),
  );
  const fresh: number[] = [];
  const createdBefore: string[] = [];
  const outcomes = drafts.map(({ contactId, fields }, i): ImportedOutcome => {
    const found = [
      fields.phone ? owners.get(`p:${fields.phone}`) : undefined,
      fields.email ? owners.get(`e:${fields.email}`) : undefined,
    ].filter((owner) => owner !== undefined);
    if (found.includes(contactId)) {
      createdBefore.push(contactId);
      return 'created';
    }
    if (found.length > 0) return 'taken';
    fresh.push(i);
    return 'refused'; // until written
  });
  const now = clock.now().toISOString();
  const packs: ContactRecord[][] = [];
  const indexOf = new Map<string, number>();
  let pack: ContactRecord[] = [];
  let size = 0;
  for (const index of fresh) {
    const { contactId, fields } = drafts[index];
    const record = finalRecord(undefined, newRecord(workspaceId, fields, now, contactId));
    indexOf.set(contactId, index);
    const items = 1 + (record.phone ? 1 : 0) + (record.email ? 1 : 0);
    if (size + items > MAX_TRANSACTION_ITEMS && pack.length > 0) {
      packs.push(pack);
      pack = [];
      size = 0;
    }
    pack.push(record);
    size += items;
  }
  if (pack.length > 0) packs.push(pack);
  const written: ContactRecord[] = [];
  await inParallel(packs, IMPORT_TRANSACTIONS_AT_ONCE, async (records) => {
    const result = await contactsService.transaction
      .write((tx) => {
        const items: TxItem[] = [];
        for (const record of records)
          addContactItems(tx, undefined, record, (_kind, item) => items.push(item), { searchEntries: false });
        return items;
      })
      .go();
    if (result.canceled) return;
    for (const record of records) outcomes[indexOf.get(record.contactId)!] = 'created';
    written.push(...records);
    options.onWritten?.(records.length);
  });
  const unindexed = (await readContacts(workspaceId, createdBefore)).filter((c) => c.version === 1);
  const indexed = [...written, ...unindexed];
  const items = indexed.flatMap(searchEntryItems);
  const requests: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 25) requests.push(items.slice(i, i + 25));
  await inParallel(requests, IMPORT_BATCHES_AT_ONCE, (request) => batchPut(request));
  const now2 = await readContacts(
    workspaceId,
    indexed.map((c) => c.contactId),
  );
  const unchanged = new Set(now2.filter((c) => c.version === 1).map((c) => c.contactId));
  for (const contact of indexed) {
    if (!unchanged.has(contact.contactId))
      await repairSearchEntries(workspaceId, contact.contactId, contact.searchTokens ?? []);
  }
  return outcomes;
}

/** These contacts (those that exist), read consistently in batches of 100. */
async function readContacts(workspaceId: string, contactIds: string[]): Promise<Contact[]> {
  const batches: string[][] = [];
  for (let i = 0; i < contactIds.length; i += 100) batches.push(contactIds.slice(i, i + 100));
  const found: Contact[] = [];
  await inParallel(batches, 4, async (batch) => {
    const { data, unprocessed } = await ContactEntity.get(
      batch.map((contactId) => ({ workspaceId, contactId })),
    ).go({ consistent: true });
    if (unprocessed.length > 0) throw new Error('the table is busy: try again');
    found.push(...data);
  });
  return found;
}

/**
 * A contact's search entries as table items, for a batch write: the first built by the entity (so
 * every attribute is written as the entity writes it), the others copies of it with their own key,
 * token and lcpPrev (building each with the entity costs ~10x the CPU, several entries a contact).
 */
function searchEntryItems(record: ContactRecord): Record<string, unknown>[] {
  const entries = searchEntries(record);
  if (entries.length === 0) return [];
  const { Item: first } = ContactSearchEntity.put(entries[0]).params<{ Item: Record<string, unknown> }>();
  return entries.map((entry, i) =>
    i === 0
      ? first
      : {
          ...first,
          ...searchConversions().fromComposite.toKeys({
            workspaceId: entry.workspaceId,
            token: entry.token,
            contactId: entry.contactId,
          }),
          token: entry.token,
          lcpPrev: entry.lcpPrev,
        },
  );
}

/** One BatchWriteItem of up to 25 puts, what DynamoDB leaves unprocessed sent again (idempotent puts). */
const batchPut = (items: Record<string, unknown>[]) => batchPutItems(items, MAX_TRIES);

/**
 * A contact's search entries rewritten from the contact as it is now, after a batch wrote entries
 * of an older copy (`written`: their tokens): the tokens it no longer has deleted, then the contact
 * rewritten unchanged (its transaction puts every entry it has).
 */
async function repairSearchEntries(workspaceId: string, contactId: string, written: string[]): Promise<void> {
  try {
    await changeContact(workspaceId, contactId, (current) => {
      const kept = new Set(current.searchTokens);
      const stale = written.filter((token) => !kept.has(token));
      return {
        write: true,
        changes: {},
        result: undefined,
        extras: (tx) =>
          stale.map((token) => ({
            kind: 'search',
            item: tx.contactSearch.delete({ workspaceId, token, contactId }).commit(),
          })),
      };
    });
  } catch (error) {
    if (!(error instanceof ContactGone)) throw error;
    // Deleted meanwhile: its delete removed the entries it knew of, maybe before the batch wrote them.
    await deleteAll(
      (keys) => ContactSearchEntity.delete(keys).go(),
      written.map((token) => ({ workspaceId, token, contactId })),
    );
  }
}

/** The owners of these contacts' phone and email keys (`p:<e164>` / `e:<email>` → contact id), read consistently. */
async function keyOwners(
  workspaceId: string,
  fields: Pick<NewContactFields, 'phone' | 'email'>[],
): Promise<Map<string, string>> {
  const phones = [...new Set(fields.flatMap((f) => (f.phone ? [f.phone] : [])))];
  const emails = [...new Set(fields.flatMap((f) => (f.email ? [f.email] : [])))];
  const owners = new Map<string, string>();
  const batches: (() => Promise<{ data: object[]; unprocessed: unknown[] }>)[] = [];
  for (let i = 0; i < phones.length; i += 100) {
    const batch = phones.slice(i, i + 100);
    batches.push(() =>
      ContactPhoneEntity.get(batch.map((phone) => ({ workspaceId, phone }))).go({ consistent: true }),
    );
  }
  for (let i = 0; i < emails.length; i += 100) {
    const batch = emails.slice(i, i + 100);
    batches.push(() =>
      ContactEmailEntity.get(batch.map((email) => ({ workspaceId, email }))).go({ consistent: true }),
    );
  }
  await inParallel(batches, 4, async (read) => {
    const { data, unprocessed } = await read();
    if (unprocessed.length > 0) throw new Error('the table is busy: try again');
    for (const item of data) {
      const key = item as { phone?: string; email?: string; contactId: string };
      if (key.phone) owners.set(`p:${key.phone}`, key.contactId);
      if (key.email) owners.set(`e:${key.email}`, key.contactId);
    }
  });
  return owners;
}
