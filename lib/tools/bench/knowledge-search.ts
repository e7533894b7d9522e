import { join } from 'node:path';
import MiniSearch from 'minisearch';
import { INDEX_OPTIONS } from '../../../functions/knowledge/search-index.js';
import { getKnowledgeBase, touchBase, upsertListing } from '../../../functions/knowledge/service.js';
import { getObject } from '../../../functions/platform/storage.js';
import { resetQueueClient } from '../../../functions/platform/queue.js';
import { resetTableClients } from '../../../functions/platform/table.js';
import { ApiClient } from '../cli/api-client.js';
import { seed } from '../cli/seed.js';
import { summarise, type LatencySummary } from './load.js';
import { startBenchStack } from './stack-process.js';

/**
 * Knowledge-base search at 10,000 items (BENCH_KB_ITEMS), on a stack of its own: a listings base is
 * filled with generated listings (written with the knowledge service from the bench, then indexed by
 * the stack's worker), and `GET …/knowledge-bases/{kb}/search?q=` is timed through the local gateway
 * with the owner's token, one request at a time, over varied queries (words, prefixes, typos). Its
 * floor, in the same run and taking turns with it: `GET …/knowledge-bases/{kb}` through the same
 * gateway with the same token (the same authentication and one GetItem: everything but the search).
 * Also shown, for scale: the same queries against the same index in memory in the bench's process
 * (MiniSearch alone). The first search of a container loads the index from the bucket; the warm-up
 * requests take that, and the measured ones are the steady state.
 */

export interface SearchReport {
  items: number;
  indexBytes: number;
  indexSeconds: number;
  search: LatencySummary;
  floor: LatencySummary;
  inMemory: LatencySummary;
  ratio: { p50: number; p99: number };
  budget: { p50: number; p99: number };
  withinBudget: boolean;
}

export const SEARCH_BUDGET = { p50: 2, p99: 3 } as const;

const SUBURBS = [
  'Manly',
  'Bondi',
  'Parramatta',
  'Newtown',
  'Mosman',
  'Coogee',
  'Balmain',
  'Randwick',
  'Ryde',
  'Penrith',
];
const STREETS = [
  'Harbour',
  'Ocean',
  'Wattle',
  'George',
  'Banksia',
  'Station',
  'Park',
  'Church',
  'Victoria',
  'Bay',
];
const FEATURES = [
  'pool',
  'harbour views',
  'renovated kitchen',
  'double garage',
  'courtyard garden',
  'balcony',
  'fireplace',
  'solar panels',
  'study',
  'granny flat',
];
const QUERIES = [
  'manly pool',
  'harbour views',
  'renovated kitchen bondi',
  'garag',
  'courtyard',
  'parramata', // a typo
  'four bedroom',
  'solar',
  'George Street',
  'granny flat penrith',
];

function listing(i: number) {
  const pick = <T>(list: T[], k: number) => list[(i * k + Math.floor(i / list.length)) % list.length];
  return {
    externalId: `B-${i}`,
    address: `${1 + (i % 300)} ${pick(STREETS, 7)} Street`,
    suburb: pick(SUBURBS, 3),
    state: 'NSW',
    postcode: String(2000 + (i % 200)),
    priceText: `$${(600 + (i % 1900)) * 1000}`,
    listingStatus: 'available' as const,
    bedrooms: 1 + (i % 5),
    bathrooms: 1 + (i % 3),
    description: `A ${['one', 'two', 'three', 'four', 'five'][i % 5]} bedroom home with ${pick(FEATURES, 11)} and ${pick(FEATURES, 13)}, close to shops and transport.`,
  };
}

async function timed(op: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await op();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export async function measureSearch(options: {
  root: string;
  items: number;
  samples: number;
  rounds: number;
  env: Record<string, string>;
  log: (line: string) => void;
}): Promise<SearchReport> {
  const { log } = options;
  const stack = await startBenchStack({
    root: options.root,
    stateDir: join(options.root, '.local', `bench-${process.pid}-knowledge`),
    logPath: join(options.root, '.local', 'bench-stack-knowledge.log'),
    env: options.env,
  });
  const environment = { ...process.env };
  try {
    Object.assign(process.env, stack.state.env);
    resetTableClients();
    resetQueueClient();
    const demo = await seed(stack.state, { plan: 'growth' }, log);
    const owner = new ApiClient(stack.state.base_url, demo.owner_token);
    const bases = `/api/v1/workspaces/${demo.workspace_id}/knowledge-bases`;
    const kb = await owner.post<{ id: string }>(bases, { name: 'Bench listings', kind: 'listings' });
    log(`knowledge search: writing ${options.items} listings`);
    const ref = { workspaceId: demo.workspace_id, knowledgeBaseId: kb.id };
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < options.items) {
          const i = next;
          next += 1;
          await upsertListing(ref, listing(i));
        }
      }),
    );
    const indexStarted = performance.now();
    await touchBase(ref.workspaceId, ref.knowledgeBaseId);
    for (;;) {
      const current = await owner.get<{ item_count: number }>(`${bases}/${kb.id}`);
      if (current.item_count >= options.items) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const indexSeconds = (performance.now() - indexStarted) / 1000;
    const stored = await getKnowledgeBase(ref.workspaceId, ref.knowledgeBaseId);
    const json = Buffer.from((await getObject(stored!.indexKey!))!).toString('utf8');
    log(
      `knowledge search: index of ${options.items} items built in ${indexSeconds.toFixed(1)} s (${(json.length / 1e6).toFixed(1)} MB)`,
    );

    const search = (i: number) =>
      owner.get(`${bases}/${kb.id}/search?${new URLSearchParams({ q: QUERIES[i % QUERIES.length] })}`);
    const get = () => owner.get(`${bases}/${kb.id}`);
    for (let i = 0; i < 20; i += 1) {
      await search(i);
      await get();
    }
    const searchTimes: number[] = [];
    const floorTimes: number[] = [];
    const perRound = Math.ceil(options.samples / options.rounds);
    for (let round = 0; round < options.rounds; round += 1) {
      for (let i = 0; i < perRound; i += 1) floorTimes.push(await timed(get));
      for (let i = 0; i < perRound; i += 1) searchTimes.push(await timed(() => search(round * perRound + i)));
    }
    const index = MiniSearch.loadJSON(json, INDEX_OPTIONS);
    const memoryTimes: number[] = [];
    for (let i = 0; i < options.samples + 20; i += 1) {
      const t = await timed(async () => index.search(QUERIES[i % QUERIES.length]));
      if (i >= 20) memoryTimes.push(t);
    }
    const s = summarise(searchTimes);
    const f = summarise(floorTimes);
    const ratio = { p50: s.p50 / f.p50, p99: s.p99 / f.p99 };
    return {
      items: options.items,
      indexBytes: json.length,
      indexSeconds,
      search: s,
      floor: f,
      inMemory: summarise(memoryTimes),
      ratio,
      budget: SEARCH_BUDGET,
      withinBudget: ratio.p50 <= SEARCH_BUDGET.p50 && ratio.p99 <= SEARCH_BUDGET.p99,
    };
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in environment)) delete process.env[key];
    Object.assign(process.env, environment);
    resetTableClients();
    resetQueueClient();
    await stack.stop();
  }
}

export function searchTable(r: SearchReport): string[] {
  const ms = (n: number) => `${n.toFixed(2)} ms`;
  const within = (ok: boolean) => (ok ? 'within' : '**OVER**');
  return [
    '| measure | floor (GET the knowledge base, same gateway and token) | search (GET …/search?q=) | ratio | budget | |',
    '|---|---:|---:|---:|---:|---|',
    `| p50 | ${ms(r.floor.p50)} | ${ms(r.search.p50)} | ${r.ratio.p50.toFixed(2)}x | ≤ ${r.budget.p50}x | ${within(r.ratio.p50 <= r.budget.p50)} |`,
    `| p99 | ${ms(r.floor.p99)} | ${ms(r.search.p99)} | ${r.ratio.p99.toFixed(2)}x | ≤ ${r.budget.p99}x | ${within(r.ratio.p99 <= r.budget.p99)} |`,
    `| in memory (MiniSearch alone, same index and queries) | | p50 ${ms(r.inMemory.p50)}, p99 ${ms(r.inMemory.p99)} | | | |`,
    `| index | | ${r.items} items, ${(r.indexBytes / 1e6).toFixed(1)} MB, built in ${r.indexSeconds.toFixed(1)} s | | | |`,
  ];
}
