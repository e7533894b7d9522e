/**
 * `GET /api/v1/docs` and its script: Redoc's standalone bundle from the `redoc` package, served by our
 * own route (never a CDN), with a Content-Security-Policy that allows no inline script; and the kernel's
 * raw (non-JSON) result that serves them.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from '@jest/globals';
import type { Context } from 'aws-lambda';
import { handler } from '../../functions/public/http.js';
import { LOCAL_LOGO, REDOC_CDN_LOGO, VIEWER, viewerScript } from '../../functions/public/docs-viewer.js';
import { buildOpenApiDocument } from '../../functions/platform/openapi.js';
import { apiRoutes } from '../../functions/api-routes.js';
import { defineRoute, implement, type HttpEvent } from '../../functions/platform/http/index.js';
import { catalog } from '../../lib/cloud/catalog.js';
import { copyBundleFiles } from '../../lib/cloud/constructs/bundle.js';

interface Response {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded?: boolean;
}

const context = { functionName: 'PublicApi', awsRequestId: 'aws-1' } as unknown as Context & { state: never };

function get(path: string, headers: Record<string, string> = {}, query?: Record<string, string>) {
  const event = {
    version: '2.0',
    routeKey: `GET ${path}`,
    rawPath: path,
    rawQueryString: new URLSearchParams(query).toString(),
    queryStringParameters: query,
    headers,
    requestContext: { requestId: 'req-1', http: { method: 'GET', path } },
    isBase64Encoded: false,
  } as unknown as HttpEvent;
  return handler(event, context) as Promise<Response>;
}

const packageFile = createRequire(import.meta.url).resolve(VIEWER.packageFile);

describe('GET /api/v1/docs', () => {
  it('is an HTML page that loads Redoc from our own route and points it at the OpenAPI document', async () => {
    const page = await get('/api/v1/docs');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['x-request-id']).toBe('req-1');
    expect(page.body).toContain('<redoc spec-url="/api/v1/openapi.json"');
    const scripts = [...page.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0][1]).toBe(` src="/api/v1/docs/viewer.js?v=${viewerScript().hash}"`);
    expect(scripts[0][2]).toBe(''); // no inline script
    expect(page.body).not.toMatch(/https?:\/\//); // nothing from another origin
  });

  it('has a Content-Security-Policy: scripts from us only, no inline script, no framing', async () => {
    const csp = (await get('/api/v1/docs')).headers['content-security-policy'];
    const directives = Object.fromEntries(
      csp.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name, values];
      }),
    );
    expect(directives['default-src']).toEqual(["'none'"]);
    expect(directives['script-src']).toEqual(["'self'"]);
    expect(directives['connect-src']).toEqual(["'self'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
  });
});

describe('GET /api/v1/docs/viewer.js', () => {
  it("is redoc's standalone bundle from node_modules, without its source map comment or CDN logo", async () => {
    const script = await get('/api/v1/docs/viewer.js');
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['x-content-type-options']).toBe('nosniff');
    const file = readFileSync(packageFile, 'utf8');
    const mapComment = /\n\/\/# sourceMappingURL=\S+\s*$/;
    expect(mapComment.test(file)).toBe(true);
    expect(mapComment.test(script.body)).toBe(false);
    // Redoc's sidebar logo came from a CDN the page's policy refuses: the script shows an inline one.
    expect(file.includes(REDOC_CDN_LOGO)).toBe(true);
    expect(script.body.includes('cdn.redoc.ly')).toBe(false);
    expect(script.body.includes(LOCAL_LOGO)).toBe(true);
    // (booleans: a failure should not print a megabyte of script)
    expect(
      script.body.trimEnd() === file.replace(mapComment, '').replaceAll(REDOC_CDN_LOGO, LOCAL_LOGO).trimEnd(),
    ).toBe(true);
  });

  it('is cached for a year under its versioned URL; revalidated by ETag otherwise', async () => {
    const { hash } = viewerScript();
    const versioned = await get('/api/v1/docs/viewer.js', {}, { v: hash });
    expect(versioned.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const other = await get('/api/v1/docs/viewer.js', {}, { v: 'old' });
    expect(other.headers['cache-control']).toMatch(/max-age=300/);
    expect(versioned.headers.etag).toBe(`W/"${hash}"`);
    const again = await get('/api/v1/docs/viewer.js', { 'if-none-match': versioned.headers.etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('is gzipped for clients that accept it', async () => {
    const plain = await get('/api/v1/docs/viewer.js');
    const gzipped = await get('/api/v1/docs/viewer.js', { 'accept-encoding': 'gzip, deflate, br' });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers.vary).toBe('accept-encoding');
    expect(gzipped.isBase64Encoded).toBe(true);
    expect(gunzipSync(Buffer.from(gzipped.body, 'base64')).toString('utf8') === plain.body).toBe(true);
  });

  it('refuses unknown query parameters like every route (422)', async () => {
    expect((await get('/api/v1/docs/viewer.js', {}, { x: '1' })).statusCode).toBe(422);
  });
});

describe('the docs routes in the OpenAPI document', () => {
  it('are public and name their content types', () => {
    const paths = buildOpenApiDocument(apiRoutes).paths as Record<
      string,
      { get: { security?: unknown[]; responses: Record<string, { content?: object }> } }
    >;
    expect(paths['/api/v1/docs'].get.security).toEqual([]);
    expect(Object.keys(paths['/api/v1/docs'].get.responses['200'].content ?? {})).toEqual(['text/html']);
    expect(Object.keys(paths['/api/v1/docs/viewer.js'].get.responses['200'].content ?? {})).toEqual([
      'text/javascript',
    ]);
  });
});

describe('the viewer in the Lambda asset', () => {
  it('is copied into the PublicApi function only', () => {
    const withFiles = catalog.filter((spec) => spec.bundleFiles?.length);
    expect(withFiles.map((spec) => spec.id)).toEqual(['PublicApi']);
    expect(withFiles[0].bundleFiles).toEqual([VIEWER]);
  });

  it('copied from the package beside the bundled entry', () => {
    const repoRoot = realpathSync(fileURLToPath(new URL('../..', import.meta.url)));
    const out = mkdtempSync(join(tmpdir(), 'asset-'));
    try {
      copyBundleFiles(repoRoot, [VIEWER], out);
      expect(readFileSync(join(out, VIEWER.assetFile))).toEqual(readFileSync(packageFile));
      expect(() => copyBundleFiles(repoRoot, [{ ...VIEWER, assetFile: '../x.js' }], out)).toThrow(
        /not a plain file name/,
      );
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('a raw (non-JSON) result of the kernel', () => {
  const route = defineRoute({ method: 'GET', path: '/raw', summary: 'raw', auth: 'none', access: {} });
  const raw = implement(route, async () => ({
    status: 200,
    raw: { contentType: 'text/plain', body: 'hello' },
    headers: { 'cache-control': 'no-store' },
  }));

  it('is sent as is, with its content type, its headers and the request id', async () => {
    const event = {
      routeKey: 'GET /raw',
      rawPath: '/raw',
      headers: {},
      requestContext: { requestId: 'req-2', http: { method: 'GET', path: '/raw' } },
    } as unknown as HttpEvent;
    const response = (await raw.handler(event, context)) as Response;
    expect(response).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'text/plain', 'x-request-id': 'req-2', 'cache-control': 'no-store' },
      body: 'hello',
    });
  });
});
