import { implement } from '../../platform/http/index.js';
import { publicRoutes } from '../routes.js';
import { DOCS_CONTENT_SECURITY_POLICY, docsPage, viewerScript } from '../docs-viewer.js';

let page: string | undefined;

/** `GET /api/v1/docs`: the interactive API reference, Redoc over `/api/v1/openapi.json`. */
export const handler = implement(publicRoutes.docs, async () => {
  page ??= docsPage(viewerScript().hash);
  return {
    status: 200,
    raw: { contentType: 'text/html; charset=utf-8', body: page },
    headers: {
      'content-security-policy': DOCS_CONTENT_SECURITY_POLICY,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    },
  };
});
