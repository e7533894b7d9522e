import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { FunctionSpec } from '../catalog-types.js';
import { ESM_REQUIRE_BANNER } from '../constructs/service-function.js';

export interface BundleReport {
  id: string;
  bytes: number;
  coldLoadMs: number;
}

/** Milliseconds for a fresh Node process to import `file` (median of `runs`), minus an empty import. */
function importTime(file: string, runs: number): number {
  const script = `const t=process.hrtime.bigint();await import(${JSON.stringify(file)});process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e6))`;
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, NODE_OPTIONS: '', AWS_REGION: 'ap-southeast-2' },
      encoding: 'utf8',
    });
    times.push(Number(out));
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

/**
 * Bundles each catalog function with the CDK's esbuild settings (ESM, minified, tree-shaken, only the
 * SDK clients it imports) and measures its size and how long a cold Node process takes to load it.
 */
export async function measureBundles(
  root: string,
  functions: FunctionSpec[],
  outDir: string,
): Promise<BundleReport[]> {
  mkdirSync(outDir, { recursive: true });
  const reports: BundleReport[] = [];
  for (const spec of functions) {
    const outfile = join(outDir, spec.id, 'index.mjs');
    await build({
      entryPoints: [resolve(root, spec.entry)],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      minify: true,
      mainFields: ['module', 'main'],
      banner: { js: ESM_REQUIRE_BANNER },
      logLevel: 'silent',
    });
    writeFileSync(join(outDir, spec.id, 'package.json'), '{"type":"module"}');
    reports.push({ id: spec.id, bytes: statSync(outfile).size, coldLoadMs: importTime(outfile, 3) });
  }
  return reports;
}
