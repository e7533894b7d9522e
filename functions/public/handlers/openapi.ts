import { implement } from '../../platform/http/index.js';
import { publicRoutes } from '../routes.js';
import { buildOpenApiDocument } from '../../platform/openapi.js';
import { apiRoutes, apiTags } from '../../api-routes.js';

let document: unknown;

/** `GET /api/v1/openapi.json`: generated once per container from the declared routes and zod schemas. */
export const handler = implement(publicRoutes.openApi, async () => {
  document ??= buildOpenApiDocument(apiRoutes, apiTags);
  return { status: 200, body: document };
});
