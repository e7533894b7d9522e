import { buildSync, type BuildOptions, type Metafile } from 'esbuild';
import { copyFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import type { FunctionSpec } from '../catalog-types.js';
import { PHONE_METADATA } from '../../../functions/platform/phone.js';

/** Lets bundled CommonJS dependencies call `require` inside the ESM output (every file of it). */
export const ESM_REQUIRE_BANNER =
  "import { createRequire } from 'module';const require = createRequire(import.meta.url);";

/**
 * Constants replaced at bundling. ENTITY_MODELS_PREVALIDATED: ElectroDB's check of each entity model
 * (most of a cold load) is skipped in bundles, the models being checked where the source runs
 * unbundled (functions/platform/table.ts).
 */
export const BUNDLE_DEFINE: Record<string, string> = {
  'process.env.ENTITY_MODELS_PREVALIDATED': JSON.stringify('true'),
};

/**
 * Packages replaced at bundling, by a path from the project root. `jsonschema`: ElectroDB's model
 * checker, which the bundles do not run (see the stub).
 */
export const BUNDLE_ALIASES: Record<string, string> = {
  jsonschema: './lib/cloud/constructs/bundle-stubs/jsonschema.mjs',
};

/** The file Lambda loads at init (`index.handler`). */
export const BUNDLE_ENTRY_FILE = 'index.mjs';

/** Where the lazily loaded parts of a bundle go, beside the entry. */
export const BUNDLE_CHUNK_DIR = 'chunks';

/**
 * How every function is bundled (the stack and `npm run bench` alike): ESM for Node 22+, minified,
 * tree-shaken, with the AWS SDK v3 clients it imports and nothing else, and split at every dynamic
 * `import()`. The split is what keeps a cold start small: the entry holds what a Lambda init needs (the
 * kernel and the route declarations), and each `import()` (a route's module in a domain function, pdf.js
 * for a PDF, HubSpot's client for a HubSpot sync) becomes a chunk loaded on the first request that needs
 * it. Code used by several chunks goes into a shared chunk, loaded once.
 */
export function bundleOptions(repoRoot: string, entry: string, outdir: string): BuildOptions {
  return {
    entryPoints: { index: path.resolve(repoRoot, entry) },
    outdir,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    minify: true,
    sourcemap: true,
    outExtension: { '.js': '.mjs' },
    chunkNames: `${BUNDLE_CHUNK_DIR}/[name]-[hash]`,
    banner: { js: ESM_REQUIRE_BANNER },
    define: BUNDLE_DEFINE,
    alias: Object.fromEntries(
      Object.entries(BUNDLE_ALIASES).map(([name, stub]) => [name, path.resolve(repoRoot, stub)]),
    ),
    absWorkingDir: repoRoot,
    logLevel: 'error',
  };
}

/**
 * Copies the package files a function reads at runtime into its asset, beside the entry
 * (`FunctionSpec.bundleFiles`), resolved from the repository's node_modules.
 */
export function copyBundleFiles(repoRoot: string, files: FunctionSpec['bundleFiles'], outdir: string): void {
  const resolveFrom = createRequire(path.join(realpathSync(repoRoot), 'package.json'));
  for (const file of files ?? []) {
    if (!/^[A-Za-z0-9._-]+$/.test(file.assetFile)) {
      throw new Error(`bundleFiles: ${file.assetFile} is not a plain file name`);
    }
    copyFileSync(realpathSync(resolveFrom.resolve(file.packageFile)), path.join(outdir, file.assetFile));
  }
}

/** Bundles one catalog function into `outdir` (its Lambda asset): the entry, its chunks, its files. */
export function bundleFunction(
  repoRoot: string,
  spec: Pick<FunctionSpec, 'entry' | 'bundleFiles'>,
  outdir: string,
): Metafile {
  const { metafile } = buildSync({ ...bundleOptions(repoRoot, spec.entry, outdir), metafile: true });
  const readsPhoneMetadata = Object.keys(metafile.inputs).some((input) =>
    input.endsWith('functions/platform/phone.ts'),
  );
  copyBundleFiles(
    repoRoot,
    [...(spec.bundleFiles ?? []), ...(readsPhoneMetadata ? [PHONE_METADATA] : [])],
    outdir,
  );
  return metafile;
}

/**
 * The files a Lambda init loads: the entry and, transitively, the chunks it imports statically (not
 * those behind an `import()`), as absolute paths.
 */
export function initFiles(metafile: Metafile, repoRoot: string, outdir: string): string[] {
  const entry = path.resolve(outdir, BUNDLE_ENTRY_FILE);
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const output = metafile.outputs[path.relative(repoRoot, file)];
    for (const imported of output?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external)
        visit(path.resolve(repoRoot, imported.path));
    }
  };
  visit(entry);
  return [...seen];
}

/** The JavaScript files of a bundle (entry and chunks), source maps left out, with their sizes. */
export function bundleFiles(outdir: string): { file: string; bytes: number }[] {
  return readdirSync(outdir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.mjs'))
    .map((name) => ({ file: path.join(outdir, name), bytes: statSync(path.join(outdir, name)).size }));
}
