import { domainHandler } from '../platform/http/index.js';
import { integrationRoutes } from './routes.js';
import { handler as createIntegration } from './handlers/create-integration.js';
import { handler as listIntegrations } from './handlers/list-integrations.js';
import { handler as getIntegration } from './handlers/get-integration.js';
import { handler as deleteIntegration } from './handlers/delete-integration.js';
import { handler as listIntegrationJobs } from './handlers/list-integration-jobs.js';
import { handler as getIntegrationJob } from './handlers/get-integration-job.js';
import { handler as connectIntegration } from './handlers/connect-integration.js';
import { handler as syncIntegration } from './handlers/sync-integration.js';
import { handler as disconnectIntegration } from './handlers/disconnect-integration.js';

/** The integrations domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(integrationRoutes, {
  createIntegration,
  listIntegrations,
  getIntegration,
  deleteIntegration,
  listIntegrationJobs,
  getIntegrationJob,
  connectIntegration,
  syncIntegration,
  disconnectIntegration,
});
