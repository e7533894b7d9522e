import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** The dashboard's budget: script gzipped, the first load and each page's own chunks. */
export const WEB_BUDGET = {
  firstLoadKb: 60,
  pageChunkKb: 30,
  /**
   * Chunks that are a vendor SDK loaded for one rare path only, with their own budget: Twilio's Voice
   * SDK, loaded only when a test call uses the twilio transport (never on a first load, nor locally).
   */
  libraryChunkKb: { 'src/pages/agent/twilio-call.ts': 50 } as Record<string, number>,
} as const;

interface ManifestChunk {
  file: string;
  src?: string;
  isEntry?: boolean;
  isDynamicEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
}

export interface WebReport {
  budget: typeof WEB_BUDGET;
  /** The entry and every chunk it imports statically: what a first visit runs before any page. */
  firstLoad: { files: string[]; gzipKb: number; within: boolean };
  /** Each lazily loaded chunk (a page, or a library one page loads) and what it adds to the first load. */
  chunks: { name: string; files: string[]; gzipKb: number; within: boolean }[];
  over: string[];
}

const kb = (bytes: number) => Math.round((bytes / 1024) * 10) / 10;

/**
 * Measures web/dist (built by `npm run build:web`) from Vite's manifest: gzip -9 of each script,
 * the first load (the entry and its static imports) and each dynamically loaded chunk with the static
 * imports it adds beyond the first load.
 */
export function measureWeb(dist: string): WebReport {
  const manifest = JSON.parse(readFileSync(join(dist, '.vite', 'manifest.json'), 'utf8')) as Record<
    string,
    ManifestChunk
  >;
  const gzipped = (file: string) => gzipSync(readFileSync(join(dist, file)), { level: 9 }).length;
  const staticClosure = (key: string, into = new Set<string>()): Set<string> => {
    if (into.has(key)) return into;
    into.add(key);
    for (const imported of manifest[key]?.imports ?? []) staticClosure(imported, into);
    return into;
  };
  const entry = Object.keys(manifest).find((key) => manifest[key].isEntry);
  if (!entry) throw new Error('web/dist/.vite/manifest.json has no entry');
  const first = staticClosure(entry);
  const size = (keys: Iterable<string>) =>
    [...keys].reduce((sum, key) => sum + gzipped(manifest[key].file), 0);
  const firstKb = kb(size(first));
  const chunks = Object.keys(manifest)
    .filter((key) => manifest[key].isDynamicEntry)
    .map((key) => {
      const own = [...staticClosure(key)].filter((k) => !first.has(k));
      const gzipKb = kb(size(own));
      return {
        name: manifest[key].src ?? key,
        files: own.map((k) => manifest[k].file),
        gzipKb,
        within: gzipKb <= (WEB_BUDGET.libraryChunkKb[manifest[key].src ?? key] ?? WEB_BUDGET.pageChunkKb),
      };
    })
    .sort((a, b) => b.gzipKb - a.gzipKb);
  const firstLoad = {
    files: [...first].map((k) => manifest[k].file),
    gzipKb: firstKb,
    within: firstKb <= WEB_BUDGET.firstLoadKb,
  };
  return {
    budget: WEB_BUDGET,
    firstLoad,
    chunks,
    over: [
      ...(firstLoad.within ? [] : ['first load']),
      ...chunks.filter((c) => !c.within).map((c) => c.name),
    ],
  };
}

export function webTable(report: WebReport): string[] {
  return [
    '| script (gzip -9) | KB | budget |',
    '|---|---|---|',
    `| first load (${report.firstLoad.files.length} files) | ${report.firstLoad.gzipKb} | ≤ ${report.budget.firstLoadKb}: ${report.firstLoad.within ? 'within' : '**over**'} |`,
    ...report.chunks.map(
      (chunk) =>
        `| ${chunk.name} | ${chunk.gzipKb} | ≤ ${report.budget.pageChunkKb}: ${chunk.within ? 'within' : '**over**'} |`,
    ),
  ];
}
