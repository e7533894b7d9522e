/**
 * `npm run bench`: the budgets of DESIGN.md, measured on this machine against the real local stack
 * (started here in memory, stopped at the end):
 *  - start-call p99 through the local gateway vs 2x the sum of its own DynamoDB round trips, timed in
 *    the same run (3 on the API-key happy path; the in-process test holds it to at most 4),
 *  - each function bundle's size and cold load (a fresh Node process importing it, median of 3), as
 *    ratios to a bare DynamoDB-reading handler bundled in the same run: budget 2x size, 1.5x cold load
 *    (lib/bench/bundles.ts; the project's bundle check, ../shared/checks/bundles, holds the same).
 * Results print as a table and are written to .local/bench.json.
 */
import '../lib/local/node-version-warning.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { catalog } from '../lib/catalog.js';
import { bundlesTable, measureBundles } from '../lib/bench/bundles.js';
import { measureStartCall, recordDynamoSpans } from '../lib/bench/start-call.js';
import { ApiClient } from '../lib/cli/api-client.js';
import { seed } from '../lib/cli/seed.js';
import { startLocalStack } from '../lib/local/stack.js';

const ROOT = resolve(import.meta.dirname, '..');
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
    scheduler: false,
    // Calls play out slowly, so the simulator and the pipeline stay quiet while start-call is timed.
    defaults: { POWERTOOLS_LOG_LEVEL: 'ERROR', SIMULATOR_TIME_SCALE: '1' },
  });
  try {
    const demo = await seed(stack.state, { plan: 'growth' }, log);
    const owner = new ApiClient(stack.state.base_url, demo.owner_token);
    await owner.patch(`/api/v1/workspaces/${demo.workspace_id}`, { concurrent_call_limit: 1000 });

    log(`measuring ${SAMPLES} start-calls and their DynamoDB round trips`);
    const spans = recordDynamoSpans();
    const startCall = await measureStartCall({
      spans,
      baseUrl: stack.state.base_url,
      workspaceId: demo.workspace_id,
      agentId: demo.agent_id,
      apiKey: demo.api_key,
      samples: SAMPLES,
    });
    const budgetMs = 2 * startCall.roundTrips.mean;

    log('bundling every function');
    const bundles = await measureBundles(ROOT, catalog, join(ROOT, '.local', 'bench-bundles'));

    const report = { date: new Date().toISOString(), startCall, budgetMs, bundles };
    mkdirSync(join(ROOT, '.local'), { recursive: true });
    writeFileSync(join(ROOT, '.local', 'bench.json'), `${JSON.stringify(report, null, 2)}\n`);

    const f = (n: number) => n.toFixed(1);
    const lines = [
      '## start-call (local gateway, API key, sequential)',
      `its DynamoDB round trips (GetItem key + TransactGet + TransactWrite): sum mean ${f(startCall.roundTrips.mean)} ms, p99 ${f(startCall.roundTrips.p99)} ms`,
      `start-call: p50 ${f(startCall.latency.p50)} ms, p90 ${f(startCall.latency.p90)} ms, p99 ${f(startCall.latency.p99)} ms (statuses ${JSON.stringify(startCall.statuses)})`,
      `budget: p99 within 2 x that sum = ${f(budgetMs)} ms → ${startCall.latency.p99 <= budgetMs ? 'within budget' : 'OVER BUDGET'}`,
      '',
      '## function bundles (esbuild as the CDK bundles them: minified ESM, node22) vs a bare handler',
      ...bundlesTable(bundles),
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
