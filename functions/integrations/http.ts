import { domainHandler } from '../platform/http/index.js';
import { integrationRoutes } from './routes.js';

/** The integrations domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(integrationRoutes, {
  createIntegration: () => import('./handlers/create-integration.js'),
  listIntegrations: () => import('./handlers/list-integrations.js'),
  getIntegration: () => import('./handlers/get-integration.js'),
  deleteIntegration: () => import('./handlers/delete-integration.js'),
  listIntegrationJobs: () => import('./handlers/list-integration-jobs.js'),
  getIntegrationJob: () => import('./handlers/get-integration-job.js'),
  connectIntegration: () => import('./handlers/connect-integration.js'),
  syncIntegration: () => import('./handlers/sync-integration.js'),
  disconnectIntegration: () => import('./handlers/disconnect-integration.js'),
});
