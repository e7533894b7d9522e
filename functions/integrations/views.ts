import type { Integration, SyncJob } from './entities.js';

/** Wire shapes (snake_case) of integrations and their sync jobs. */

export function countsOf(job: SyncJob) {
  return {
    total: job.records,
    listings: job.listings,
    listings_created: job.listingsCreated,
    contacts: job.contacts,
    contacts_created: job.contactsCreated,
    contacts_merged: job.contactsMerged,
    rejected: job.rejected,
    listing_sold_events: job.listingSold,
    listings_deleted: job.listingsDeleted ?? 0,
    contacts_deleted: job.contactsDeleted ?? 0,
  };
}

export function syncJobView(job: SyncJob) {
  const done = job.records;
  return {
    id: job.jobId,
    job_id: job.jobId,
    integration_id: job.integrationId,
    kind: job.kind,
    trigger: job.trigger,
    status: job.status,
    progress: { done, total: job.status === 'processing' ? done + (job.remaining ?? 0) : done },
    counts: countsOf(job),
    pages: job.pages,
    retries: job.retries,
    cursor_resets: job.cursorResets,
    last_error: job.lastError ?? null,
    failure_reason: job.failureReason ?? null,
    created_at: job.createdAt,
    completed_at: job.completedAt ?? null,
  };
}

export type LastSyncRecord = ReturnType<typeof lastSyncOf>;

export const lastSyncOf = (job: SyncJob) => ({
  job_id: job.jobId,
  status: job.status,
  completed_at: job.completedAt ?? null,
  counts: countsOf(job),
});

export function integrationView(integration: Integration) {
  return {
    id: integration.integrationId,
    workspace_id: integration.workspaceId,
    provider: integration.provider,
    name: integration.name,
    config: (integration.config ?? {}) as Record<string, unknown>,
    status: integration.status,
    knowledge_base_id: integration.knowledgeBaseId ?? null,
    last_sync: (integration.lastSync as LastSyncRecord | undefined) ?? null,
    active_job_id: integration.activeJobId ?? null,
    created_at: integration.createdAt,
    updated_at: integration.updatedAt,
  };
}
