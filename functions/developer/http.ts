import { domainHandler } from '../platform/http/index.js';
import { developerRoutes } from './routes.js';
import { handler as createApiKey } from './handlers/create-api-key.js';
import { handler as listApiKeys } from './handlers/list-api-keys.js';
import { handler as revokeApiKey } from './handlers/revoke-api-key.js';
import { handler as rotateApiKey } from './handlers/rotate-api-key.js';

/** The developer domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(developerRoutes, {
  createApiKey,
  listApiKeys,
  revokeApiKey,
  rotateApiKey,
});
