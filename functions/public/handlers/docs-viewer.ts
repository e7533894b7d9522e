import { implement } from '../../platform/http/index.js';
import { publicRoutes } from '../routes.js';
import { viewerScript } from '../docs-viewer.js';

/**
 * `GET /api/v1/docs/viewer.js`: the viewer's script, gzipped when the client accepts it (an HTTP API
 * does not compress). The page asks for `?v=<hash>`, cached for a year (another version gets another
 * URL); any other request revalidates by ETag.
 */
export const handler = implement(publicRoutes.docsViewer, async (req) => {
  const script = viewerScript();
  // Weak: the gzipped and the plain bytes are the same script.
  const etag = `W/"${script.hash}"`;
  const headers: Record<string, string> = {
    etag,
    'cache-control':
      req.query.v === script.hash
        ? 'public, max-age=31536000, immutable'
        : 'public, max-age=300, must-revalidate',
    vary: 'accept-encoding',
    'x-content-type-options': 'nosniff',
  };
  if (matches(req.headers['if-none-match'], script.hash)) return { status: 304, headers };
  const contentType = 'text/javascript; charset=utf-8';
  if (/\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) {
    return {
      status: 200,
      raw: { contentType, body: script.gzipBase64, isBase64Encoded: true },
      headers: { ...headers, 'content-encoding': 'gzip' },
    };
  }
  return { status: 200, raw: { contentType, body: script.body }, headers };
});

/** `If-None-Match` (a list of entity tags, weak or not, or `*`) names this version. */
function matches(ifNoneMatch: string | undefined, hash: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === `"${hash}"`);
}
