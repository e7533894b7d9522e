import * as z from 'zod';
import { labelText } from '../platform/validation.js';
import { ListQuery, pageOf } from '../platform/pagination.js';
import { CRM_PROVIDERS, INTEGRATION_STATUSES, JOB_KINDS, JOB_STATUSES, JOB_TRIGGERS } from './model.js';
import { schemaOnFirstUse } from '../platform/first-use.js';

/**
 * Request and response shapes of the integration routes. `config` is checked against the provider's
 * own schema (functions/providers/crm/index.ts): `demo_crm` `{account?}`, `hubspot` `{account,
 * listing_object_type?}`.
 */

export const CreateIntegrationBody = schemaOnFirstUse(() =>
  z.strictObject({
    provider: z.enum(CRM_PROVIDERS),
    /** The label of the contacts it brings (their source_label) and of its listings base. */
    name: labelText().min(1).max(100),
    config: z.record(z.string(), z.unknown()).default({}),
  }),
);

export const SyncCounts = schemaOnFirstUse(() =>
  z.object({
    /** Changes read from the CRM. */
    total: z.number(),
    listings: z.number(),
    listings_created: z.number(),
    contacts: z.number(),
    contacts_created: z.number(),
    contacts_merged: z.number(),
    /** Contacts with neither a valid phone number nor a valid email address. */
    rejected: z.number(),
    listing_sold_events: z.number(),
    /** Listings deleted in the CRM: removed from the listings knowledge base. */
    listings_deleted: z.number(),
    /**
     * Contacts deleted in the CRM: counted only. The workspace's contact stays (it may have calls,
     * notes, campaigns and consent of its own; a CRM's delete is not the workspace's).
     */
    contacts_deleted: z.number(),
  }),
);

export const LastSync = schemaOnFirstUse(() =>
  z
    .object({
      job_id: z.string(),
      status: z.enum(JOB_STATUSES),
      completed_at: z.string().nullable(),
      counts: SyncCounts,
    })
    .nullable(),
);

export const IntegrationResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    workspace_id: z.string(),
    provider: z.enum(CRM_PROVIDERS),
    name: z.string(),
    config: z.record(z.string(), z.unknown()),
    status: z.enum(INTEGRATION_STATUSES),
    knowledge_base_id: z.string().nullable(),
    last_sync: LastSync,
    active_job_id: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);
export const IntegrationList = pageOf(IntegrationResponse);

export const SyncJobResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    job_id: z.string(),
    integration_id: z.string(),
    kind: z.enum(JOB_KINDS),
    trigger: z.enum(JOB_TRIGGERS),
    status: z.enum(JOB_STATUSES),
    /** Changes read so far, and those read plus those the CRM says are left. */
    progress: z.object({ done: z.number(), total: z.number() }),
    counts: SyncCounts,
    pages: z.number(),
    /** Reads of the CRM that failed and were tried again. */
    retries: z.number(),
    /** Times the CRM handed back a cursor behind the one asked from (its changes were read again, harmlessly). */
    cursor_resets: z.number(),
    last_error: z.string().nullable(),
    failure_reason: z.string().nullable(),
    created_at: z.string(),
    completed_at: z.string().nullable(),
  }),
);
export const SyncJobList = pageOf(SyncJobResponse);
export const JobListQuery = ListQuery;
