import { build, type BuildOptions } from 'esbuild';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FunctionSpec } from '../../cloud/catalog-types.js';
import {
  BUNDLE_DEFINE,
  BUNDLE_ENTRY_FILE,
  ESM_REQUIRE_BANNER,
  bundleFiles,
  bundleFunction,
  initFiles,
} from '../../cloud/constructs/bundle.js';

/** The budget: each bundle at most this many times the bare handler's size and cold load. */
export const BUNDLE_BUDGET = { size: 2, coldLoad: 1.5 } as const;

/**
 * The reference: a handler that only reads DynamoDB. It is bundled as the project's bundle check
 * (the reviewers' bundle check) bundles it, with esbuild's own main fields for node (the AWS SDK's
 * CommonJS build); the functions are bundled exactly as the CDK bundles them (`module` first).
 */
export const BARE_HANDLER = `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
const c = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const handler = async () => (await c.send(new GetCommand({ TableName: 't', Key: { pk: 'a' } }))).Item;
`;

export interface BundleMeasure {
  /** What a Lambda init loads: the entry and the chunks it imports statically. */
  bytes: number;
  /** Median of the fresh imports; NaN when the bundle does not load. */
  coldLoadMs: number;
}

export interface BundleReport extends BundleMeasure {
  id: string;
  /** Every file of the bundle: the entry and the chunks it loads on demand. */
  allBytes: number;
  /** A fresh import of the entry and then of every chunk: a container that has served every route. */
  allLoadedMs: number;
  /** Bytes and cold load over the bare handler's. */
  sizeRatio: number;
  coldLoadRatio: number;
  /**
   * The import's user-space CPU instructions over the bare import's (Linux `perf`, median of 3; null
   * where perf cannot count): unlike a time, a count does not move with the machine's other load.
   */
  instructionsRatio: number | null;
  withinBudget: { size: boolean; coldLoad: boolean };
}

export interface BundlesReport {
  budget: typeof BUNDLE_BUDGET;
  bare: BundleMeasure & { instructions: number | null };
  functions: BundleReport[];
  /** Functions over either budget. */
  over: string[];
}

/** The bare handler's settings: the bundle check's esbuild command (esbuild's own main fields for node). */
const BARE_SETTINGS: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  sourcemap: true,
  banner: { js: ESM_REQUIRE_BANNER },
  define: BUNDLE_DEFINE,
  logLevel: 'silent',
};

/**
 * The environment of each import. Entities are built at import time and read the configuration, which
 * refuses a table or bucket name shorter than 3 characters (AWS's minimum): with the bundle check's
 * `x` every function's import stops there, so the names here are valid and the whole bundle loads.
 */
const LOAD_ENV = {
  AWS_REGION: 'ap-southeast-2',
  TABLE_NAME: 'bench-table',
  BUCKET_NAME: 'bench-bucket',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

/** Milliseconds for a fresh Node process to import `files` in order; NaN if an import throws. */
function importOnce(...files: string[]): number {
  const urls = JSON.stringify(files.map((file) => `file://${file}`));
  const script = `const t=performance.now();(async()=>{for(const u of ${urls})await import(u)})().then(()=>console.log((performance.now()-t).toFixed(1)),(e)=>{console.error(e);process.exit(1)})`;
  try {
    const out = execFileSync(process.execPath, ['-e', script], {
      env: { ...process.env, NODE_OPTIONS: '', ...LOAD_ENV },
      encoding: 'utf8',
      timeout: 20_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return Number(out.trim().split('\n').pop());
  } catch {
    return Number.NaN;
  }
}

/** `perf stat`'s count of user-space instructions for a fresh Node process running `script`. */
function instructionsOf(script: string): number {
  const result = spawnSync(
    'perf',
    ['stat', '-x', ',', '-e', 'instructions:u', process.execPath, '-e', script],
    {
      env: { ...process.env, NODE_OPTIONS: '', ...LOAD_ENV },
      encoding: 'utf8',
      timeout: 20_000,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  if (result.status !== 0) return Number.NaN;
  const line = (result.stderr ?? '').split('\n').find((l) => l.includes('instructions'));
  const count = Number(line?.split(',')[0]);
  return line && count > 0 ? count : Number.NaN;
}

/**
 * Instructions to import `file` (a fresh process importing it, less a process that only starts), median
 * of 3; null where perf is missing or may not count (containers without perf_event access).
 */
function importInstructions(file: string): number | null {
  const count = (script: string) => median([0, 1, 2].map(() => instructionsOf(script)));
  const importing = count(`import(${JSON.stringify(`file://${file}`)})`);
  if (Number.isNaN(importing)) return null;
  return importing - count('0');
}

const median = (values: number[]): number => {
  if (values.some(Number.isNaN)) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

async function bundleBare(outDir: string, entry: string): Promise<string> {
  const outfile = join(outDir, 'index.mjs');
  mkdirSync(outDir, { recursive: true });
  await build({ ...BARE_SETTINGS, entryPoints: [entry], outfile });
  writeFileSync(join(outDir, 'package.json'), '{"type":"module"}');
  return outfile;
}

/**
 * Bundles the bare handler and each catalog function in the same run, and measures each bundle's size
 * and how long a fresh Node process takes to import it (median of `runs`), as ratios to the bare
 * handler's, against BUNDLE_BUDGET. The bare handler is imported alternately with each function, and
 * each function's ratio is the median of its imports' ratios to the bare import beside each, so a
 * machine that gets busier or quieter during the run moves both sides of a ratio alike.
 */
export async function measureBundles(
  root: string,
  functions: FunctionSpec[],
  outDir: string,
  runs = 5,
): Promise<BundlesReport> {
  const bareDir = join(outDir, '_bare');
  mkdirSync(bareDir, { recursive: true });
  // Inside the project, so the AWS SDK resolves from its node_modules.
  const bareEntry = join(bareDir, 'entry.mjs');
  writeFileSync(bareEntry, BARE_HANDLER);
  const bareFile = await bundleBare(bareDir, bareEntry);
  const bareTimes: number[] = [];
  const bareInstructions = importInstructions(bareFile);

  const reports: BundleReport[] = [];
  for (const spec of functions) {
    const dir = join(outDir, spec.id);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const metafile = bundleFunction(root, spec, dir);
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    const file = join(dir, BUNDLE_ENTRY_FILE);
    const files = bundleFiles(dir);
    const chunks = files.map((f) => f.file).filter((f) => f !== file);
    const times: number[] = [];
    const alongside: number[] = [];
    for (let i = 0; i < runs; i += 1) {
      alongside.push(importOnce(bareFile));
      times.push(importOnce(file));
    }
    bareTimes.push(...alongside);
    const bytes = initFiles(metafile, root, dir).reduce((sum, f) => sum + statSync(f).size, 0);
    const coldLoadMs = median(times);
    const allLoadedMs = median([0, 1, 2].slice(0, runs).map(() => importOnce(file, ...chunks)));
    const sizeRatio = bytes / statSync(bareFile).size;
    // Each import of the function over the bare import just before it, then the median of those: a
    // machine whose speed drifts (a VM's neighbours) moves both imports of a pair alike.
    const coldLoadRatio = median(times.map((ms, i) => ms / (alongside[i] ?? Number.NaN)));
    const instructions = bareInstructions === null ? null : importInstructions(file);
    reports.push({
      id: spec.id,
      bytes,
      coldLoadMs,
      allBytes: files.reduce((sum, f) => sum + f.bytes, 0),
      allLoadedMs,
      sizeRatio,
      coldLoadRatio,
      instructionsRatio: instructions === null || !bareInstructions ? null : instructions / bareInstructions,
      withinBudget: {
        size: sizeRatio <= BUNDLE_BUDGET.size,
        coldLoad: coldLoadRatio <= BUNDLE_BUDGET.coldLoad,
      },
    });
  }
  const bare = {
    bytes: statSync(bareFile).size,
    coldLoadMs: median(bareTimes),
    instructions: bareInstructions,
  };
  const over = reports.filter((r) => !r.withinBudget.size || !r.withinBudget.coldLoad).map((r) => r.id);
  return { budget: BUNDLE_BUDGET, bare, functions: reports, over };
}

/** The report as a markdown table, one row per function, with the budget marks. */
export function bundlesTable(report: BundlesReport): string[] {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
  const loadMs = (ms: number) => (Number.isNaN(ms) ? 'does not load' : `${ms.toFixed(1)} ms`);
  const mark = (within: boolean) => (within ? 'within' : '**OVER**');
  const { bare, budget } = report;
  return [
    `bare DynamoDB-reading handler: ${kb(bare.bytes)}, cold load ${loadMs(bare.coldLoadMs)} (median of its fresh imports, taken alternately with each function's; a function's ratio is the median of its imports' ratios to the bare import just before each); budget: size <= ${budget.size}x, cold load <= ${budget.coldLoad}x`,
    'size and cold load: what Lambda loads at init, the entry (`index.mjs`) and the chunks it imports statically, imported with valid TABLE_NAME/BUCKET_NAME (the external bundle check imports with `x`, which the configuration refuses at the first entity, so it times a partial load); every `import()` is a chunk loaded by the first request that needs it. "all": the entry and every chunk, size and one fresh import of them all (a container that has served every route)',
    '',
    `instructions: the import's user-space CPU instructions over the bare import's (Linux perf, median of 3${bare.instructions === null ? '; perf is not available here' : `; bare ${(bare.instructions / 1e6).toFixed(0)} M`}): a count the machine's other load does not move, beside the times, which on a shared VM move by a fifth between runs`,
    '',
    '| function | size | x bare | cold load | x bare | budget | instructions x bare | all: size | all: load |',
    '|---|---:|---:|---:|---:|---|---:|---:|---:|',
    ...report.functions.map(
      (r) =>
        `| ${r.id} | ${kb(r.bytes)} | ${r.sizeRatio.toFixed(2)} ${mark(r.withinBudget.size)} | ${loadMs(r.coldLoadMs)} | ${r.coldLoadRatio.toFixed(2)} ${mark(r.withinBudget.coldLoad)} | ${r.withinBudget.size && r.withinBudget.coldLoad ? 'within' : '**OVER**'} | ${r.instructionsRatio === null ? 'n/a' : r.instructionsRatio.toFixed(2)} | ${kb(r.allBytes)} | ${loadMs(r.allLoadedMs)} |`,
    ),
    '',
    report.over.length ? `over budget: ${report.over.join(', ')}` : `every function within budget`,
  ];
}
