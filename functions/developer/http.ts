import { domainHandler } from '../platform/http/index.js';
import { developerRoutes } from './routes.js';

/** The developer domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(developerRoutes, {
  createApiKey: () => import('./handlers/create-api-key.js'),
  listApiKeys: () => import('./handlers/list-api-keys.js'),
  revokeApiKey: () => import('./handlers/revoke-api-key.js'),
  rotateApiKey: () => import('./handlers/rotate-api-key.js'),
});
