import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import {
  BUNDLE_ENTRY_FILE,
  bundleFiles,
  bundleFunction,
  bundleOptions,
  initFiles,
} from '../../lib/cloud/constructs/bundle.js';
import { UserEntity, UserIdentityEntity, identityService } from '../../functions/platform/auth/entities.js';

/**
 * The Lambda bundles build entities without ElectroDB's model check (BUNDLE_DEFINE) and without the
 * JSON-schema package behind it (BUNDLE_ALIASES). An entity module bundled as the CDK bundles it must
 * load and build the same requests as the source does here (where every model is checked).
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });

/** Bundles `entry` as the stack bundles a function, into `outdir`; the entry file's path. */
async function bundleAsTheStack(entry: string, outdir: string) {
  const result = await build({ ...bundleOptions(ROOT, entry, outdir), sourcemap: false, metafile: true });
  writeFileSync(join(outdir, 'package.json'), '{"type":"module"}');
  return { file: join(outdir, BUNDLE_ENTRY_FILE), metafile: result.metafile };
}

const importIn = (file: string, then: string): string =>
  execFileSync(process.execPath, ['-e', `import(${JSON.stringify(`file://${file}`)}).then(${then})`], {
    env: { ...process.env, NODE_OPTIONS: '', AWS_REGION: 'ap-southeast-2', TABLE_NAME: 'probe-table' },
    encoding: 'utf8',
  });

const probe = (entities: {
  UserEntity: typeof UserEntity;
  UserIdentityEntity: typeof UserIdentityEntity;
  identityService: typeof identityService;
}) => ({
  get: entities.UserEntity.get({ userId: 'usr_1' }).params(),
  put: entities.UserIdentityEntity.put({
    subject: 'sub-1',
    userId: 'usr_1',
    createdAt: '2026-01-01T00:00:00.000Z',
  }).params(),
  service: Object.keys(entities.identityService.entities).sort(),
});

describe('entities in a Lambda bundle', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'bundle-stubs-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('load without the model check and build the same requests', async () => {
    const result = await bundleAsTheStack('functions/platform/auth/entities.ts', join(dir, 'entities'));
    // Neither the JSON-schema package nor the check's work is in the bundle.
    expect(
      Object.keys(result.metafile.inputs).filter((input) => input.includes('node_modules/jsonschema')),
    ).toEqual([]);
    const out = importIn(result.file, `(m) => console.log(JSON.stringify((${probe.toString()})(m)))`);
    const bundled = JSON.parse(out) as ReturnType<typeof probe>;
    const source = probe({ UserEntity, UserIdentityEntity, identityService });
    // The table name is the environment's, so compare everything else.
    const withoutTable = <T extends { get: { TableName?: string }; put: { TableName?: string } }>(p: T) => ({
      ...p,
      get: { ...p.get, TableName: undefined },
      put: { ...p.put, TableName: undefined },
    });
    expect(bundled.get.TableName).toBe('probe-table');
    expect(withoutTable(bundled)).toEqual(withoutTable(source));
  });

  it('load for every module that builds entities or services (a service is given built entities)', async () => {
    const modules = sources(join(ROOT, 'functions')).filter((file) =>
      /\bnew (Entity|Service)\(/.test(readFileSync(file, 'utf8')),
    );
    expect(modules.length).toBeGreaterThan(5);
    const entry = join(dir, 'all-entities.ts');
    writeFileSync(
      entry,
      modules.map((file, i) => `export * as m${i} from ${JSON.stringify(file)};`).join('\n'),
    );
    const { file } = await bundleAsTheStack(entry, join(dir, 'all-entities'));
    expect(importIn(file, `(m) => console.log(Object.keys(m).length)`).trim()).toBe(String(modules.length));
  });
});

describe('a domain function bundled as the stack bundles it', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(ROOT, '.local', 'split-bundle-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loads at init without its routes, and a request loads its route from a chunk', () => {
    const metafile = bundleFunction(ROOT, { entry: 'functions/public/http.ts' }, dir);
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    const init = initFiles(metafile, ROOT, dir);
    const chunks = bundleFiles(dir).map((f) => f.file);
    // The OpenAPI document's builder (every route's schema) is only in a chunk the init does not load.
    const lazy = chunks.filter((file) => !init.includes(file));
    expect(lazy.length).toBeGreaterThanOrEqual(4);
    const event = {
      version: '2.0',
      routeKey: 'GET /api/v1/openapi.json',
      rawPath: '/api/v1/openapi.json',
      rawQueryString: '',
      headers: {},
      requestContext: { requestId: 'r1', http: { method: 'GET', path: '/api/v1/openapi.json' } },
      isBase64Encoded: false,
    };
    const out = importIn(
      join(dir, BUNDLE_ENTRY_FILE),
      `(m) => m.handler(${JSON.stringify(event)}, { awsRequestId: 'r1', getRemainingTimeInMillis: () => 9000 })` +
        `.then((r) => console.log(JSON.stringify({ status: r.statusCode, paths: Object.keys(JSON.parse(r.body).paths).length })))`,
    );
    const result = JSON.parse(out.trim().split('\n').pop() ?? '{}') as { status: number; paths: number };
    expect(result.status).toBe(200);
    expect(result.paths).toBeGreaterThan(50);
  });
});
