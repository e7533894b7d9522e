/**
 * `npm run bench`: the budgets of DESIGN.md, measured on this machine against the real local stack
 * (started here in memory, stopped at the end):
 *  - start-call p99 through the local gateway vs 2x the sum of its DynamoDB round trips (at most 4),
 *  - each function bundle's size and cold-load time.
 * Results print as a table and are written to .local/bench.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { catalog } from '../lib/catalog.js';
import { measureBundles } from '../lib/bench/bundles.js';
import { measureRoundTrip, measureStartCall } from '../lib/bench/start-call.js';
import { ApiClient } from '../lib/cli/api-client.js';
import { seed } from '../lib/cli/seed.js';
import { startLocalStack } from '../lib/local/stack.js';

const ROOT = resolve(import.meta.dirname, '..');
const START_CALL_ROUND_TRIPS = 4;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

async function main(): Promise<void> {
  const stateDir = join(ROOT, '.local', `bench-${process.pid}`);
  const stack = await startLocalStack({
    port: 0,
    inMemory: true,
    stateDir,
    verbose: false,
    accessLog: false,
    defaults: { POWERTOOLS_LOG_LEVEL: 'ERROR', SIMULATOR_TIME_SCALE: '600' },
  });
  try {
    const demo = await seed(stack.state, { plan: 'growth' }, log);
    const owner = new ApiClient(stack.state.base_url, demo.owner_token);
    await owner.patch(`/api/v1/workspaces/${demo.workspace_id}`, { concurrent_call_limit: 1000 });

    log(`measuring ${SAMPLES} DynamoDB round trips and ${SAMPLES} start-calls`);
    const roundTrip = await measureRoundTrip(stack.env.TABLE_NAME, SAMPLES);
    const startCall = await measureStartCall({
      baseUrl: stack.state.base_url,
      workspaceId: demo.workspace_id,
      agentId: demo.agent_id,
      apiKey: demo.api_key,
      samples: SAMPLES,
    });
    const budgetMs = 2 * START_CALL_ROUND_TRIPS * roundTrip.mean;

    log('bundling every function');
    const bundles = await measureBundles(ROOT, catalog, join(ROOT, '.local', 'bench-bundles'));

    const report = { date: new Date().toISOString(), roundTrip, startCall, budgetMs, bundles };
    mkdirSync(join(ROOT, '.local'), { recursive: true });
    writeFileSync(join(ROOT, '.local', 'bench.json'), `${JSON.stringify(report, null, 2)}\n`);

    const f = (n: number) => n.toFixed(1);
    const lines = [
      '## start-call (local gateway, API key, sequential)',
      `DynamoDB round trip: mean ${f(roundTrip.mean)} ms, p99 ${f(roundTrip.p99)} ms`,
      `start-call: p50 ${f(startCall.latency.p50)} ms, p90 ${f(startCall.latency.p90)} ms, p99 ${f(startCall.latency.p99)} ms (statuses ${JSON.stringify(startCall.statuses)})`,
      `budget: p99 within 2 x ${START_CALL_ROUND_TRIPS} round trips = ${f(budgetMs)} ms → ${startCall.latency.p99 <= budgetMs ? 'within budget' : 'OVER BUDGET'}`,
      '',
      '## function bundles (esbuild, minified ESM, node22)',
      '| function | bytes | cold load (ms) |',
      '|---|---:|---:|',
      ...bundles.map((b) => `| ${b.id} | ${b.bytes} | ${f(b.coldLoadMs)} |`),
      '',
      '10,000-contact campaign and 50,000-row import: not measured (campaigns and imports are not built yet).',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await stack.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
