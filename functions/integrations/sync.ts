import { createHash } from 'node:crypto';
import { WorkspaceEntity, workspaceCountry } from '../access/entities.js';
import { ContactEntity, type Contact } from '../contacts/entities.js';
import type { ContactInput } from '../contacts/schemas.js';
import { mergeContact } from '../contacts/creation.js';
import { validateContactInput } from '../contacts/input.js';
import { normaliseEmail } from '../contacts/lookup.js';
import { contactView, sourceLabel } from '../contacts/views.js';
import {
  listingByExternalId,
  listingItemId,
  removeListing,
  touchBase,
  upsertListing,
} from '../knowledge/service.js';
import { fullAddress } from '../knowledge/views.js';
import { clock } from '../platform/clock.js';
import { logger } from '../platform/logger.js';
import { toE164InCountry } from '../platform/phone.js';
import { isConditionFailure } from '../platform/table.js';
import {
  publishWorkspaceEvent,
  publishWorkspaceEvents,
  type NewWorkspaceEvent,
} from '../platform/workspace-events.js';
import { crmProvider, type CrmContact, type CrmListing, type CrmRecord } from '../providers/crm/index.js';
import {
  IntegrationEntity,
  SyncJobEntity,
  SyncRecordEntity,
  integrationsService,
  type Integration,
  type SyncJob,
  type SyncRecord,
} from './entities.js';
import { getIntegration, getJob, sendPage } from './service.js';
import { lastSyncOf } from './views.js';

/**
 * A sync job, page by page on the `integrations` queue (one message per page, each safe to receive
 * twice or after a crash):
 *
 * 1. The job stops (failed, with the reason) when its integration was disconnected or deleted.
 * 2. It reads one page of the CRM's change feed from the job's cursor. A read that fails (a timeout,
 *    a 500) is tried again at once twice more; then the page's message is sent again with a growing
 *    delay (2 s, 4 s … 60 s; `retries` counts every failed read); after MAX_ATTEMPTS such rounds the job fails
 *    (the next sync starts from the last committed cursor, nothing lost).
 * 3. It applies the page's records in feed order, each idempotent on its own, and marks each one
 *    applied with its outcome (a page read again after a crash skips the marked ones): a listing is written
 *    to the integration's listings base by its external id (the same item every time); a contact is
 *    merged into the workspace's contacts by phone number, then email (source `integration`, label
 *    the integration's name; only empty fields are filled). A listing that is `sold` with a sale the
 *    item has not recorded (`soldKey`: the CRM's sold_at) publishes ONE `listing.sold` event, whose id
 *    is derived from the listing and the sale (`evt_listing_sold_<item>_<sale>`), BEFORE the item
 *    records the sale: a crash in between publishes the same event again, which receivers drop. The
 *    initial sync of a first-time connect records sales without publishing. A listing deleted in the
 *    CRM is removed from the listings base (with its references; a second removal finds nothing). A
 *    contact deleted in the CRM is counted (`contacts_deleted`) and nothing else: the workspace's
 *    contact stays — it may hold calls, notes, campaign history and consent of its own, it may have
 *    been merged with one the workspace made itself, and a CRM clean-up is not the workspace's
 *    decision (a user deletes it through the API when they mean to).
 * 3b. Contacts the sync CREATED (not merged) are announced with `contact.created`, as a contact made
 *    through the API is (workflows and webhook endpoints listen to it): each such record's mark
 *    carries the contact id, and before the page commits, the page's marked contacts are published
 *    in batches (`publishWorkspaceEvents`) with the id the contacts domain uses
 *    (`evt_contact_created_<contact>`). A page received again after a crash publishes them again
 *    with the same ids, which receivers drop; a crash between a contact's create and its mark leaves
 *    the record to be merged on the next receive into the contact it created, which is recognised
 *    (source `integration`, this integration's label, created since the job started) and announced.
 * 4. It commits the page: the job's cursor, page and counts (summed from the page's marks) and the
 *    integration's cursor, in one transaction conditioned on the job's cursor and page count being
 *    still those the page was read at (a page received twice is counted once). A crash between a
 *    record's effect and its mark applies that record again (idempotent) and counts it as an update.
 * 5. The next page's message, or, after the last page, the job completes: the integration records it
 *    as `last_sync` (an initial sync marks the initial sync done), the running job is cleared and the
 *    listings base is re-indexed.
 *
 * A cursor that goes backwards (the CRM hands back a position behind the one asked from: restored,
 * or replaying) is followed: the changes read again are applied again, harmlessly (the same items,
 * merged contacts, no second event for a recorded sale), and counted in `cursor_resets`; a CRM that
 * keeps going backwards (more than MAX_CURSOR_RESETS times in one job) fails the job.
 */

export const PAGE_SIZE = 100;
const MAX_ATTEMPTS = 6;
const MAX_CURSOR_RESETS = 5;
const INLINE_TRIES = 3;

export interface SyncHooks {
  /** Test hook: throw after this many records of the page were applied (a crash half-way). */
  failAfterRecords?: number;
  /** Test hook: throw after applying this record of the page (its index), before marking it. */
  failBeforeMark?: number;
}

const now = () => clock.now().toISOString();

async function failJob(job: SyncJob, reason: string): Promise<string> {
  const at = now();
  const { workspaceId, integrationId, jobId } = job;
  const result = await integrationsService.transaction
    .write(({ syncJob }) => [
      syncJob
        .patch({ workspaceId, integrationId, jobId })
        .set({ status: 'failed', failureReason: reason, updatedAt: at, completedAt: at })
        .where((attr, op) => op.eq(attr.status, 'processing'))
        .commit(),
    ])
    .go();
  if (result.canceled) return 'job ended already';
  const failed = await getJob(job.workspaceId, job.integrationId, job.jobId);
  if (failed) await finishRelease(failed);
  return `failed: ${reason}`;
}

/** The integration forgets its running job and records how it ended. */
async function releaseIntegration(job: SyncJob, extra: { initialSyncDone?: boolean } = {}): Promise<void> {
  try {
    await IntegrationEntity.patch({ workspaceId: job.workspaceId, integrationId: job.integrationId })
      .set({ lastSync: lastSyncOf(job), updatedAt: now(), ...extra })
      .remove(['activeJobId'])
      .where((attr, op) => op.eq(attr.activeJobId, job.jobId))
      .go();
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

const saleKeyOf = (listing: CrmListing): string | undefined =>
  listing.status === 'sold' ? (listing.sold_at ?? 'sold') : undefined;

export const listingSoldEventId = (itemId: string, saleKey: string): string =>
  `evt_listing_sold_${itemId}_${createHash('sha256').update(saleKey).digest('hex').slice(0, 16)}`;

type Outcome = {
  outcome: SyncRecord['outcome'];
  sold?: boolean;
  contactId?: string;
  /** Announce `contact.created` for contactId. */
  announce?: boolean;
};

async function applyListing(integration: Integration, job: SyncJob, listing: CrmListing): Promise<Outcome> {
  const kb = { workspaceId: integration.workspaceId, knowledgeBaseId: integration.knowledgeBaseId! };
  if (!listing.external_id || !listing.address) return { outcome: 'rejected' };
  let sold = false;
  const existing = await listingByExternalId(kb, listing.external_id);
  const saleKey = saleKeyOf(listing);
  const fields = {
    externalId: listing.external_id,
    address: listing.address.slice(0, 300),
    suburb: listing.suburb,
    state: listing.state,
    postcode: listing.postcode,
    priceText: listing.price_text,
    listingStatus: listing.status,
    bedrooms: listing.bedrooms,
    bathrooms: listing.bathrooms,
    description: listing.description,
    integrationId: integration.integrationId,
  };
  if (saleKey && existing?.soldKey !== saleKey) {
    const itemId = existing?.itemId ?? listingItemId(kb.knowledgeBaseId, listing.external_id);
    if (job.kind === 'incremental') {
      await publishWorkspaceEvent({
        id: listingSoldEventId(itemId, saleKey),
        type: 'listing.sold',
        workspaceId: integration.workspaceId,
        organisationId: integration.organisationId,
        occurredAt: listing.sold_at,
        data: {
          listing_id: itemId,
          knowledge_base_id: kb.knowledgeBaseId,
          integration_id: integration.integrationId,
          integration_name: integration.name,
          external_id: listing.external_id,
          address: fields.address,
          full_address: fullAddress(fields),
          suburb: listing.suburb ?? null,
          state: listing.state ?? null,
          postcode: listing.postcode ?? null,
          price_text: listing.price_text ?? null,
          sold_at: listing.sold_at ?? null,
        },
      });
      sold = true;
    }
  }
  const { created } = await upsertListing(kb, { ...fields, soldKey: saleKey ?? existing?.soldKey });
  return { outcome: created ? 'listing_created' : 'listing_updated', sold };
}

async function applyContact(
  integration: Integration,
  job: SyncJob,
  country: string,
  contact: CrmContact,
): Promise<Outcome> {
  const phone = contact.phone && toE164InCountry(contact.phone, country) ? contact.phone : undefined;
  const email = contact.email && normaliseEmail(contact.email) ? contact.email.trim() : undefined;
  if (!phone && !email) return { outcome: 'rejected' };
  const input = {
    first_name: contact.first_name?.slice(0, 100),
    last_name: contact.last_name?.slice(0, 100),
    phone,
    email,
    source: 'integration',
    source_label: integration.name,
  } as ContactInput;
  if (!validateContactInput(input, country).ok) return { outcome: 'rejected' };
  const merged = await mergeContact(integration.workspaceId, input, { country });
  const { contactId } = merged.contact;
  if (merged.outcome === 'created') return { outcome: 'contact_created', contactId, announce: true };
  // A contact this job created, its mark lost to a crash (or the same person again in the feed):
  // announced again under the same event id, which receivers drop when they had it.
  const ours =
    merged.contact.source === sourceLabel('integration') &&
    merged.contact.integrationName === integration.name &&
    merged.contact.createdAt >= job.createdAt;
  return { outcome: 'contact_merged', contactId, ...(ours ? { announce: true } : {}) };
}

async function applyRecord(
  integration: Integration,
  job: SyncJob,
  country: string,
  record: CrmRecord,
): Promise<Outcome> {
  switch (record.kind) {
    case 'listing':
      return applyListing(integration, job, record.listing);
    case 'contact':
      return applyContact(integration, job, country, record.contact);
    case 'listing_deleted': {
      if (!record.external_id) return { outcome: 'rejected' };
      const kb = { workspaceId: integration.workspaceId, knowledgeBaseId: integration.knowledgeBaseId! };
      await removeListing(kb, record.external_id);
      return { outcome: 'listing_deleted' };
    }
    case 'contact_deleted':
      return { outcome: 'contact_deleted' };
  }
}

/** `contact.created` for the contacts a page created (its marks say which), ten to a request. */
async function announceCreatedContacts(integration: Integration, marks: SyncRecord[]): Promise<void> {
  const ids = [...new Set(marks.flatMap((m) => (m.announce && m.contactId ? [m.contactId] : [])))];
  if (ids.length === 0) return;
  const contacts: Contact[] = [];
  for (let i = 0; i < ids.length; i += 100) {
    const { data, unprocessed } = await ContactEntity.get(
      ids.slice(i, i + 100).map((contactId) => ({ workspaceId: integration.workspaceId, contactId })),
    ).go({ consistent: true });
    if (unprocessed.length > 0)
      throw new Error(`${unprocessed.length} contacts not read: try the page again`);
    contacts.push(...(data as Contact[]));
  }
  const events: NewWorkspaceEvent[] = contacts.map((contact) => ({
    id: `evt_contact_created_${contact.contactId}`,
    type: 'contact.created',
    workspaceId: contact.workspaceId,
    organisationId: integration.organisationId,
    occurredAt: contact.createdAt,
    data: { contact_id: contact.contactId, ...contactView(contact) },
  }));
  await publishWorkspaceEvents(events);
}

const RECORD_DAYS = 30;
const pagePrefix = (page: number) => `${String(page).padStart(6, '0')}#`;
const recordKey = (page: number, index: number) => `${pagePrefix(page)}${String(index).padStart(4, '0')}`;

/** The marks of a page's records (those applied), read consistently. */
async function pageMarks(job: SyncJob, page: number): Promise<SyncRecord[]> {
  const { data } = await SyncRecordEntity.query
    .byJob({ workspaceId: job.workspaceId, jobId: job.jobId })
    .begins({ record: pagePrefix(page) })
    .go({ pages: 'all', consistent: true });
  return data;
}

async function mark(job: SyncJob, page: number, index: number, outcome: Outcome): Promise<void> {
  try {
    await SyncRecordEntity.create({
      workspaceId: job.workspaceId,
      jobId: job.jobId,
      record: recordKey(page, index),
      outcome: outcome.outcome,
      ...(outcome.sold ? { sold: true } : {}),
      ...(outcome.contactId ? { contactId: outcome.contactId } : {}),
      ...(outcome.announce ? { announce: true } : {}),
      expiresAt: Math.floor(clock.now().getTime() / 1000) + RECORD_DAYS * 86_400,
    }).go();
  } catch (error) {
    if (!isConditionFailure(error)) throw error; // marked by another receive: the first mark stands
  }
}

function countMarks(marks: SyncRecord[]) {
  const n = (outcome: SyncRecord['outcome']) => marks.filter((m) => m.outcome === outcome).length;
  return {
    listings: n('listing_created') + n('listing_updated'),
    listingsCreated: n('listing_created'),
    contacts: n('contact_created') + n('contact_merged'),
    contactsCreated: n('contact_created'),
    contactsMerged: n('contact_merged'),
    rejected: n('rejected'),
    listingSold: marks.filter((m) => m.sold).length,
    listingsDeleted: n('listing_deleted'),
    contactsDeleted: n('contact_deleted'),
  };
}

/** One page of a job (see above). Returns what it did, for the log. */
export async function syncPage(
  workspaceId: string,
  integrationId: string,
  jobId: string,
  hooks: SyncHooks = {},
): Promise<string> {
  const job = await getJob(workspaceId, integrationId, jobId);
  if (!job) return 'no such job';
  const integration = await getIntegration(workspaceId, integrationId);
  if (job.status !== 'processing') {
    // Ended, but the integration may not have heard (a crash right after): tell it again.
    if (integration?.activeJobId === jobId) await finishRelease(job);
    return 'not processing';
  }
  if (!integration) return failJob(job, 'the integration was deleted');
  if (integration.status !== 'connected') return failJob(job, 'the integration was disconnected');
  if (integration.activeJobId !== jobId) return failJob(job, 'another sync of the integration took over');
  if (!integration.knowledgeBaseId) return failJob(job, 'the integration has no listings knowledge base');

  const provider = crmProvider(integration.provider, integration.config as Record<string, unknown>);
  let page: Awaited<ReturnType<typeof provider.readChanges>> | undefined;
  let lastError = '';
  let failedReads = 0;
  for (let i = 0; i < INLINE_TRIES && !page; i += 1) {
    try {
      page = await provider.readChanges({ cursor: job.cursor ?? null, limit: PAGE_SIZE });
    } catch (error) {
      failedReads += 1;
      lastError = String((error as Error).message ?? error).slice(0, 300);
      logger.warn('CRM read failed', { integrationId, jobId, error: lastError });
      if (i < INLINE_TRIES - 1) await new Promise((resolve) => setTimeout(resolve, 250 * (i + 1)));
    }
  }
  if (!page) {
    const attempts = job.attempts + 1;
    if (attempts >= MAX_ATTEMPTS)
      return failJob(job, `the CRM did not answer after ${attempts} tries: ${lastError}`);
    await SyncJobEntity.patch({ workspaceId, integrationId, jobId })
      .set({ attempts, lastError, updatedAt: now() })
      .add({ retries: failedReads })
      .go();
    await sendPage(job, Math.min(60, 2 ** attempts));
    return `CRM read failed (${attempts} of ${MAX_ATTEMPTS}); tried again later`;
  }

  const { data: workspace } = await WorkspaceEntity.get({ workspaceId }).go();
  const country = workspace ? workspaceCountry(workspace) : 'AU';
  const pageNo = job.pages;
  const marked = new Set((await pageMarks(job, pageNo)).map((m) => m.record));
  let applied = 0;
  for (const [index, record] of (page.records as CrmRecord[]).entries()) {
    if (marked.has(recordKey(pageNo, index))) continue; // applied before a crash
    if (hooks.failAfterRecords !== undefined && applied >= hooks.failAfterRecords)
      throw new Error('test hook: the sync page fails half-way');
    const outcome = await applyRecord(integration, job, country, record);
    if (hooks.failBeforeMark === index) throw new Error('test hook: the sync page fails before a mark');
    await mark(job, pageNo, index, outcome);
    applied += 1;
  }
  const marks = (await pageMarks(job, pageNo)).filter(
    (m) => Number(m.record.slice(pagePrefix(pageNo).length)) < page.records.length,
  );
  if (marks.length !== page.records.length)
    throw new Error(
      `page ${pageNo} of job ${jobId}: ${marks.length} of ${page.records.length} records marked`,
    );
  const counts = countMarks(marks);
  await announceCreatedContacts(integration, marks);

  const backwards = job.cursor !== undefined && provider.compareCursors(page.cursor, job.cursor) < 0;
  if (backwards && job.cursorResets + 1 > MAX_CURSOR_RESETS)
    return failJob(job, `the CRM's cursor went backwards ${job.cursorResets + 1} times`);
  const at = now();
  const result = await integrationsService.transaction
    .write(({ syncJob, integration: tx }) => [
      syncJob
        .patch({ workspaceId, integrationId, jobId })
        .set({
          cursor: page.cursor,
          attempts: 0,
          remaining: page.remaining ?? 0,
          updatedAt: at,
          ...(lastError ? { lastError } : {}),
        })
        .add({
          retries: failedReads,
          pages: 1,
          records: page.records.length,
          ...counts,
          cursorResets: backwards ? 1 : 0,
        })
        .where((attr, op) =>
          [
            op.eq(attr.status, 'processing'),
            job.cursor === undefined ? op.notExists(attr.cursor) : op.eq(attr.cursor, job.cursor),
            op.eq(attr.pages, job.pages),
          ].join(' AND '),
        )
        .commit(),
      tx
        .patch({ workspaceId, integrationId })
        .set({ cursor: page.cursor, updatedAt: at })
        .where((attr, op) => op.eq(attr.activeJobId, jobId))
        .commit(),
    ])
    .go();
  if (result.canceled) return 'page committed already (a redelivery)';
  if (page.more && (page.records.length > 0 || page.cursor !== job.cursor)) {
    await sendPage(job);
    return `page ${job.pages + 1}: ${page.records.length} changes; more to read`;
  }
  return completeJob(job);
}

/**
 * The job completes and the integration records it in one transaction, so no reader sees a completed
 * job while its integration still holds it. When the transaction is refused (the integration no
 * longer holds the job, or a concurrent write on it), the job completes alone and the integration is
 * released if it still holds it.
 */
async function completeJob(job: SyncJob): Promise<string> {
  const { workspaceId, integrationId, jobId } = job;
  const at = now();
  const current = await getJob(workspaceId, integrationId, jobId);
  if (!current || current.status !== 'processing') return 'job ended already';
  const ended = { status: 'completed' as const, completedAt: at, updatedAt: at, remaining: 0 };
  const completed: SyncJob = { ...current, ...ended };
  const { canceled } = await integrationsService.transaction
    .write(({ syncJob, integration }) => [
      syncJob
        .patch({ workspaceId, integrationId, jobId })
        .set(ended)
        .where((attr, op) => op.eq(attr.status, 'processing'))
        .commit(),
      integration
        .patch({ workspaceId, integrationId })
        .set({
          lastSync: lastSyncOf(completed),
          updatedAt: at,
          ...(completed.kind === 'initial' ? { initialSyncDone: true } : {}),
        })
        .remove(['activeJobId'])
        .where((attr, op) => op.eq(attr.activeJobId, jobId))
        .commit(),
    ])
    .go();
  if (canceled) {
    try {
      await SyncJobEntity.patch({ workspaceId, integrationId, jobId })
        .set(ended)
        .where((attr, op) => op.eq(attr.status, 'processing'))
        .go({ response: 'none' });
    } catch (error) {
      if (isConditionFailure(error)) return 'job ended already';
      throw error;
    }
    // Canceled by a concurrent write on the integration, not by its release: release it now.
    await releaseIntegration(completed, completed.kind === 'initial' ? { initialSyncDone: true } : {});
  }
  const integration = await getIntegration(workspaceId, integrationId);
  if (integration?.knowledgeBaseId) await touchBase(workspaceId, integration.knowledgeBaseId);
  return `completed: ${completed.records} changes in ${completed.pages} pages`;
}

/** After a job ended: the integration records it (an initial sync that completed marks the initial sync done). */
async function finishRelease(job: SyncJob): Promise<void> {
  const initialDone = job.status === 'completed' && job.kind === 'initial';
  await releaseIntegration(job, initialDone ? { initialSyncDone: true } : {});
  if (job.status !== 'completed') return;
  const integration = await getIntegration(job.workspaceId, job.integrationId);
  if (integration?.knowledgeBaseId) await touchBase(job.workspaceId, integration.knowledgeBaseId);
}
