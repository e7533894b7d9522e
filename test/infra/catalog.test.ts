/**
 * The catalog is the one list of functions and routes (docs: DESIGN.md, "The catalog"). These checks keep
 * it consistent with the handler files on disk and with itself. Handler files are read as text, never
 * imported, so this test needs no AWS, no local services and no environment.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { catalog } from '../../lib/catalog.js';
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

  test('names every handler file exactly once', () => {
    const files = handlerFiles();
    expect(files.length).toBeGreaterThan(0);
    const entries = catalog.map((s) => s.entry);
    const unnamed = files.filter((f) => !entries.includes(f));
    expect(unnamed).toEqual([]);
    expect(duplicates(entries)).toEqual([]);
  });

  test('every entry file exists under functions/<domain>/handlers/ and exports `handler`', () => {
    for (const spec of catalog) {
      expect(spec.entry).toMatch(/^functions\/[a-z0-9-]+\/handlers\/[A-Za-z0-9._-]+\.ts$/);
      const file = path.join(REPO_ROOT, spec.entry);
      expect({ id: spec.id, exists: existsSync(file) }).toEqual({ id: spec.id, exists: true });
      expect({ id: spec.id, exportsHandler: EXPORTS_HANDLER.test(readFileSync(file, 'utf8')) }).toEqual({
        id: spec.id,
        exportsHandler: true,
      });
    }
  });

  test('ids are unique PascalCase names', () => {
    const ids = catalog.map((s) => s.id);
    expect(duplicates(ids)).toEqual([]);
    for (const id of ids) expect(id).toMatch(/^[A-Z][A-Za-z0-9]*$/);
  });

  test('every function has at least one trigger', () => {
    const untriggered = catalog.filter((s) => !(s.http?.length || s.functionUrl || s.queue || s.schedule));
    expect(untriggered.map((s) => s.id)).toEqual([]);
  });

  test('every (method, path) HTTP route is unique across the catalog', () => {
    const routeKeys = catalog.flatMap((s) => (s.http ?? []).map((r) => `${r.method} ${r.path}`));
    expect(duplicates(routeKeys)).toEqual([]);
  });

  test('HTTP paths start with /api/v1/ or /r/ and use {param} segments', () => {
    for (const spec of catalog) {
      for (const route of spec.http ?? []) {
        expect(route.path).toMatch(/^\/(api\/v1|r)\//);
        expect(route.path).not.toMatch(/\/$|\/:|\s/);
      }
    }
  });

  test('function URL paths start with /webhooks/ and are unique', () => {
    const paths = catalog.flatMap((s) => (s.functionUrl ? [s.functionUrl.path] : []));
    for (const p of paths) expect(p).toMatch(/^\/webhooks\//);
    expect(duplicates(paths)).toEqual([]);
  });

  test('queues named by consumers and senders exist in lib/resources.ts', () => {
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
