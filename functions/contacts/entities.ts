import type { EntityItem } from 'electrodb';
import { Entity, Service } from '../platform/entity.js';
import { HttpError } from '../platform/errors.js';
import { legacyLayoutInUse, moveUntilDone, type MoveTarget } from '../platform/key-moves.js';
import { entityConfig, entityKey, queryStoredItems, type StoredItem } from '../platform/table.js';
import { primaryIndex } from '../platform/keys.js';
import { OutboxEventEntity } from '../platform/outbox.js';
import { CONTACTABILITY, NOTE_CHANNELS } from './model.js';

/**
 * Contacts of a workspace, their notes, and the organisation's suppression (do-not-call) list.
 *
 * Access patterns (key → use):
 *   contact        pk WS#<ws>                  sk CONTACT#<ct>                 get by id; the list without `q`
 *                                                                             (newest first; filters in the query)
 *   phone key      pk WS#<ws>                  sk CONTACTPHONE#<e164>          contact by phone; at most one
 *   email key      pk WS#<ws>                  sk CONTACTEMAIL#<lower email>   contact by email; at most one
 *   call link      pk WS#<ws>#CONTACT#<ct>     sk CONTACTCALL#<call>           a call counted once per contact
 *   call summary   pk WS#<ws>#CONTACT#<ct>     sk CONTACTCALLS                 its call count, last call and
 *                                                                             `last_contacted_at`: merged into
 *                                                                             the contact as read (call-summary.ts)
 *   note           pk WS#<ws>#CONTACT#<ct>     sk CONTACTNOTE#<note>           a contact's notes, newest first
 *   (a contact's call links, notes and call summary have its own key: every call's post-call change
 *   wrote a link and a note under `WS#<ws>` and rewrote the contact item there and its search entries
 *   at `WS#<ws>#CONTACTSEARCH` — one key per workspace, not per contact — docs/scale.md; now a call
 *   writes only these three. Links and notes written before are at `WS#<ws>` / `CONTACTCALL#<ct>#…`,
 *   `CONTACTNOTE#<ct>#…` until `migrate calls` moves them, or a read of the contact's moves them first.
 *   A contact's call fields written before stay on the contact item: read as they are while it has no
 *   summary, and they seed the summary at its next call; nothing to migrate.)
 *   search entry   pk WS#<ws>#CONTACTSEARCH    sk <token>#<ct>                 the list with `q`: one Query,
 *                                                                             begins_with(<normalised q>)
 *   suppression    pk ORG#<org>                sk SUPPRESSED#<e164>            is this number do-not-call; the list
 *
 * Invariants, all by conditions in one transaction (functions/contacts/writes.ts):
 * - A contact and its phone/email keys are written together; a key is created with "does not exist",
 *   so two contacts never share a phone number or an email address (concurrent creates: one wins).
 *   Changing a contact's phone or email deletes the old key and creates the new one in the same
 *   transaction as the contact.
 * - Every contact write is conditioned on the `version` it read (absent on contacts written before
 *   versions existed) and rewrites the contact's search entries in the same transaction, so the
 *   entries always show the contact as it is. One exception, for speed: a contact an import creates
 *   (bulk-creation.ts: createImportedContacts) is written with its keys in a transaction, and its entries
 *   right after in batch writes (in a transaction an item costs DynamoDB about three times as much);
 *   the contacts are then read again, and one written meanwhile (version > 1) has its entries
 *   rewritten from it. So for a few milliseconds a new imported contact is not found by `q`.
 *
 * Search entries (why, and what they cost). `q` is a prefix of the first name, the last name, the
 * full name, the email address or the phone number (E.164 digits, or national digits with or without
 * the trunk prefix), case- and accent-insensitive. Every contact has one entry per distinct
 * normalised token (functions/contacts/search.ts: at most ~7), each a copy of the fields a list
 * shows, in a partition of the workspace's own, sorted by token. So a search page is ONE Query
 * (begins_with on the sort key), with the filters (contactability, source, tag) in its filter
 * expression; the API's list then reads the page's call summaries (one BatchGetItem) for
 * `last_contacted_at`, which a call no longer writes on the contact or its entries. The price: a
 * contact write also rewrites its entries (up to ~7 more items in the transaction), and the entries
 * take that much more storage. The alternatives were weighed: entries holding only the
 * contact id cost a BatchGet per page (two round trips); one GSI per field cannot serve "name OR
 * phone OR email" with one Query; a Scan with a filter reads the whole workspace.
 * A contact matched by two of its tokens (`sam` matches first name `Sam` and `sam@x.com`) must be
 * listed once: its tokens are stored sorted, a token that is a prefix of another of the same contact
 * is dropped (every query matching it matches the longer one), and each entry carries `lcpPrev`, the
 * length of the common prefix with the contact's previous token. Two tokens of one contact that both
 * start with q are neighbours in the sorted order, so an entry is a repeat exactly when
 * `lcpPrev >= length(q)`, which the filter expression drops.
 *
 * Migration: attributes were only added (first/last name, tags, attributes, timezone, version, …).
 * Contacts written before them read as before (`name` split into first and last name; `source` and
 * `contactability` keep the stored labels). They get search entries on their next write, or from
 * `reindexContacts` (list.ts), which rewrites every contact of a workspace once.
 */
const cfg = entityConfig();

export { CONTACTABILITY, CONTACT_SOURCES, NOTE_CHANNELS } from './model.js';
export type { Contactability, ContactSource, NoteChannel } from './model.js';

/** What a list shows of a contact: on the contact, and copied onto each of its search entries. */
const LISTED = {
  firstName: { type: 'string' },
  lastName: { type: 'string' },
  /** The full name ("first last"); contacts made before first/last names existed have only this. */
  name: { type: 'string' },
  /** E.164. A contact may have an email only. */
  phone: { type: 'string' },
  /** Lower-cased. */
  email: { type: 'string' },
  source: { type: 'string', required: true },
  /** The integration's name, when `source` is `Integration`. */
  integrationName: { type: 'string' },
  contactability: { type: CONTACTABILITY, required: true, default: 'Contactable' },
  tags: { type: 'list', items: { type: 'string' } },
  /** The tags lower-cased: the `tag` filter matches case-insensitively. */
  tagKeys: { type: 'list', items: { type: 'string' } },
  /** The contact's custom attributes, string to string (`attributes` on the wire). */
  customAttributes: { type: 'any' },
  /** IANA time zone. */
  timezone: { type: 'string' },
  lastContactedAt: { type: 'string' },
  createdAt: { type: 'string', required: true },
  updatedAt: { type: 'string' },
} as const;

export const ContactEntity = new Entity(
  {
    model: { entity: 'contact', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      contactId: { type: 'string', required: true },
      ...LISTED,
      /** Facts gathered by profile enrichment (intent, budget, listings of interest, …). */
      profile: { type: 'any' },
      profileUpdatedAt: { type: 'string' },
      callCount: { type: 'number', required: true, default: 0 },
      lastCallId: { type: 'string' },
      lastCallAt: { type: 'string' },
      lastCallSentiment: { type: 'string' },
      lastCallSummary: { type: 'string' },
      /** The tokens of the search entries written for this contact (to delete them when they change). */
      searchTokens: { type: 'list', items: { type: 'string' } },
      /** Raised by every write, which is conditioned on the value it read. */
      version: { type: 'number' },
    },
    indexes: {
      byId: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['contactId'], 'CONTACT#${contactId}'),
    },
  },
  cfg,
);

export const ContactPhoneEntity = new Entity(
  {
    model: { entity: 'contactPhone', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      phone: { type: 'string', required: true },
      contactId: { type: 'string', required: true },
    },
    indexes: {
      byPhone: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['phone'], 'CONTACTPHONE#${phone}'),
    },
  },
  cfg,
);

export const ContactEmailEntity = new Entity(
  {
    model: { entity: 'contactEmail', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      email: { type: 'string', required: true },
      contactId: { type: 'string', required: true },
    },
    indexes: {
      byEmail: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['email'], 'CONTACTEMAIL#${email}'),
    },
  },
  cfg,
);

/**
 * A contact's calls in one item at the contact's key (see the key table): written by every call's
 * post-call `contact_update` (functions/contacts/call-summary.ts) instead of the contact item, so a
 * call writes nothing at the workspace's key or its search key. Absent until the first call recorded
 * after it existed: the contact item's own call fields show until then, and seed it.
 */
export const ContactCallSummaryEntity = new Entity(
  {
    model: { entity: 'contactCallSummary', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      contactId: { type: 'string', required: true },
      callCount: { type: 'number', required: true },
      lastCallId: { type: 'string' },
      lastCallAt: { type: 'string' },
      lastCallSentiment: { type: 'string' },
      lastCallSummary: { type: 'string' },
      /** The latest call's time, or the contact's own `lastContactedAt` when that was later. */
      lastContactedAt: { type: 'string' },
      updatedAt: { type: 'string', required: true },
      /** Raised by every write, which is conditioned on the value it read (or on no summary yet). */
      version: { type: 'number', required: true },
    },
    indexes: {
      byContact: primaryIndex(
        ['workspaceId', 'contactId'],
        'WS#${workspaceId}#CONTACT#${contactId}',
        [],
        'CONTACTCALLS',
      ),
    },
  },
  cfg,
);

export const ContactCallEntity = new Entity(
  {
    model: { entity: 'contactCall', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      contactId: { type: 'string', required: true },
      callId: { type: 'string', required: true },
      at: { type: 'string', required: true },
    },
    indexes: {
      byContact: primaryIndex(
        ['workspaceId', 'contactId'],
        'WS#${workspaceId}#CONTACT#${contactId}',
        ['callId'],
        'CONTACTCALL#${callId}',
      ),
    },
  },
  cfg,
);

/** One search token of a contact, with a copy of what the list shows (see the comment at the top). */
export const ContactSearchEntity = new Entity(
  {
    model: { entity: 'contactSearch', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      /** Normalised (functions/contacts/search.ts): never contains `#`. */
      token: { type: 'string', required: true },
      contactId: { type: 'string', required: true },
      /** Length of the common prefix with the contact's previous token (sorted); 0 for the first. */
      lcpPrev: { type: 'number', required: true },
      ...LISTED,
    },
    indexes: {
      byToken: primaryIndex(
        ['workspaceId'],
        'WS#${workspaceId}#CONTACTSEARCH',
        ['token', 'contactId'],
        '${token}#${contactId}',
      ),
    },
  },
  cfg,
);

export const ContactNoteEntity = new Entity(
  {
    model: { entity: 'contactNote', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      contactId: { type: 'string', required: true },
      noteId: { type: 'string', required: true },
      text: { type: 'string', required: true },
      channel: { type: NOTE_CHANNELS, required: true, default: 'direct' },
      /** `usr_…`, `key_…`, or `system` (a note the post-call pipeline wrote). */
      authorId: { type: 'string', required: true },
      /** The call a post-call note is about. */
      callId: { type: 'string' },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string' },
    },
    indexes: {
      byContact: primaryIndex(
        ['workspaceId', 'contactId'],
        'WS#${workspaceId}#CONTACT#${contactId}',
        ['noteId'],
        'CONTACTNOTE#${noteId}',
      ),
    },
  },
  cfg,
);

/** A number of the organisation's suppression (do-not-call) list. */
export const SuppressionEntity = new Entity(
  {
    model: { entity: 'suppression', version: '1', service: 'va' },
    attributes: {
      organisationId: { type: 'string', required: true },
      /** E.164. */
      phone: { type: 'string', required: true },
      reason: { type: 'string' },
      /** `usr_…` of who added it. */
      createdBy: { type: 'string' },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string' },
    },
    indexes: {
      byOrganisation: primaryIndex(
        ['organisationId'],
        'ORG#${organisationId}',
        ['phone'],
        'SUPPRESSED#${phone}',
      ),
    },
  },
  cfg,
);

/**
 * Contact imports (functions/contacts/imports.ts).
 *
 *   import job     pk WS#<ws>                  sk CONTACTIMPORT#<job>            get; the list, newest first
 *   chunk done     pk WS#<ws>                  sk CONTACTIMPORTCHUNK#<job>#<n>   counted once; its first errors
 *   row outcome    pk WS#<ws>#IMPORT#<job>     sk ROW#<row, 8 digits>            a campaign upload's row decided
 *                                                                                once (TTL 30 d)
 *
 * A contact import writes nothing per row but the contacts: the contact a row creates has the id
 * importedContactId(job, row), the same on every receive, so a receive after a crash (or a second
 * one) tells the rows it created (a contact with that id, or a key pointing at it) from the rows
 * merged into another contact, and rejected rows depend on the row alone. The chunk's counts and its
 * rejected rows' reasons are added to the job in one transaction with the chunk's record, created
 * with "does not exist". So a redelivered or interrupted chunk never counts a row twice, and an
 * imported contact costs 3 items in a transaction (contact, phone key, email key) and its search
 * entries in batch writes — not a row record, nor its entries in the transaction (about 3x dearer).
 *
 * A campaign's upload (functions/campaigns/uploads.ts) writes a row outcome record per row instead,
 * created with "does not exist" in the transaction of what the row writes; its chunk's counts are
 * summed from them.
 */
export const CONTACT_IMPORT_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export type ContactImportStatus = (typeof CONTACT_IMPORT_STATUSES)[number];

export const ContactImportEntity = new Entity(
  {
    model: { entity: 'contactImport', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      jobId: { type: 'string', required: true },
      format: { type: ['csv', 'vcf'] as const, required: true },
      fileName: { type: 'string' },
      status: { type: CONTACT_IMPORT_STATUSES, required: true },
      /** The uploaded file in the bucket. */
      objectKey: { type: 'string', required: true },
      /** The workspace's country when the job was made: national numbers are read in it. */
      country: { type: 'string', required: true },
      createdBy: { type: 'string', required: true },
      /** A campaign's upload (functions/campaigns/uploads.ts): its rows became batch contacts. */
      campaignId: { type: 'string' },
      /** Set once by the planning step: data rows and chunks. */
      total: { type: 'number' },
      chunks: { type: 'number' },
      chunksDone: { type: 'number', required: true, default: 0 },
      created: { type: 'number', required: true, default: 0 },
      merged: { type: 'number', required: true, default: 0 },
      rejected: { type: 'number', required: true, default: 0 },
      /** Rows taken with a warning (a contact import's dropped field, an upload's missing parameter). */
      warned: { type: 'number' },
      failureReason: { type: 'string' },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string', required: true },
      completedAt: { type: 'string' },
    },
    indexes: {
      byId: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['jobId'], 'CONTACTIMPORT#${jobId}'),
    },
  },
  cfg,
);

export const ContactImportChunkEntity = new Entity(
  {
    model: { entity: 'contactImportChunk', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      jobId: { type: 'string', required: true },
      /** Zero-padded to 6 digits. */
      chunk: { type: 'string', required: true },
      created: { type: 'number', required: true },
      merged: { type: 'number', required: true },
      rejected: { type: 'number', required: true },
      /** The chunk's first rejected rows: [{row, reason}]. */
      errors: { type: 'any' },
      /** The chunk's first rows taken with a warning: [{row, reason}] (a contact import's). */
      warnings: { type: 'any' },
      /** A campaign upload's rows without a `{{parameter}}` of the agent's prompt: {name: [row, …]}. */
      missingParameters: { type: 'any' },
    },
    indexes: {
      byJob: primaryIndex(
        ['workspaceId'],
        'WS#${workspaceId}',
        ['jobId', 'chunk'],
        'CONTACTIMPORTCHUNK#${jobId}#${chunk}',
      ),
    },
  },
  cfg,
);

export const ContactImportRowEntity = new Entity(
  {
    model: { entity: 'contactImportRow', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      jobId: { type: 'string', required: true },
      /** The data row (1 = the first after the header), zero-padded to 8 digits. */
      row: { type: 'string', required: true },
      outcome: { type: ['created', 'merged', 'rejected'] as const, required: true },
      reason: { type: 'string' },
      contactId: { type: 'string' },
      /** A campaign upload's row taken without these `{{parameters}}` of the agent's prompt. */
      missingParameters: { type: 'list', items: { type: 'string' } },
      expiresAt: { type: 'number', required: true, field: 'expires_at' },
    },
    indexes: {
      byJob: primaryIndex(
        ['workspaceId', 'jobId'],
        'WS#${workspaceId}#IMPORT#${jobId}',
        ['row'],
        'ROW#${row}',
      ),
    },
  },
  cfg,
);

export const contactsService = new Service(
  {
    contact: ContactEntity,
    contactPhone: ContactPhoneEntity,
    contactEmail: ContactEmailEntity,
    contactCall: ContactCallEntity,
    contactCallSummary: ContactCallSummaryEntity,
    contactSearch: ContactSearchEntity,
    contactNote: ContactNoteEntity,
    contactImport: ContactImportEntity,
    contactImportChunk: ContactImportChunkEntity,
    contactImportRow: ContactImportRowEntity,
    /** `contact.created`, recorded with the contact it announces (functions/platform/outbox.ts). */
    outboxEvent: OutboxEventEntity,
  },
  cfg,
);

export const readContact = (workspaceId: string, contactId: string) =>
  ContactEntity.get({ workspaceId, contactId }).go({ consistent: true });
export type Contact = NonNullable<Awaited<ReturnType<typeof readContact>>['data']>;
export type ContactSearchEntry = EntityItem<typeof ContactSearchEntity>;
export type ContactNote = EntityItem<typeof ContactNoteEntity>;
export type ContactCallSummary = EntityItem<typeof ContactCallSummaryEntity>;
export type Suppression = EntityItem<typeof SuppressionEntity>;
export type ContactImport = EntityItem<typeof ContactImportEntity>;
export type ContactImportRow = EntityItem<typeof ContactImportRowEntity>;

/** Where a call link or note found at the workspace's key belongs now. */
export const contactItemTarget = (item: StoredItem): MoveTarget => {
  const workspaceId = item.workspaceId as string;
  const contactId = item.contactId as string;
  return {
    key: entityKey(
      item.__edb_e__ === 'contactNote'
        ? ContactNoteEntity.get({ workspaceId, contactId, noteId: item.noteId as string }).params()
        : ContactCallEntity.get({ workspaceId, contactId, callId: item.callId as string }).params(),
    ),
  };
};

/** A request moves this many of a contact's items at most (each a transaction): well within its function's time. */
export const CONTACT_MOVES_PER_REQUEST = 100;
export const CONTACT_ITEMS_MOVING =
  "This contact's notes are being moved to their new place; please try again in a moment.";

/**
 * Moves a contact's call links and notes still at the workspace's key (written before they had the
 * contact's, until `migrate calls` has run): one Query of the old key's range, then each moved. At
 * most CONTACT_MOVES_PER_REQUEST a request: a contact with more answers 503 (Retry-After 1) until a
 * request finds none left, so a listing is never partial and no request runs past its time.
 */
export async function moveLegacyContactItems(workspaceId: string, contactId: string): Promise<void> {
  if (!(await legacyLayoutInUse())) return;
  let moved = 0;
  for (const kind of ['CONTACTCALL', 'CONTACTNOTE']) {
    let next: Record<string, unknown> | undefined;
    do {
      const page = await queryStoredItems({
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
        ExpressionAttributeValues: { ':pk': `WS#${workspaceId}`, ':prefix': `${kind}#${contactId}#` },
        ConsistentRead: true,
        Limit: CONTACT_MOVES_PER_REQUEST - moved + 1,
        ...(next ? { ExclusiveStartKey: next } : {}),
      });
      for (const item of page.items) {
        if (moved === CONTACT_MOVES_PER_REQUEST)
          throw new HttpError(503, CONTACT_ITEMS_MOVING, { 'retry-after': '1' });
        await moveUntilDone(item, contactItemTarget);
        moved += 1;
      }
      next = page.next;
    } while (next);
  }
}
