import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';
import { BUNDLE_ALIASES, BUNDLE_DEFINE, ESM_REQUIRE_BANNER } from '../../lib/constructs/service-function.js';
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

const bundleSettings = (): BuildOptions => ({
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  mainFields: ['module', 'main'],
  banner: { js: ESM_REQUIRE_BANNER },
  define: BUNDLE_DEFINE,
  alias: Object.fromEntries(Object.entries(BUNDLE_ALIASES).map(([name, stub]) => [name, join(ROOT, stub)])),
  metafile: true,
  logLevel: 'silent',
});

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
    const outfile = join(dir, 'entities.mjs');
    const result = await build({
      entryPoints: [join(ROOT, 'functions/platform/auth/entities.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      minify: true,
      mainFields: ['module', 'main'],
      banner: { js: ESM_REQUIRE_BANNER },
      define: BUNDLE_DEFINE,
      alias: Object.fromEntries(
        Object.entries(BUNDLE_ALIASES).map(([name, stub]) => [name, join(ROOT, stub)]),
      ),
      metafile: true,
      logLevel: 'silent',
    });
    // Neither the JSON-schema package nor the check's work is in the bundle.
    expect(
      Object.keys(result.metafile.inputs).filter((input) => input.includes('node_modules/jsonschema')),
    ).toEqual([]);
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    const out = importIn(outfile, `(m) => console.log(JSON.stringify((${probe.toString()})(m)))`);
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
    const outfile = join(dir, 'all-entities.mjs');
    await build({ ...bundleSettings(), entryPoints: [entry], outfile });
    expect(importIn(outfile, `(m) => console.log(Object.keys(m).length)`).trim()).toBe(
      String(modules.length),
    );
  });
});
