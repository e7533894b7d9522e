/** Values of integrations and their sync jobs (no entities here: the route declarations import it). */
export { CRM_PROVIDERS, type CrmProviderName } from '../providers/crm/index.js';

export const INTEGRATION_STATUSES = ['created', 'connected', 'disconnected'] as const;
export type IntegrationStatus = (typeof INTEGRATION_STATUSES)[number];

export const JOB_STATUSES = ['processing', 'completed', 'failed'] as const;
export type SyncJobStatus = (typeof JOB_STATUSES)[number];

/** `initial`: a first-time connect's full sync (no listing.sold events); `incremental`: every other. */
export const JOB_KINDS = ['initial', 'incremental'] as const;
export const JOB_TRIGGERS = ['connect', 'sync', 'schedule'] as const;
export type SyncTrigger = (typeof JOB_TRIGGERS)[number];
