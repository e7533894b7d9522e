/**
 * The local gateway's dashboard (lib/local/web.ts): built files, the SPA fallback to index.html, the
 * config, a strict CSP, and nothing outside the build or under the API's paths.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { dashboardCsp, servedByDashboard, webSite } from '../../lib/local/web.js';

const dist = mkdtempSync(join(tmpdir(), 'web-dist-'));
mkdirSync(join(dist, 'assets'));
writeFileSync(join(dist, 'index.html'), '<!doctype html><div id="app"></div>');
writeFileSync(join(dist, 'assets', 'index-abc.js'), 'console.log(1)');
writeFileSync(join(tmpdir(), 'outside-web-dist.txt'), 'secret');

const config = {
  api_base: '',
  oidc_authority: 'http://127.0.0.1:9',
  client_id: 'local-dashboard',
  relay_url: '',
  logout_url: '',
  scope: 'openid email',
};
const csp = dashboardCsp({ connect: ['http://127.0.0.1:9'], media: [] });
let server: Server;
let base: string;

beforeAll(async () => {
  const site = webSite({ dist, config: () => config, csp: () => csp });
  server = createServer((req, res) => site.handle(req, res, (req.url ?? '/').split('?')[0]));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the local dashboard site', () => {
  it('serves built assets for good, and index.html for the SPA routes, each with the CSP', async () => {
    const asset = await fetch(`${base}/assets/index-abc.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(asset.headers.get('content-type')).toContain('text/javascript');
    for (const path of ['/', '/agents', '/calls/call_123']) {
      const page = await fetch(`${base}${path}`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<div id="app">');
      expect(page.headers.get('content-security-policy')).toBe(csp);
      expect(page.headers.get('cache-control')).toBe('no-cache');
    }
  });

  it('answers /config.json from the stack, never cached', async () => {
    const response = await fetch(`${base}/config.json`);
    expect(await response.json()).toEqual(config);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('a missing file is a 404, and nothing outside the build is served', async () => {
    expect((await fetch(`${base}/assets/missing.js`)).status).toBe(404);
    const escaped = await fetch(`${base}/..%2Foutside-web-dist.txt`);
    expect(await escaped.text()).not.toContain('secret');
  });

  it('the CSP allows no inline script, eval or framing', () => {
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-(inline|eval)/);
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it('leaves the API, provider webhooks, local endpoints and public pages to the gateway', () => {
    for (const path of ['/api/v1/x', '/webhooks/telephony/voice', '/_local/quiescence', '/r/ABC'])
      expect(servedByDashboard('GET', path)).toBe(false);
    for (const path of ['/', '/agents', '/webhooks', '/config.json'])
      expect(servedByDashboard('GET', path)).toBe(true);
    expect(servedByDashboard('POST', '/agents')).toBe(false);
  });
});
