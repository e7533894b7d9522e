import { createConversions } from 'electrodb';
import { onFirstUse } from '../platform/first-use.js';
import { WorkspaceEntity } from '../access/entities.js';
import { clock } from '../platform/clock.js';
import { HttpError, notFound, ValidationError, type ValidationIssue } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { toE164, toE164InCountry } from '../platform/phone.js';
import { batchPutItems } from '../platform/table.js';
import { asciiEmail, parseOrThrow } from '../platform/validation.js';
import { outboxRecord, publishRecorded, type OutboxRecord } from '../platform/outbox.js';
import {
  ContactCallEntity,
  ContactEmailEntity,
  ContactEntity,
  ContactNoteEntity,
  ContactPhoneEntity,
  ContactSearchEntity,
  contactsService,
  readContact,
  type Contact,
  type ContactSearchEntry,
  type ContactSource,
} from './entities.js';
import { onePage, type Page } from './paging.js';
import { inParallel } from './parallel.js';
import {
  CreateContactBody,
  MAX_ATTRIBUTES,
  MAX_TAGS,
  UpdateContactBody,
  type ContactInput,
  type ContactListQuery,
} from './schemas.js';
import { normaliseQuery, searchTokens, withPrefixLengths } from './search.js';
import { normaliseAttributeKey, storedAttributes } from './model.js';
import {
  attributesOf,
  contactabilityLabel,
  contactView,
  namesOf,
  sourceLabel,
  type ListedContact,
} from './views.js';

/**
 * Contacts: the one service of the contacts family (the API, the post-call pipeline, and the imports
 * to come all write through it).
 *
 * Every write is one transaction, conditioned on the contact's `version` as it was read: the
 * contact, its phone and email keys (created with "does not exist": no two contacts share a number
 * or an address), its search entries (rewritten with it, so a list never shows a stale copy) and
 * whatever the caller adds (a call link, a note). A write that loses a race reads again and retries.
 *
 * For imports (CSV, vCard): `createContact` (409 `DuplicateContactError` when the number or address
 * is taken), `mergeContact` (find by phone, then email; fill only empty fields; `created | merged`),
 * `validateContactInput` (check a row without writing). Inputs are the body of `POST …/contacts`
 * (`ContactInput`); phone numbers in national form are read in the `country` given (the workspace's).
 */

export const CONTACT_NOT_FOUND = 'Contact not found';
export const CONTACT_EXISTS = 'Contact already exists';
export const CONTACT_KEY_TAKEN = 'Another contact has this phone number or email address';
const NEEDS_PHONE_OR_EMAIL = 'a contact needs a phone number or an email address';
const MAX_TRIES = 8;

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normaliseEmail(email: string | undefined | null): string | undefined {
  if (!email) return undefined;
  const checked = asciiEmail(email);
  if (!checked.ok) return undefined;
  return EMAIL_PATTERN.test(checked.email) && checked.email.length <= 254 ? checked.email : undefined;
}

/** An international number (`+61 …`) in E.164, as telephony reports them (the post-call pipeline). */
export function normalisePhone(phone: string | undefined | null): string | undefined {
  if (!phone) return undefined;
  return toE164(phone);
}

/** 409 `{error, contact_id}`: the phone number or email address belongs to `contactId`. */
export class DuplicateContactError extends HttpError {
  constructor(
    readonly contactId: string,
    readonly field: 'phone' | 'email',
    message = CONTACT_EXISTS,
  ) {
    super(409, message, {}, { contact_id: contactId });
    this.name = 'DuplicateContactError';
  }
}

// ── Reading ─────────────────────────────────────────────────────────────────────────────────────────

export async function getContact(workspaceId: string, contactId: string): Promise<Contact | null> {
  if (!isId('contact', contactId)) return null;
  return (await readContact(workspaceId, contactId)).data;
}

/** The contact, or 404 `Contact not found` (another workspace's contact included). */
export async function requireContact(workspaceId: string, contactId: string): Promise<Contact> {
  const contact = await getContact(workspaceId, contactId);
  if (!contact) throw notFound(CONTACT_NOT_FOUND);
  return contact;
}

export async function findContactByPhone(workspaceId: string, phone: string): Promise<Contact | null> {
  const e164 = normalisePhone(phone);
  if (!e164) return null;
  const { data: key } = await ContactPhoneEntity.get({ workspaceId, phone: e164 }).go({ consistent: true });
  return key ? getContact(workspaceId, key.contactId) : null;
}

export async function findContactByEmail(workspaceId: string, email: string): Promise<Contact | null> {
  const normalised = normaliseEmail(email);
  if (!normalised) return null;
  const { data: key } = await ContactEmailEntity.get({ workspaceId, email: normalised }).go({
    consistent: true,
  });
  return key ? getContact(workspaceId, key.contactId) : null;
}

async function ownerOf(workspaceId: string, field: 'phone' | 'email', value: string) {
  const { data } =
    field === 'phone'
      ? await ContactPhoneEntity.get({ workspaceId, phone: value }).go({ consistent: true })
      : await ContactEmailEntity.get({ workspaceId, email: value }).go({ consistent: true });
  return data?.contactId;
}

// ── Writing: one transaction per write ───────────────────────────────────────────────────────────────

/** The contact item as written (every attribute; absent ones are removed by the put). */
type ContactRecord = Omit<Contact, 'version' | 'searchTokens'> & {
  version?: number;
  searchTokens?: string[];
};
type TxEntities = Parameters<Parameters<typeof contactsService.transaction.write>[0]>[0];
type TxItem = ReturnType<ReturnType<TxEntities['contactNote']['create']>['commit']>;
/** Items a caller adds to a contact's transaction, each named so a refusal can be told apart. */
type Extras = (tx: TxEntities) => { kind: string; item: TxItem }[];

type WriteResult =
  | { ok: true }
  | { ok: false; reason: 'retry' }
  | { ok: false; reason: 'taken'; field: 'phone' | 'email' }
  | { ok: false; reason: 'refused'; kind: string };

const stripUndefined = <T extends object>(value: T): T =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;

/**
 * A contact record as stored: absent text is absent (null on the wire), never "" — a blank name,
 * phone, email, timezone or integration name is dropped, and so is a blank attribute — whichever
 * path wrote it (the API, imports, CRM syncs, the post-call pipeline, SMS).
 */
function withoutBlankText<T extends Partial<ContactRecord>>(record: T): T {
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
const isBlank = (value: string | undefined): boolean => !value || !value.trim();

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
function finalRecord(previous: Contact | undefined, draft: ContactRecord): ContactRecord {
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
function addContactItems(
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
function searchEntries(record: ContactRecord): ContactSearchEntry[] {
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
const backOff = (attempt: number) =>
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

const fullName = (firstName?: string, lastName?: string): string | undefined =>
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
async function changeContact<R>(
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

// ── Input ───────────────────────────────────────────────────────────────────────────────────────────

/** The fields of a new contact from a validated body (the phone read in `country`). */
export interface NewContactFields {
  firstName?: string;
  lastName?: string;
  phone?: string;
  email?: string;
  contactability: ContactRecord['contactability'];
  source: ContactSource;
  integrationName?: string;
  tags?: string[];
  customAttributes?: Record<string, string>;
  timezone?: string;
}

const phoneIssue = (input: unknown, loc: (string | number)[]): ValidationIssue => ({
  type: 'value_error',
  loc,
  msg: 'Value error, phone is not a valid phone number (international +…, or national in the workspace’s country)',
  input,
});

/** A phone number as typed, read in `country`; 422 on `loc` when it is not a valid number. */
function phoneIn(value: string, country: string, loc: (string | number)[]): string {
  const e164 = toE164InCountry(value, country);
  if (!e164) throw new ValidationError([phoneIssue(value, loc)]);
  return e164;
}

function newContactFields(input: ContactInput, country: string): NewContactFields {
  const body = parseOrThrow(CreateContactBody, input, 'body');
  const phone = body.phone ? phoneIn(body.phone, country, ['body', 'phone']) : undefined;
  return stripUndefined({
    firstName: body.first_name || undefined,
    lastName: body.last_name || undefined,
    phone,
    email: body.email ?? undefined,
    contactability: contactabilityLabel(body.contactability),
    source: sourceLabel(body.source),
    integrationName: body.source === 'integration' ? body.source_label : undefined,
    tags: body.tags,
    customAttributes: body.attributes && storedAttributes(body.attributes),
    timezone: body.timezone ?? undefined,
  });
}

/**
 * Checks a contact as `createContact` would, without writing: ok, or the 422 issues (`loc` starting
 * at `body`, as the route reports them). For importers that report row by row.
 */
export function validateContactInput(
  input: ContactInput,
  country: string,
): { ok: true } | { ok: false; issues: ValidationIssue[] } {
  const checked = checkContactInput(input, country);
  return checked.ok ? { ok: true } : checked;
}

/** As validateContactInput, with the contact's fields when it is valid (for `createImportedContacts`). */
export function checkContactInput(
  input: ContactInput,
  country: string,
): { ok: true; fields: NewContactFields } | { ok: false; issues: ValidationIssue[] } {
  try {
    return { ok: true, fields: newContactFields(input, country) };
  } catch (error) {
    if (error instanceof ValidationError) return { ok: false, issues: error.detail };
    throw error;
  }
}

const tagKeysOf = (tags: string[] | undefined) =>
  tags && tags.length > 0 ? tags.map((t) => t.toLowerCase()) : undefined;

function newRecord(
  workspaceId: string,
  fields: NewContactFields,
  now: string,
  contactId: string = newId('contact'),
): ContactRecord {
  return withoutBlankText({
    workspaceId,
    contactId,
    ...fields,
    name: fullName(fields.firstName, fields.lastName),
    tags: fields.tags && fields.tags.length > 0 ? fields.tags : undefined,
    tagKeys: tagKeysOf(fields.tags),
    customAttributes:
      fields.customAttributes && Object.keys(fields.customAttributes).length > 0
        ? fields.customAttributes
        : undefined,
    callCount: 0,
    createdAt: now,
    updatedAt: now,
  }) as ContactRecord;
}

/**
 * Inserts a new contact; when its phone number or email address is taken, the contact that has it.
 * Concurrent inserts of one number: one is written, the others see its id.
 */
async function insertContact(
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

// ── Bulk creation, for imports ──────────────────────────────────────────────────────────────────────

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
 * (functions/contacts/imports.ts: importedContactId), so a key that points at it tells that an
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

/** Creates a contact (free of charge); 409 `DuplicateContactError` with the id of the one that has the number or address. */
export async function createContact(
  workspaceId: string,
  input: ContactInput,
  options: { country: string },
): Promise<Contact> {
  const fields = newContactFields(input, options.country);
  const record = newRecord(workspaceId, fields, clock.now().toISOString());
  const announced = await announcingCreation(record);
  const inserted = await insertContact(record, announced.extras);
  if ('taken' in inserted) throw new DuplicateContactError(inserted.taken.contactId, inserted.taken.field);
  await announced.publish();
  return inserted.created;
}

/**
 * `contact.created` (functions/platform/workspace-events.ts) for a contact created one at a time:
 * `createContact` always (POST …/contacts), `ensureContact` and `mergeContact` when their caller
 * asks (`publishCreated: true`; its function must declare `sendsTo: ['workspaceEvents']`). Bulk
 * loads — contact imports, integration syncs — publish none: a 50,000-row import would otherwise be
 * 50,000 webhook deliveries and workflow runs. The event is recorded in the contact's own
 * transaction (an outbox item, functions/platform/outbox.ts) and published once it is written: a
 * contact is never created without its event, and a failed send is the outbox sweep's to retry, not
 * the caller's error. The event id is the contact's, so a second send is the same event.
 *
 * Returns the extra item for `record`'s transaction and what publishes it after; both do nothing
 * when the workspace is unknown (gone, or a contact written outside any workspace: nobody to tell).
 */
async function announcingCreation(
  record: ContactRecord,
  extras: Extras = () => [],
): Promise<{ extras: Extras; publish: () => Promise<void> }> {
  const organisationId = await organisationOf(record.workspaceId);
  if (!organisationId) {
    logger.warn('contact.created not recorded: the workspace is unknown', {
      workspaceId: record.workspaceId,
    });
    return { extras, publish: async () => {} };
  }
  const created = finalRecord(undefined, record) as Contact;
  const event: OutboxRecord = outboxRecord({
    id: `evt_contact_created_${record.contactId}`,
    type: 'contact.created',
    workspaceId: record.workspaceId,
    organisationId,
    occurredAt: record.createdAt,
    data: { contact_id: record.contactId, ...contactView(created) },
  });
  return {
    extras: (tx) => [...extras(tx), { kind: 'outbox', item: tx.outboxEvent.create(event).commit() }],
    publish: async () => {
      await publishRecorded([event]);
    },
  };
}

/** A workspace's organisation never changes: read once per workspace and process. */
const organisations = new Map<string, string>();
async function organisationOf(workspaceId: string): Promise<string | undefined> {
  const known = organisations.get(workspaceId);
  if (known) return known;
  const { data } = await WorkspaceEntity.get({ workspaceId }).go();
  if (!data) return undefined;
  organisations.set(workspaceId, data.organisationId);
  return data.organisationId;
}

export interface MergeOutcome {
  outcome: 'created' | 'merged';
  contact: Contact;
  /** Fields given that stayed as they were because another contact has the value. */
  skipped: ('phone' | 'email')[];
  /** Whether `alsoWrite`'s items were written with the contact (not when the contact did not change). */
  recorded: boolean;
}

/** The items a caller writes with the contact of a merge (an import's row outcome). */
export type AlsoWrite = (tx: TxEntities, outcome: 'created' | 'merged', contactId: string) => TxItem[];

const ALSO = 'also';

/** An item of `alsoWrite` was refused by its condition (an import's row outcome written already). */
export class AlsoWriteRefused extends Error {
  override readonly name = 'AlsoWriteRefused';
  constructor() {
    super('an item written with the contact was refused by its condition');
  }
}

/**
 * For imports: the contact with this phone number (else this email address) gets the given fields
 * it has no value for — a name, a phone or email nobody else has, a timezone, tags and attribute
 * keys it lacks — and nothing it has is overwritten (contactability and source included); a new
 * contact is created when none matches.
 */
export async function mergeContact(
  workspaceId: string,
  input: ContactInput,
  options: {
    country: string;
    /**
     * Items written in the same transaction as the contact, when it is created or changed; one
     * refused by its condition throws AlsoWriteRefused.
     */
    alsoWrite?: AlsoWrite;
    /** Publish `contact.created` when a contact is created (not for bulk loads: imports, syncs). */
    publishCreated?: boolean;
    /**
     * The id of the contact it creates (an import row's, the same on every receive). A match with
     * this id, or this contact existing already, is `created`: an earlier receive created it.
     */
    contactId?: string;
  },
): Promise<MergeOutcome> {
  const fields = newContactFields(input, options.country);
  const { alsoWrite } = options;
  const extrasFor =
    (outcome: 'created' | 'merged', contactId: string): Extras =>
    (tx) =>
      (alsoWrite?.(tx, outcome, contactId) ?? []).map((item) => ({ kind: ALSO, item }));
  for (let attempt = 0; attempt < MAX_TRIES; attempt += 1) {
    const match =
      (fields.phone ? await findContactByPhone(workspaceId, fields.phone) : null) ??
      (fields.email ? await findContactByEmail(workspaceId, fields.email) : null);
    if (match && match.contactId === options.contactId)
      return { outcome: 'created', contact: match, skipped: [], recorded: false };
    if (!match) {
      if (options.contactId) {
        const own = await getContact(workspaceId, options.contactId);
        if (own) return { outcome: 'created', contact: own, skipped: [], recorded: false };
      }
      const record = newRecord(workspaceId, fields, clock.now().toISOString(), options.contactId);
      const also = extrasFor('created', record.contactId);
      const announced = options.publishCreated
        ? await announcingCreation(record, also)
        : { extras: also, publish: async () => {} };
      const inserted = await insertContact(record, announced.extras);
      if ('created' in inserted) {
        await announced.publish();
        return { outcome: 'created', contact: inserted.created, skipped: [], recorded: true };
      }
      continue; // created meanwhile by someone else: merge into theirs
    }
    const skipped: ('phone' | 'email')[] = [];
    const written = { recorded: false };
    const contact = await fillEmptyFields(
      workspaceId,
      match.contactId,
      fields,
      skipped,
      extrasFor('merged', match.contactId),
      written,
    );
    if (contact) return { outcome: 'merged', contact, skipped, recorded: written.recorded };
  }
  throw new Error('could not merge the contact (it kept changing); try again');
}

async function fillEmptyFields(
  workspaceId: string,
  contactId: string,
  fields: NewContactFields,
  skipped: ('phone' | 'email')[],
  extras?: Extras,
  written: { recorded: boolean } = { recorded: false },
): Promise<Contact | undefined> {
  const skip = new Set<'phone' | 'email'>();
  try {
    for (;;) {
      const result = await changeContact<'written' | 'unchanged' | 'again'>(
        workspaceId,
        contactId,
        (current) => {
          const changes: Partial<ContactRecord> = {};
          // Each name is filled when empty ("" is empty); a last name only onto the same first name
          // (or none), so that two people's names are never joined.
          if (isBlank(current.firstName) && fields.firstName) changes.firstName = fields.firstName;
          const sameFirst =
            isBlank(current.firstName) ||
            current.firstName!.trim().toLowerCase() === fields.firstName?.trim().toLowerCase();
          if (isBlank(current.lastName) && fields.lastName && sameFirst) changes.lastName = fields.lastName;
          if (isBlank(current.phone) && fields.phone && !skip.has('phone')) changes.phone = fields.phone;
          if (isBlank(current.email) && fields.email && !skip.has('email')) changes.email = fields.email;
          if (isBlank(current.timezone) && fields.timezone) changes.timezone = fields.timezone;
          if (isBlank(current.integrationName) && fields.integrationName && current.source === 'Integration')
            changes.integrationName = fields.integrationName;
          const tags = [...(current.tags ?? [])];
          const keys = new Set(tags.map((t) => t.toLowerCase()));
          for (const tag of fields.tags ?? []) {
            if (!keys.has(tag.toLowerCase())) {
              tags.push(tag);
              keys.add(tag.toLowerCase());
            }
          }
          if (tags.length !== (current.tags ?? []).length) {
            changes.tags = tags.slice(0, MAX_TAGS);
            changes.tagKeys = tagKeysOf(changes.tags);
          }
          const attributes = attributesOf(current.customAttributes);
          const missing = Object.entries(fields.customAttributes ?? {}).filter(([key]) =>
            isBlank(attributes[key]),
          );
          if (missing.length > 0)
            changes.customAttributes = { ...attributes, ...Object.fromEntries(missing) };
          if (Object.keys(changes).length === 0) return { write: false, result: 'unchanged' };
          return {
            write: true,
            changes: { ...changes, updatedAt: clock.now().toISOString() },
            extras,
            result: 'written',
            onRefused: ({ field, kind }) => {
              if (kind === ALSO) throw new AlsoWriteRefused();
              if (!field) return 'unchanged';
              skip.add(field);
              return 'again';
            },
          };
        },
      );
      if (result === 'written') written.recorded = extras !== undefined;
      if (result !== 'again') break;
    }
  } catch (error) {
    if (error instanceof ContactGone) return undefined; // deleted meanwhile: found or made again
    throw error;
  }
  skipped.push(...skip);
  return (await getContact(workspaceId, contactId)) ?? undefined;
}

// ── The API's changes ───────────────────────────────────────────────────────────────────────────────

/** 404 `Contact not found` for a contact that does not exist (any more). */
async function orNotFound<T>(change: Promise<T>): Promise<T> {
  try {
    return await change;
  } catch (error) {
    if (error instanceof ContactGone) throw notFound(CONTACT_NOT_FOUND);
    throw error;
  }
}

/** Applies a PATCH: 422 when it leaves neither phone nor email; 409 when the phone or email is another contact's. */
export async function updateContact(
  workspaceId: string,
  contactId: string,
  input: UpdateContactBody,
  options: { country: string },
): Promise<Contact> {
  const body = parseOrThrow(UpdateContactBody, input, 'body');
  if (!isId('contact', contactId)) throw notFound(CONTACT_NOT_FOUND);
  const phone =
    body.phone === undefined
      ? undefined
      : body.phone === null
        ? null
        : phoneIn(body.phone, options.country, ['body', 'phone']);
  await orNotFound(
    changeContact(workspaceId, contactId, (current) => {
      const changes: Partial<ContactRecord> = {};
      if (body.first_name !== undefined) changes.firstName = body.first_name || undefined;
      if (body.last_name !== undefined) changes.lastName = body.last_name || undefined;
      if (phone !== undefined) changes.phone = phone ?? undefined;
      if (body.email !== undefined) changes.email = body.email ?? undefined;
      if (body.contactability !== undefined)
        changes.contactability = contactabilityLabel(body.contactability);
      if (body.tags !== undefined) {
        changes.tags = body.tags.length > 0 ? body.tags : undefined;
        changes.tagKeys = tagKeysOf(body.tags);
      }
      if (body.attributes !== undefined) {
        const merged: Record<string, string> = attributesOf(current.customAttributes);
        for (const [key, value] of Object.entries(body.attributes)) {
          // One key per attribute however it is spelt; "" (or blank) removes it, as null does.
          const name = normaliseAttributeKey(key);
          if (value === null || !value.trim()) delete merged[name];
          else merged[name] = value;
        }
        if (Object.keys(merged).length > MAX_ATTRIBUTES) {
          throw new ValidationError([
            {
              type: 'value_error',
              loc: ['body', 'attributes'],
              msg: `Value error, a contact has at most ${MAX_ATTRIBUTES} attributes`,
              input: body.attributes,
            },
          ]);
        }
        changes.customAttributes = Object.keys(merged).length > 0 ? merged : undefined;
      }
      if (body.timezone !== undefined) changes.timezone = body.timezone ?? undefined;
      const next = { ...current, ...changes };
      if (!next.phone && !next.email) {
        throw new ValidationError([
          { type: 'value_error', loc: ['body'], msg: `Value error, ${NEEDS_PHONE_OR_EMAIL}`, input },
        ]);
      }
      const changed = (Object.keys(changes) as (keyof ContactRecord)[]).some(
        (key) => JSON.stringify(changes[key]) !== JSON.stringify(current[key as keyof Contact]),
      );
      if (!changed) return { write: false, result: undefined };
      return {
        write: true,
        changes: { ...changes, updatedAt: clock.now().toISOString() },
        result: undefined,
      };
    }),
  );
  return requireContact(workspaceId, contactId);
}

/** Deletes a contact with its phone/email keys and search entries (one transaction), then its notes and call links. */
export async function deleteContact(workspaceId: string, contactId: string): Promise<void> {
  if (!isId('contact', contactId)) throw notFound(CONTACT_NOT_FOUND);
  for (let attempt = 0; ; attempt += 1) {
    const current = await getContact(workspaceId, contactId);
    if (!current) throw notFound(CONTACT_NOT_FOUND);
    const result = await contactsService.transaction
      .write((tx) => [
        tx.contact
          .delete({ workspaceId, contactId })
          .where((attr, op) =>
            current.version === undefined
              ? `${op.exists(attr.createdAt)} AND ${op.notExists(attr.version)}`
              : op.eq(attr.version, current.version),
          )
          .commit(),
        ...(current.phone ? [tx.contactPhone.delete({ workspaceId, phone: current.phone }).commit()] : []),
        ...(current.email ? [tx.contactEmail.delete({ workspaceId, email: current.email }).commit()] : []),
        ...(current.searchTokens ?? []).map((token) =>
          tx.contactSearch.delete({ workspaceId, token, contactId }).commit(),
        ),
      ])
      .go();
    if (!result.canceled) break;
    if (attempt >= MAX_TRIES) throw new Error(`contact ${contactId} kept changing; try again`);
    await backOff(attempt);
  }
  // Notes are written only while the contact exists (a condition on it), so none can follow these.
  const notes = await ContactNoteEntity.query.byContact({ workspaceId, contactId }).go({ pages: 'all' });
  await deleteAll(
    (keys) => ContactNoteEntity.delete(keys).go(),
    notes.data.map(({ noteId }) => ({ workspaceId, contactId, noteId })),
  );
  const calls = await ContactCallEntity.query.byContact({ workspaceId, contactId }).go({ pages: 'all' });
  await deleteAll(
    (keys) => ContactCallEntity.delete(keys).go(),
    calls.data.map(({ callId }) => ({ workspaceId, contactId, callId })),
  );
}

async function deleteAll<K>(
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

const contactConversions = onFirstUse(() => createConversions(ContactEntity));
const searchConversions = onFirstUse(() => createConversions(ContactSearchEntity));

// ── Lists ───────────────────────────────────────────────────────────────────────────────────────────

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

// ── The post-call pipeline's changes ────────────────────────────────────────────────────────────────

/**
 * The contact with this phone number (or, failing that, this email address), created when none
 * matches. An email-only contact that matches by email gets the phone number added instead of a
 * second contact being made.
 */
export async function ensureContact(
  workspaceId: string,
  input: { phone?: string; email?: string; name?: string; source: ContactSource },
  /** `publishCreated`: publish `contact.created` when the contact is created (see announcingCreation). */
  options: { publishCreated?: boolean } = {},
): Promise<{ contact: Contact; created: boolean }> {
  const phone = normalisePhone(input.phone);
  const email = normaliseEmail(input.email);
  if (!phone && !email) throw new Error(NEEDS_PHONE_OR_EMAIL);
  for (let attempt = 0; attempt < MAX_TRIES; attempt += 1) {
    if (phone) {
      const byPhone = await findContactByPhone(workspaceId, phone);
      if (byPhone) return { contact: byPhone, created: false };
    }
    if (email) {
      const byEmail = await findContactByEmail(workspaceId, email);
      if (byEmail) {
        if (phone && !byEmail.phone) await attachPhone(workspaceId, byEmail.contactId, phone);
        const contact = (await getContact(workspaceId, byEmail.contactId)) ?? byEmail;
        return { contact, created: false };
      }
    }
    const { firstName, lastName } = namesOf({ name: input.name?.trim().slice(0, 200) });
    const now = clock.now().toISOString();
    const record = newRecord(
      workspaceId,
      {
        firstName: firstName || undefined,
        lastName: lastName || undefined,
        phone,
        email,
        contactability: 'Contactable',
        source: input.source,
      },
      now,
    );
    const announced = options.publishCreated ? await announcingCreation(record) : undefined;
    const inserted = await insertContact(record, announced?.extras);
    if ('created' in inserted) {
      await announced?.publish();
      return { contact: inserted.created, created: true };
    }
    // Another writer took the number or the address first: look again and use theirs.
  }
  throw new Error('could not find or create the contact (keys kept changing)');
}

/** Gives a contact without a phone number this one, unless another contact has it. */
async function attachPhone(workspaceId: string, contactId: string, phone: string): Promise<boolean> {
  try {
    return await changeContact(workspaceId, contactId, (current) =>
      current.phone
        ? { write: false, result: false }
        : {
            write: true,
            changes: { phone, updatedAt: clock.now().toISOString() },
            result: true,
            onRefused: () => false,
          },
    );
  } catch (error) {
    if (error instanceof ContactGone) return false;
    throw error;
  }
}

/**
 * Gives a contact this email address when it has none and no other contact has it.
 * `taken`: another contact has it (nothing changes: no duplicates by email).
 */
export async function setEmailIfFree(
  workspaceId: string,
  contactId: string,
  email: string,
): Promise<'set' | 'unchanged' | 'taken' | 'invalid'> {
  const normalised = normaliseEmail(email);
  if (!normalised) return 'invalid';
  return changeContact<'set' | 'unchanged' | 'taken'>(workspaceId, contactId, (contact) =>
    contact.email
      ? { write: false, result: 'unchanged' }
      : {
          write: true,
          changes: { email: normalised, updatedAt: clock.now().toISOString() },
          result: 'set',
          onRefused: async () => {
            const owner = await ownerOf(workspaceId, 'email', normalised);
            return owner && owner !== contactId ? 'taken' : 'unchanged';
          },
        },
  );
}

/** Sets the name when the contact has none (a name typed by a person is never overwritten). */
export async function setNameIfMissing(
  workspaceId: string,
  contactId: string,
  name: string,
): Promise<boolean> {
  const trimmed = name.trim().slice(0, 200);
  if (!trimmed) return false;
  const { firstName, lastName } = namesOf({ name: trimmed });
  return changeContact(workspaceId, contactId, (current) =>
    current.firstName !== undefined || current.lastName !== undefined || current.name
      ? { write: false, result: false }
      : {
          write: true,
          changes: {
            firstName: firstName.slice(0, 100) || undefined,
            lastName: lastName.slice(0, 100) || undefined,
            updatedAt: clock.now().toISOString(),
          },
          result: true,
        },
  );
}

/**
 * Records a call on the contact, once per call (a call link created with "does not exist" in the same
 * transaction): the call count goes up, the "last call" fields and `last_contacted_at` follow the most
 * recent call even when calls are processed out of order, and `note` (the call's summary) becomes a
 * `post_call` note on the contact, also once.
 */
export async function recordCallOnContact(
  workspaceId: string,
  contactId: string,
  call: { callId: string; at: string; sentiment?: string; summary?: string; note?: string },
): Promise<{ counted: boolean }> {
  const noteId = newId('note');
  const noteText = call.note?.trim().slice(0, 500);
  return changeContact<{ counted: boolean }>(workspaceId, contactId, (current) => {
    const now = clock.now().toISOString();
    const latest = !current.lastCallAt || current.lastCallAt <= call.at;
    const changes: Partial<ContactRecord> = {
      callCount: (current.callCount ?? 0) + 1,
      updatedAt: now,
      lastContactedAt:
        current.lastContactedAt && current.lastContactedAt > call.at ? current.lastContactedAt : call.at,
    };
    if (latest) {
      changes.lastCallId = call.callId;
      changes.lastCallAt = call.at;
      if (call.sentiment) changes.lastCallSentiment = call.sentiment;
      if (call.summary) changes.lastCallSummary = call.summary.slice(0, 1000);
    }
    return {
      write: true,
      changes,
      result: { counted: true },
      extras: (tx) => [
        {
          kind: 'call',
          item: tx.contactCall.create({ workspaceId, contactId, callId: call.callId, at: call.at }).commit(),
        },
        ...(noteText
          ? [
              {
                kind: 'note',
                item: tx.contactNote
                  .create({
                    workspaceId,
                    contactId,
                    noteId,
                    text: noteText,
                    channel: 'post_call' as const,
                    authorId: 'system',
                    callId: call.callId,
                    createdAt: now,
                    updatedAt: now,
                  })
                  .commit(),
              },
            ]
          : []),
      ],
      // The call link exists: this call was recorded already (with its note).
      onRefused: () => ({ counted: false }),
    };
  });
}

export type ProfileFacts = Record<string, unknown>;

/**
 * Merges enrichment facts into the contact's profile (lists are merged without duplicates, other
 * values replaced), conditioned on the contact not having changed since it was read.
 */
export async function mergeProfile(
  workspaceId: string,
  contactId: string,
  facts: ProfileFacts,
): Promise<ProfileFacts> {
  return changeContact(workspaceId, contactId, (current) => {
    const merged = mergeFacts((current.profile ?? {}) as ProfileFacts, facts);
    const now = clock.now().toISOString();
    return {
      write: true,
      changes: { profile: merged, profileUpdatedAt: now, updatedAt: now },
      result: merged,
    };
  });
}

export function mergeFacts(before: ProfileFacts, facts: ProfileFacts): ProfileFacts {
  const merged: ProfileFacts = { ...before };
  for (const [key, value] of Object.entries(facts)) {
    if (value === undefined || value === null) continue;
    const previous = merged[key];
    if (Array.isArray(value) && Array.isArray(previous)) {
      const seen = new Set(previous.map((v) => JSON.stringify(v)));
      merged[key] = [...previous, ...value.filter((v) => !seen.has(JSON.stringify(v)))];
    } else {
      merged[key] = value;
    }
  }
  return merged;
}

/** The wire shape used inside post-call records and payloads. */
export function contactSummary(contact: Contact) {
  return {
    contact_id: contact.contactId,
    name: contact.name ?? null,
    phone: contact.phone ?? null,
    email: contact.email ?? null,
  };
}
