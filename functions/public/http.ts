import { domainHandler } from '../platform/http/index.js';
import { publicRoutes } from './routes.js';
import { handler as health } from './handlers/health.js';
import { handler as openApi } from './handlers/openapi.js';
import { handler as docs } from './handlers/docs.js';
import { handler as docsViewer } from './handlers/docs-viewer.js';

/** The public domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(publicRoutes, { health, openApi, docs, docsViewer });
