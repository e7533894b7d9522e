import { domainHandler } from '../platform/http/index.js';
import { publicRoutes } from './routes.js';

/** The public domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(publicRoutes, {
  health: () => import('./handlers/health.js'),
  openApi: () => import('./handlers/openapi.js'),
  docs: () => import('./handlers/docs.js'),
  docsViewer: () => import('./handlers/docs-viewer.js'),
});
