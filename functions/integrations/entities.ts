import type { EntityItem } from 'electrodb';
import { Entity, Service } from '../platform/entity.js';
import { gsi1, primaryIndex } from '../platform/keys.js';
import { entityConfig } from '../platform/table.js';
import { CRM_PROVIDERS, INTEGRATION_STATUSES, JOB_KINDS, JOB_STATUSES, JOB_TRIGGERS } from './model.js';

/**
 * Integrations (a CRM a workspace reads listings and contacts from) and their sync jobs.
 *
 * Access patterns (key → use):
 *   integration   pk WS#<ws>                 sk INT#<int>                get by id; the workspace's list
 *                 gsi1pk INTEGRATIONS        gsi1sk <ws>#<int>           every integration (the schedule)
 *   sync job      pk WS#<ws>                 sk INTJOB#<int>#<job>       get by id; an integration's jobs, newest first
 *
 * Invariants (sync.ts): an integration runs at most one job at a time (`activeJobId`, set with the
 * job's create in one transaction, conditioned on none running); a page's effects are written before
 * its cursor is committed, and the commit (the job's cursor and counts and the integration's cursor,
 * one transaction) is conditioned on the cursor the page was read from, so a page received twice is
 * counted once.
 */
const cfg = entityConfig();

export const IntegrationEntity = new Entity(
  {
    model: { entity: 'integration', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      integrationId: { type: 'string', required: true },
      provider: { type: CRM_PROVIDERS, required: true },
      name: { type: 'string', required: true },
      config: { type: 'any', required: true },
      status: { type: INTEGRATION_STATUSES, required: true },
      /** The listings base it made at its first connect. */
      knowledgeBaseId: { type: 'string' },
      /** Where the next sync reads the CRM's feed from (committed page by page). */
      cursor: { type: 'string' },
      /** The first full sync completed: later syncs publish listing.sold. */
      initialSyncDone: { type: 'boolean' },
      activeJobId: { type: 'string' },
      lastSync: { type: 'any' },
      connectedAt: { type: 'string' },
      disconnectedAt: { type: 'string' },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string', required: true },
      /** The schedule's index (one partition: integrations are few). */
      scheduleKey: { type: 'string', required: true, default: 'INTEGRATIONS' },
    },
    indexes: {
      byId: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['integrationId'], 'INT#${integrationId}'),
      all: gsi1(
        ['scheduleKey'],
        '${scheduleKey}',
        ['workspaceId', 'integrationId'],
        '${workspaceId}#${integrationId}',
      ),
    },
  },
  cfg,
);

export const SyncJobEntity = new Entity(
  {
    model: { entity: 'integrationSyncJob', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      integrationId: { type: 'string', required: true },
      jobId: { type: 'string', required: true },
      kind: { type: JOB_KINDS, required: true },
      trigger: { type: JOB_TRIGGERS, required: true },
      status: { type: JOB_STATUSES, required: true },
      /** The feed position the job started from and the one after its last committed page. */
      startCursor: { type: 'string' },
      cursor: { type: 'string' },
      pages: { type: 'number', required: true, default: 0 },
      records: { type: 'number', required: true, default: 0 },
      remaining: { type: 'number' },
      listings: { type: 'number', required: true, default: 0 },
      listingsCreated: { type: 'number', required: true, default: 0 },
      contacts: { type: 'number', required: true, default: 0 },
      contactsCreated: { type: 'number', required: true, default: 0 },
      contactsMerged: { type: 'number', required: true, default: 0 },
      rejected: { type: 'number', required: true, default: 0 },
      listingSold: { type: 'number', required: true, default: 0 },
      /** Listings deleted in the CRM, removed from the listings base. */
      listingsDeleted: { type: 'number', default: 0 },
      /** Contacts deleted in the CRM: counted, and the workspace's contacts kept (see sync.ts). */
      contactsDeleted: { type: 'number', default: 0 },
      cursorResets: { type: 'number', required: true, default: 0 },
      /** Failed reads of the CRM in a row (reset by a committed page). */
      attempts: { type: 'number', required: true, default: 0 },
      retries: { type: 'number', required: true, default: 0 },
      lastError: { type: 'string' },
      failureReason: { type: 'string' },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string', required: true },
      completedAt: { type: 'string' },
    },
    indexes: {
      byIntegration: primaryIndex(
        ['workspaceId'],
        'WS#${workspaceId}',
        ['integrationId', 'jobId'],
        'INTJOB#${integrationId}#${jobId}',
      ),
    },
  },
  cfg,
);

/**
 * What one record of a page did, written once it is applied (created with "does not exist"): a page
 * read again after a crash skips the records marked, and the page's counts are summed from its marks,
 * so a record is counted once.
 */
export const SyncRecordEntity = new Entity(
  {
    model: { entity: 'integrationSyncRecord', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      jobId: { type: 'string', required: true },
      /** `<page, 6 digits>#<index in the page, 4 digits>` */
      record: { type: 'string', required: true },
      outcome: {
        type: [
          'listing_created',
          'listing_updated',
          'contact_created',
          'contact_merged',
          'listing_deleted',
          'contact_deleted',
          'rejected',
        ] as const,
        required: true,
      },
      /** This record published listing.sold. */
      sold: { type: 'boolean' },
      /** The contact it created or merged into. */
      contactId: { type: 'string' },
      /** The page announces `contact.created` for `contactId` (the sync created it). */
      announce: { type: 'boolean' },
      expiresAt: { type: 'number', required: true, field: 'expires_at' },
    },
    indexes: {
      byJob: primaryIndex(
        ['workspaceId', 'jobId'],
        'WS#${workspaceId}#INTJOB#${jobId}',
        ['record'],
        'REC#${record}',
      ),
    },
  },
  cfg,
);
export type SyncRecord = EntityItem<typeof SyncRecordEntity>;

export const integrationsService = new Service(
  { integration: IntegrationEntity, syncJob: SyncJobEntity },
  cfg,
);

export type Integration = EntityItem<typeof IntegrationEntity>;
export type SyncJob = EntityItem<typeof SyncJobEntity>;
