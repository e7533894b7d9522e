import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * The interactive API reference: Redoc's standalone browser bundle, from the `redoc` npm package
 * (never a CDN), served by our own route. In Lambda the file is copied next to the bundled handler
 * (`bundleFiles` of the PublicApi entry in lib/catalog.ts); locally it is read from node_modules.
 */
export const VIEWER = {
  /** The file in the npm package, as `require.resolve` names it. */
  packageFile: 'redoc/bundles/redoc.standalone.js',
  /** Its name in the function's asset, next to the bundled handler. */
  assetFile: 'redoc.standalone.js',
} as const;

/** Where the page and its script are served (functions/public/routes.ts declares both routes). */
export const DOCS_PATH = '/api/v1/docs';
export const VIEWER_PATH = '/api/v1/docs/viewer.js';
export const OPENAPI_PATH = '/api/v1/openapi.json';

export interface ViewerScript {
  body: string;
  /** The same, gzipped, in base64 (what a Lambda proxy response carries for bytes). */
  gzipBase64: string;
  /** First 16 hex digits of the script's SHA-256: its version in the page's URL and its ETag. */
  hash: string;
}

let script: ViewerScript | undefined;

/** The bundle's path: beside the handler in a Lambda asset, else resolved from node_modules. */
export function viewerScriptPath(): string {
  const bundled = fileURLToPath(new URL(`./${VIEWER.assetFile}`, import.meta.url));
  if (existsSync(bundled)) return bundled;
  return createRequire(import.meta.url).resolve(VIEWER.packageFile);
}

/** Redoc's sidebar shows its maker's logo from a CDN, which the page's policy (rightly) refuses. */
export const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
/** What the script shows instead: a small mark of our own, inline (`img-src data:`), so nothing leaves the origin. */
export const LOCAL_LOGO =
  'data:image/svg+xml,' +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#32329f"/>' +
      '<path d="M5 4h4a3 3 0 010 6H7v2H5z" fill="#fff"/></svg>',
  );

/**
 * The viewer script, read once per container. Its source map is not shipped, so its comment goes;
 * the CDN logo is swapped for the inline one.
 */
export function viewerScript(): ViewerScript {
  if (!script) {
    const body = readFileSync(viewerScriptPath(), 'utf8')
      .replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n')
      .replaceAll(REDOC_CDN_LOGO, LOCAL_LOGO);
    script = {
      body,
      gzipBase64: gzipSync(body, { level: 9 }).toString('base64'),
      hash: createHash('sha256').update(body).digest('hex').slice(0, 16),
    };
  }
  return script;
}

/**
 * What the page may load: scripts only from us (no inline script: Redoc starts itself on the
 * `<redoc spec-url>` element), the document from us, Redoc's search worker from a blob. Redoc writes
 * its styles as `<style>` elements (styled-components), hence inline styles.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The page: Redoc pointed at the OpenAPI document, its script loaded at the end of the body. */
export function docsPage(scriptHash: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Voice Agent Service API</title>
    <link rel="icon" type="image/svg+xml" href="${LOCAL_LOGO}" />
  </head>
  <body>
    <redoc spec-url="${OPENAPI_PATH}" path-in-middle-panel="true"></redoc>
    <script src="${VIEWER_PATH}?v=${scriptHash}"></script>
  </body>
</html>
`;
}
