/**
 * The catalog is the one list of functions; routes are declared in each domain's routes.ts. These checks keep
 * it consistent with the handler files on disk and with itself. Handler files are read as text, never
 * imported, so this test needs no AWS, no local services and no environment.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { catalog } from '../../lib/cloud/catalog.js';
import { apiRoutes } from '../../functions/api-routes.js';
import { routeKey } from '../../functions/platform/http/route.js';
import { QUEUES } from '../../functions/platform/resources.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every `functions/<domain>/handlers/<name>.ts` file, relative to the repository root. */
function handlerFiles(): string[] {
  const functionsDir = path.join(REPO_ROOT, 'functions');
  return readdirSync(functionsDir, { withFileTypes: true })
    .filter((domain) => domain.isDirectory())
    .flatMap((domain) => {
      const handlersDir = path.join(functionsDir, domain.name, 'handlers');
      if (!existsSync(handlersDir)) return [];
      return readdirSync(handlersDir, { withFileTypes: true })
        .filter(
          (f) =>
            f.isFile() && f.name.endsWith('.ts') && !f.name.endsWith('.d.ts') && !f.name.endsWith('.test.ts'),
        )
        .map((f) => `functions/${domain.name}/handlers/${f.name}`);
    })
    .sort();
}

const duplicates = (values: string[]): string[] => [
  ...new Set(values.filter((v, i) => values.indexOf(v) !== i)),
];

const EXPORTS_HANDLER =
  /export\s+(?:const|let|(?:async\s+)?function)\s+handler\b|export\s*\{[^}]*\bhandler\b[^}]*\}/;

describe('the catalog', () => {
  test('has entries', () => {
    expect(catalog.length).toBeGreaterThan(0);
  });

  test('every handler file is a catalog entry or a route implementation its domain function serves', () => {
    const files = handlerFiles();
    expect(files.length).toBeGreaterThan(0);
    const entries = catalog.map((s) => s.entry);
    const served = catalog
      .filter((s) => s.entry.endsWith('/http.ts'))
      .flatMap((s) => {
        const dir = path.dirname(s.entry);
        const source = readFileSync(path.join(REPO_ROOT, s.entry), 'utf8');
        // Eager (`from './handlers/x.js'`) or imported on first request (`import('./handlers/x.js')`).
        return [...source.matchAll(/(?:from |import\()'\.\/(handlers\/[^']+)\.js'/g)].map(
          (m) => `${dir}/${m[1]}.ts`,
        );
      });
    const unnamed = files.filter((f) => !entries.includes(f) && !served.includes(f));
    expect(unnamed).toEqual([]);
    expect(duplicates([...entries, ...served])).toEqual([]);
  });

  test('every entry file exists (a domain http.ts or a handlers/ file) and exports `handler`', () => {
    for (const spec of catalog) {
      expect(spec.entry).toMatch(/^functions\/[a-z0-9-]+\/(http|handlers\/[A-Za-z0-9._-]+|[a-z0-9-]+)\.ts$/);
      const file = path.join(REPO_ROOT, spec.entry);
      expect({ id: spec.id, exists: existsSync(file) }).toEqual({ id: spec.id, exists: true });
      expect({ id: spec.id, exportsHandler: EXPORTS_HANDLER.test(readFileSync(file, 'utf8')) }).toEqual({
        id: spec.id,
        exportsHandler: true,
      });
    }
  });

  test('one HTTP function per domain: each domain of functions/api-routes.ts is served by exactly one function', () => {
    const httpSpecs = catalog.filter((s) => s.http && s.http.length > 0);
    for (const [domain, routes] of Object.entries(apiRoutes)) {
      const declared = Object.values(routes).map(routeKey).sort();
      const servers = httpSpecs.filter((s) => s.http!.some((r) => declared.includes(routeKey(r))));
      expect({ domain, functions: servers.length }).toEqual({ domain, functions: 1 });
      expect({ domain, routes: servers[0].http!.map(routeKey).sort() }).toEqual({ domain, routes: declared });
    }
    expect(httpSpecs).toHaveLength(Object.keys(apiRoutes).length);
  });

  test("an HTTP function is granted the union of its routes' declared access, nothing more", () => {
    for (const spec of catalog.filter((s) => s.http && s.http.length > 0)) {
      const tables = spec.http!.map((r) => r.access.table);
      const table = tables.includes('readwrite') ? 'readwrite' : tables.includes('read') ? 'read' : undefined;
      expect({ id: spec.id, table: spec.access.table }).toEqual({ id: spec.id, table });
      const queues = [...new Set(spec.http!.flatMap((r) => r.access.sendsTo ?? []))].sort();
      expect({ id: spec.id, sendsTo: spec.access.sendsTo ?? [] }).toEqual({ id: spec.id, sendsTo: queues });
    }
  });

  test('ids are unique PascalCase names', () => {
    const ids = catalog.map((s) => s.id);
    expect(duplicates(ids)).toEqual([]);
    for (const id of ids) expect(id).toMatch(/^[A-Z][A-Za-z0-9]*$/);
  });

  test('every function has at least one trigger', () => {
    const untriggered = catalog.filter(
      (s) => !(s.http?.length || s.functionUrl || s.queue || s.schedule || s.webSocket?.routes.length),
    );
    expect(untriggered.map((s) => s.id)).toEqual([]);
  });

  test('at most 50 functions in all (one per domain, plus consumers, schedules and webhooks)', () => {
    expect(catalog.length).toBeLessThanOrEqual(50);
  });

  test('every (method, path) HTTP route is unique across the catalog', () => {
    const routeKeys = catalog.flatMap((s) => (s.http ?? []).map((r) => `${r.method} ${r.path}`));
    expect(duplicates(routeKeys)).toEqual([]);
  });

  // /r/: the public recording page; /i/: the page an invitation email links to.
  test('HTTP paths start with /api/v1/, /r/ or /i/ and use {param} segments', () => {
    for (const spec of catalog) {
      for (const route of spec.http ?? []) {
        expect(route.path).toMatch(/^\/(api\/v1|r|i)\//);
        expect(route.path).not.toMatch(/\/$|\/:|\s/);
      }
    }
  });

  test('function URL paths start with /webhooks/ and are unique', () => {
    const paths = catalog.flatMap((s) => (s.functionUrl ? [s.functionUrl.path] : []));
    for (const p of paths) expect(p).toMatch(/^\/webhooks\//);
    expect(duplicates(paths)).toEqual([]);
  });

  test('a webhook hands out only other webhooks, which hand out none (no cycle); relay-ended hands out a warm transfer’s two', () => {
    const paths = catalog.flatMap((s) => (s.functionUrl ? [s.functionUrl.path] : []));
    for (const spec of catalog)
      for (const path of spec.functionUrl?.handsOut ?? []) {
        expect(paths).toContain(path);
        expect(path).not.toBe(spec.functionUrl!.path);
        expect(catalog.find((s) => s.functionUrl?.path === path)?.functionUrl?.handsOut ?? []).toEqual([]);
      }
    expect(catalog.find((s) => s.id === 'TelephonyRelayEndedWebhook')?.functionUrl?.handsOut).toEqual([
      '/webhooks/telephony/whisper',
      '/webhooks/telephony/transfer-status',
    ]);
  });

  test('queues named by consumers and senders exist in functions/platform/resources.ts', () => {
    for (const spec of catalog) {
      if (spec.queue) expect(Object.keys(QUEUES)).toContain(spec.queue.name);
      for (const key of spec.access.sendsTo ?? []) expect(Object.keys(QUEUES)).toContain(key);
    }
  });

  test('each queue has at most one consumer, with a batch size SQS accepts', () => {
    const consumed = catalog.flatMap((s) => (s.queue ? [s.queue.name] : []));
    expect(duplicates(consumed)).toEqual([]);
    for (const spec of catalog) {
      if (!spec.queue) continue;
      expect(spec.queue.batchSize).toBeGreaterThanOrEqual(1);
      expect(spec.queue.batchSize).toBeLessThanOrEqual(10000);
    }
  });

  test('schedules are EventBridge rate() or cron() expressions', () => {
    for (const spec of catalog) {
      if (!spec.schedule) continue;
      expect(spec.schedule.expression).toMatch(
        /^(rate\(\d+ (minute|minutes|hour|hours|day|days)\)|cron\(.+\))$/,
      );
      expect(spec.schedule.localEverySeconds).toBeGreaterThan(0);
    }
  });
});
