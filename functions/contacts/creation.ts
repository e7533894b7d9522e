import { WorkspaceEntity } from '../access/entities.js';
import { clock } from '../platform/clock.js';
import { logger } from '../platform/logger.js';
import { outboxRecord, publishRecorded, type OutboxRecord } from '../platform/outbox.js';
import type { Contact } from './entities.js';
import { newContactFields, newRecord, tagKeysOf, type NewContactFields } from './input.js';
import { DuplicateContactError, findContactByEmail, findContactByPhone, getContact } from './lookup.js';
import { MAX_TAGS, type ContactInput } from './schemas.js';
import { attributesOf, contactView } from './views.js';
import {
  ALSO,
  AlsoWriteRefused,
  changeContact,
  ContactGone,
  finalRecord,
  insertContact,
  isBlank,
  MAX_TRIES,
  type ContactRecord,
  type Extras,
  type TxEntities,
  type TxItem,
} from './writes.js';

/**
 * Contacts created or merged one at a time. For imports and syncs (CSV, vCard, CRMs):
 * `createContact` (409 `DuplicateContactError` when the number or address is taken), `mergeContact`
 * (find by phone, then email; fill only empty fields; `created | merged`) and `validateContactInput`
 * (input.ts: check a row without writing).
 */

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
export async function announcingCreation(
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
