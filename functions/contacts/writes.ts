import { createConversions } from 'electrodb';
import { onFirstUse } from '../platform/first-use.js';
import { ContactSearchEntity, contactsService, type Contact, type ContactSearchEntry } from './entities.js';
import { CONTACT_KEY_TAKEN, DuplicateContactError, getContact, ownerOf } from './lookup.js';
import { searchTokens, withPrefixLengths } from './search.js';
import { attributesOf, namesOf } from './views.js';

/**
 * Contacts: how every change of a contact is written (the API, the post-call pipeline, imports and
 * syncs all write through it).
 *
 * Every write is one transaction, conditioned on the contact's `version` as it was read: the
 * contact, its phone and email keys (created with "does not exist": no two contacts share a number
 * or an address), its search entries (rewritten with it, so a list never shows a stale copy) and
 * whatever the caller adds (a call link, a note). A write that loses a race reads again and retries.
 */

export const MAX_TRIES = 8;

/** The contact item as written (every attribute; absent ones are removed by the put). */
export type ContactRecord = Omit<Contact, 'version' | 'searchTokens'> & {
  version?: number;
  searchTokens?: string[];
};
export type TxEntities = Parameters<Parameters<typeof contactsService.transaction.write>[0]>[0];
export type TxItem = ReturnType<ReturnType<TxEntities['contactNote']['create']>['commit']>;
/** Items a caller adds to a contact's transaction, each named so a refusal can be told apart. */
export type Extras = (tx: TxEntities) => { kind: string; item: TxItem }[];

type WriteResult =
  | { ok: true }
  | { ok: false; reason: 'retry' }
  | { ok: false; reason: 'taken'; field: 'phone' | 'email' }
  | { ok: false; reason: 'refused'; kind: string };

export const stripUndefined = <T extends object>(value: T): T =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;

/**
 * A contact record as stored: absent text is absent (null on the wire), never "" — a blank name,
 * phone, email, timezone or integration name is dropped, and so is a blank attribute — whichever
 * path wrote it (the API, imports, CRM syncs, the post-call pipeline, SMS).
 */
export function withoutBlankText<T extends Partial<ContactRecord>>(record: T): T {
  const out: Record<string, unknown> = { ...record };
  for (const key of ['firstName', 'lastName', 'name', 'phone', 'email', 'timezone', 'integrationName'])
    if (typeof out[key] === 'string' && !(out[key] as string).trim()) out[key] = undefined;
  if (out.customAttributes !== undefined) {
    const attributes = Object.fromEntries(
      Object.entries(attributesOf(out.customAttributes)).filter(([, value]) => value.trim()),
    );
    out.customAttributes = Object.keys(attributes).length > 0 ? attributes : undefined;
  }
  return stripUndefined(out) as T;
}

/** Blank text counts as no text: a stored "" (written before the rule above) is an empty field. */
export const isBlank = (value: string | undefined): boolean => !value || !value.trim();

/** The fields copied onto each search entry. */
function listedFields(record: ContactRecord) {
  return stripUndefined({
    firstName: record.firstName,
    lastName: record.lastName,
    name: record.name,
    phone: record.phone,
    email: record.email,
    source: record.source,
    integrationName: record.integrationName,
    contactability: record.contactability,
    tags: record.tags,
    tagKeys: record.tagKeys,
    customAttributes: record.customAttributes,
    timezone: record.timezone,
    lastContactedAt: record.lastContactedAt,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  });
}

/** The record to write over `previous` (absent: a new contact): its version and search tokens set. */
export function finalRecord(previous: Contact | undefined, draft: ContactRecord): ContactRecord {
  return withoutBlankText({
    ...draft,
    version: (previous?.version ?? 0) + 1,
    searchTokens: searchTokens(draft),
  });
}

/**
 * The items of writing `record` over `previous` (absent: a new contact): the contact (conditioned on
 * the version read), the phone/email keys that change, and the search entries, each with its kind.
 */
export function addContactItems(
  tx: TxEntities,
  previous: Contact | undefined,
  record: ContactRecord,
  add: (kind: string, item: TxItem) => void,
  options: { searchEntries?: boolean } = {},
): void {
  const { workspaceId, contactId } = record;
  if (!previous) {
    add('contact', tx.contact.create(record).commit());
  } else {
    const version = previous.version;
    add(
      'contact',
      tx.contact
        .put(record)
        .where((attr, op) =>
          version === undefined
            ? `${op.exists(attr.createdAt)} AND ${op.notExists(attr.version)}`
            : op.eq(attr.version, version),
        )
        .commit(),
    );
  }
  if (record.phone !== previous?.phone) {
    if (previous?.phone) {
      add(
        'contact',
        tx.contactPhone
          .delete({ workspaceId, phone: previous.phone })
          .where((attr, op) => op.eq(attr.contactId, contactId))
          .commit(),
      );
    }
    if (record.phone) {
      add('phone', tx.contactPhone.create({ workspaceId, phone: record.phone, contactId }).commit());
    }
  }
  if (record.email !== previous?.email) {
    if (previous?.email) {
      add(
        'contact',
        tx.contactEmail
          .delete({ workspaceId, email: previous.email })
          .where((attr, op) => op.eq(attr.contactId, contactId))
          .commit(),
      );
    }
    if (record.email) {
      add('email', tx.contactEmail.create({ workspaceId, email: record.email, contactId }).commit());
    }
  }
  if (options.searchEntries === false) return;
  const kept = new Set(record.searchTokens);
  for (const token of previous?.searchTokens ?? []) {
    if (!kept.has(token)) add('search', tx.contactSearch.delete({ workspaceId, token, contactId }).commit());
  }
  for (const entry of searchEntries(record)) add('search', tx.contactSearch.put(entry).commit());
}

/** The search entries of a contact as written (its tokens, each with a copy of what a list shows). */
export function searchEntries(record: ContactRecord): ContactSearchEntry[] {
  const listed = listedFields(record);
  const { workspaceId, contactId } = record;
  return withPrefixLengths(record.searchTokens ?? []).map(({ token, lcpPrev }) => ({
    workspaceId,
    contactId,
    token,
    lcpPrev,
    ...listed,
  }));
}

/**
 * Writes `next` over `previous` (absent: a new contact) in one transaction: the contact (conditioned
 * on the version read), the phone/email keys that change, the search entries, and `extras`.
 */
async function writeContact(
  previous: Contact | undefined,
  draft: ContactRecord,
  extras: Extras = () => [],
): Promise<WriteResult & { record?: ContactRecord }> {
  const record = finalRecord(previous, draft);
  const kinds: string[] = [];
  const result = await contactsService.transaction
    .write((tx) => {
      kinds.length = 0;
      const items: TxItem[] = [];
      const add = (kind: string, item: TxItem) => {
        kinds.push(kind);
        items.push(item);
      };
      addContactItems(tx, previous, record, add);
      for (const extra of extras(tx)) add(extra.kind, extra.item);
      return items;
    })
    .go();
  if (!result.canceled) return { ok: true, record };
  // When canceled, ElectroDB gives each item's outcome in order (its types do not say so).
  const outcomes = result.data as unknown as { rejected: boolean; code: string }[];
  const refusals = outcomes
    .map((outcome, i) => ({ kind: kinds[i], code: outcome.code, rejected: outcome.rejected }))
    .filter((r) => r.rejected);
  const failed = (kind: string) =>
    refusals.some((r) => r.kind === kind && r.code === 'ConditionalCheckFailed');
  if (refusals.some((r) => r.code !== 'ConditionalCheckFailed' && r.code !== 'None'))
    return { ok: false, reason: 'retry' };
  if (failed('contact') || failed('search')) return { ok: false, reason: 'retry' };
  if (failed('phone')) return { ok: false, reason: 'taken', field: 'phone' };
  if (failed('email')) return { ok: false, reason: 'taken', field: 'email' };
  const refused = refusals.find((r) => r.code === 'ConditionalCheckFailed');
  return refused ? { ok: false, reason: 'refused', kind: refused.kind } : { ok: false, reason: 'retry' };
}

/** A moment's pause between two tries of a write that lost a race (spreads the racers apart). */
export const backOff = (attempt: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, Math.random() * 10 * (attempt + 1)));

/**
 * A contact as this version writes it: one written before first/last names existed has its full name
 * split (as the API shows it), and `lastContactedAt` from its last call.
 */
function upgraded(contact: Contact): Contact {
  let result = contact;
  if (contact.firstName === undefined && contact.lastName === undefined && contact.name) {
    const { firstName, lastName } = namesOf(contact);
    result = { ...result, firstName: firstName || undefined, lastName: lastName || undefined };
  }
  if (result.lastContactedAt === undefined && result.lastCallAt) {
    result = { ...result, lastContactedAt: result.lastCallAt };
  }
  return result;
}

export const fullName = (firstName?: string, lastName?: string): string | undefined =>
  [firstName, lastName].filter((part) => part).join(' ') || undefined;

/** A change of a contact, decided from the contact as it is now. */
type Plan<R> =
  | { write: false; result: R }
  | {
      write: true;
      /** The fields to change; a field set to undefined is removed. */
      changes: Partial<ContactRecord>;
      extras?: Extras;
      result: R;
      /** What a refusal of the phone/email key or of an extra means (else the write is retried). */
      onRefused?: (refusal: { field?: 'phone' | 'email'; kind?: string }) => R | Promise<R>;
    };

/**
 * The contact to change does not exist (any more). Not an HttpError: for the post-call pipeline it
 * is worth a retry (the contact is found or made again); the API's changes answer 404.
 */
export class ContactGone extends Error {
  constructor(contactId: string) {
    super(`contact ${contactId} not found`);
    this.name = 'ContactGone';
  }
}

/**
 * Reads the contact, asks `plan` what to change, and writes it conditioned on the version read; a
 * lost race reads again. Throws ContactGone when the contact does not exist.
 */
export async function changeContact<R>(
  workspaceId: string,
  contactId: string,
  plan: (current: Contact) => Plan<R> | Promise<Plan<R>>,
): Promise<R> {
  for (let attempt = 0; attempt < MAX_TRIES; attempt += 1) {
    const current = await getContact(workspaceId, contactId);
    if (!current) throw new ContactGone(contactId);
    const decided = await plan(upgraded(current));
    if (!decided.write) return decided.result;
    const draft = { ...upgraded(current), ...decided.changes } as ContactRecord;
    draft.name = fullName(draft.firstName, draft.lastName);
    const outcome = await writeContact(current, draft, decided.extras);
    if (outcome.ok) return decided.result;
    if (outcome.reason === 'taken' && decided.onRefused) return decided.onRefused({ field: outcome.field });
    if (outcome.reason === 'refused' && decided.onRefused) return decided.onRefused({ kind: outcome.kind });
    if (outcome.reason === 'taken') {
      const owner = await ownerOf(workspaceId, outcome.field, draft[outcome.field]!);
      if (owner && owner !== contactId)
        throw new DuplicateContactError(owner, outcome.field, CONTACT_KEY_TAKEN);
    }
    await backOff(attempt);
  }
  throw new Error(`contact ${contactId} kept changing; try again`);
}

/**
 * Inserts a new contact; when its phone number or email address is taken, the contact that has it.
 * Concurrent inserts of one number: one is written, the others see its id.
 */
export async function insertContact(
  record: ContactRecord,
  extras?: Extras,
): Promise<{ created: Contact } | { taken: { field: 'phone' | 'email'; contactId: string } }> {
  for (let attempt = 0; attempt < MAX_TRIES; attempt += 1) {
    const outcome = await writeContact(undefined, record, extras);
    if (outcome.ok) return { created: outcome.record as Contact };
    if (outcome.reason === 'refused' && outcome.kind === ALSO) throw new AlsoWriteRefused();
    if (outcome.reason === 'taken') {
      const owner = await ownerOf(record.workspaceId, outcome.field, record[outcome.field]!);
      if (owner) return { taken: { field: outcome.field, contactId: owner } };
    }
    await backOff(attempt);
  }
  throw new Error('could not create the contact (its keys kept changing); try again');
}

/** The kind of the items a caller writes with a contact (creation.ts: mergeContact's `alsoWrite`). */
export const ALSO = 'also';

/** An item of `alsoWrite` was refused by its condition (an import's row outcome written already). */
export class AlsoWriteRefused extends Error {
  override readonly name = 'AlsoWriteRefused';
  constructor() {
    super('an item written with the contact was refused by its condition');
  }
}

/** Deletes these items (batch deletes), sending again what DynamoDB leaves unprocessed. */
export async function deleteAll<K>(
  remove: (keys: K[]) => Promise<{ unprocessed: unknown[] }>,
  keys: K[],
): Promise<void> {
  let pending = keys;
  for (let attempt = 0; pending.length > 0 && attempt < MAX_TRIES; attempt += 1) {
    const { unprocessed } = await remove(pending);
    pending = unprocessed as K[];
    if (pending.length > 0) await backOff(attempt);
  }
  if (pending.length > 0) throw new Error(`could not delete ${pending.length} items; try again`);
}

export const searchConversions = onFirstUse(() => createConversions(ContactSearchEntity));
