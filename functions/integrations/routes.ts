import { defineRoute } from '../platform/http/route.js';
import * as pagination from '../platform/pagination.js';
import * as s from './schemas.js';

const INTEGRATIONS = '/api/v1/workspaces/{workspace_id}/integrations';
const INTEGRATION = `${INTEGRATIONS}/{integration_id}`;

/**
 * Integrations (plan feature `integrations`: writes are 402 without it; reads still work). Workspace:
 * any role reads, members and admins write; API keys with `integrations:read` / `integrations:write`.
 */
export const integrationRoutes = {
  createIntegration: defineRoute({
    method: 'POST',
    path: INTEGRATIONS,
    summary: 'Create an integration',
    description:
      'Add an integration: {provider: demo_crm | hubspot, name, config} (demo_crm: {account?}; hubspot: {account, ' +
      'listing_object_type?}, its token in the crm secret). It reads nothing until connected (member)',
    auth: 'user_or_api_key',
    scope: 'integrations:write',
    body: s.CreateIntegrationBody,
    response: s.IntegrationResponse,
    errors: { 402: 'Your plan does not include integrations' },
    access: { table: 'readwrite' },
  }),
  listIntegrations: defineRoute({
    method: 'GET',
    path: INTEGRATIONS,
    summary: 'List integrations',
    description: 'The workspace’s integrations, oldest first (viewer)',
    auth: 'user_or_api_key',
    scope: 'integrations:read',
    query: pagination.ListQuery,
    response: s.IntegrationList,
    access: { table: 'readwrite' },
  }),
  getIntegration: defineRoute({
    method: 'GET',
    path: INTEGRATION,
    summary: 'Get an integration',
    description: 'An integration with its last sync (viewer)',
    auth: 'user_or_api_key',
    scope: 'integrations:read',
    response: s.IntegrationResponse,
    access: { table: 'readwrite' },
  }),
  deleteIntegration: defineRoute({
    method: 'DELETE',
    path: INTEGRATION,
    summary: 'Delete an integration',
    description:
      'Delete an integration: it syncs no more; its listings knowledge base and contacts stay (member)',
    auth: 'user_or_api_key',
    scope: 'integrations:write',
    successStatus: 204,
    access: { table: 'readwrite' },
  }),
  listIntegrationJobs: defineRoute({
    method: 'GET',
    path: `${INTEGRATION}/jobs`,
    summary: "List an integration's sync jobs",
    description: 'An integration’s sync jobs, newest first (viewer)',
    auth: 'user_or_api_key',
    scope: 'integrations:read',
    query: s.JobListQuery,
    response: s.SyncJobList,
    access: { table: 'readwrite' },
  }),
  getIntegrationJob: defineRoute({
    method: 'GET',
    path: `${INTEGRATION}/jobs/{job_id}`,
    summary: 'Get an integration sync job',
    description:
      'A sync job: status (processing, completed, failed), progress {done, total} in changes read, counts, ' +
      'retries of CRM reads, failure_reason (viewer)',
    auth: 'user_or_api_key',
    scope: 'integrations:read',
    response: s.SyncJobResponse,
    access: { table: 'readwrite' },
  }),
  connectIntegration: defineRoute({
    method: 'POST',
    path: `${INTEGRATION}/connect`,
    summary: 'Connect an integration',
    description:
      'Connect (202, the sync job): the first connect makes a listings knowledge base and runs a full sync of ' +
      'listings (into it) and contacts (merged by phone or email; source integration, labelled with the ' +
      'integration’s name; contact.created for each one created), publishing no listing.sold; a reconnect catches ' +
      'up from the last cursor like a sync (member)',
    auth: 'user_or_api_key',
    scope: 'integrations:write',
    response: s.SyncJobResponse,
    successStatus: 202,
    errors: { 409: 'The integration is changing: try again' },
    access: { table: 'readwrite', sendsTo: ['integrations'] },
  }),
  syncIntegration: defineRoute({
    method: 'POST',
    path: `${INTEGRATION}/sync`,
    summary: 'Sync an integration now',
    description:
      'Sync now (202, the sync job): the changes since the last cursor; a listing newly sold publishes one ' +
      'listing.sold; a contact the sync creates (not merged) one contact.created; a listing deleted in the CRM ' +
      'leaves the listings base; a contact deleted in the CRM is counted (contacts_deleted) and kept. The running ' +
      'job when one runs; 409 when not connected. Also runs on a schedule (member)',
    auth: 'user_or_api_key',
    scope: 'integrations:write',
    response: s.SyncJobResponse,
    successStatus: 202,
    errors: { 409: 'The integration is not connected, or is changing' },
    access: { table: 'readwrite', sendsTo: ['integrations'] },
  }),
  disconnectIntegration: defineRoute({
    method: 'POST',
    path: `${INTEGRATION}/disconnect`,
    summary: 'Disconnect an integration',
    description:
      'Disconnect: no more syncs (a running one stops); the synced listings and contacts stay (member)',
    auth: 'user_or_api_key',
    scope: 'integrations:write',
    response: s.IntegrationResponse,
    successStatus: 200,
    access: { table: 'readwrite' },
  }),
};
