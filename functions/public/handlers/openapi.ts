import { httpHandler } from '../../platform/http/index.js';
import { buildOpenApiDocument } from '../../platform/openapi.js';
// The catalog is the one route list; the document is generated from it (data only, no CDK code).
import { catalog } from '../../../lib/catalog.js';

let document: unknown;

/** `GET /api/v1/openapi.json`: generated once per container from the catalog's routes and zod schemas. */
export const handler = httpHandler({ auth: 'none' }, async () => {
  document ??= buildOpenApiDocument(catalog);
  return { status: 200, body: document };
});
