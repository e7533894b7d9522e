/**
 * `npm run bench`: the budgets of docs/architecture.md, measured on this machine against the real local stack
 * (`npm start`'s, started here as a child process in memory, stopped at the end):
 *  - start-call at the database's speed: the floor — start-call's least work (3 GetItem, 1
 *    TransactWriteItems, 1 SendMessage to a bench-only queue) done directly with the handlers' own SDK
 *    clients against the same DynamoDB Local and fauxqs — and start-call through the local gateway with
 *    an API key, both one at a time (p50, p99) and by 8 loops at once (throughput), in the same run;
 *    budget: start-call p50 ≤ 1.5x the floor's, p99 ≤ 2x, throughput ≥ 0.6x (lib/tools/bench/floor.ts),
 *  - the cost of a call, start-call to the post-call webhook at the demo receiver: DynamoDB requests
 *    by command, queue messages and the stack's CPU, per call over BENCH_CALLS calls, from the stack's
 *    own counters between two quiescent points (GET /_local/metrics; lib/tools/bench/call-cost.ts),
 *    and the same call with the agent's PII redaction on against off (BENCH_REDACTION_CALLS, 10, each way),
 *  - each function bundle's size and cold load (a fresh Node process importing it, median of 3), as
 *    ratios to a bare DynamoDB-reading handler bundled in the same run: budget 2x size, 1.5x cold load
 *    (lib/tools/bench/bundles.ts; the reviewers' bundle check holds the same).
 *  - knowledge-base search over BENCH_KB_ITEMS (10,000) listings through the gateway, p50 and p99 against
 *    a GET of the same base (same gateway, token and GetItem) in the same run (lib/tools/bench/knowledge-search.ts).
 *  - a batch campaign of BENCH_CAMPAIGN_CONTACTS (10,000) contacts under a cap of BENCH_CAMPAIGN_CAP (20),
 *    calls at SIMULATOR_TIME_SCALE BENCH_CAMPAIGN_TIME_SCALE (120): every contact dialled exactly once
 *    (0 duplicates, 0 lost, from the call records), the live calls sampled never above the cap, and
 *    dials per second against the cap's theoretical rate (lib/tools/bench/campaign.ts).
 *  - an SMS campaign of BENCH_SMS_MESSAGES (5,000) messages: messages per second from PATCH sending to
 *    `sent` (and to every delivery callback applied), counts and charges exact, against BatchWriteItem
 *    of as many items in the same run (lib/tools/bench/sms-campaign.ts).
 *  - the dashboard's script (web/dist, built when stale): gzipped, the first load ≤ 60 KB and each
 *    lazily loaded page chunk ≤ 30 KB (lib/tools/bench/web.ts; part `web`).
 *  - the voice runtime (part `conversation`): latency per turn, BENCH_CONVERSATION_CALLS (20) calls at once,
 *    BENCH_CONVERSATION_TURNS (10) turns each, the caller pausing BENCH_CONVERSATION_PAUSE_MS (1000) on
 *    average after each reply, against its floor through the same relay gateway in the same run (and one
 *    round back to back, no pause, for reference), and BENCH_RELAY_SESSIONS (100) relay sessions of BENCH_RELAY_SESSION_TURNS (10)
 *    turns at once: every prompt answered once, by its own call, transcripts exact
 *    (lib/tools/bench/conversation.ts).
 *  - a handoff (part `handoff`): the caller's line → the target agent's first words, BENCH_HANDOFF_CALLS
 *    (60) calls, BENCH_HANDOFF_CONCURRENCY (10) live at once, each caller asking after a pause of
 *    BENCH_HANDOFF_PAUSE_MS (1000) on average, beside the same two model requests made directly;
 *    budget: the service's part ≤ 20 ms p50 (lib/tools/bench/handoff.ts).
 *  - what a call costs in money (part `cost`, not in the default set): a 3-minute call with 10 turns, a
 *    knowledge search, a post-call webhook and SMS action, and one SMS campaign message — DynamoDB
 *    requests and units, Lambda invocations and GB-seconds, SQS, S3, API Gateway, model tokens — priced
 *    at the dated us-east-1 list prices of lib/tools/bench/unit-prices.ts (lib/tools/bench/cost.ts).
 * Results print as a table and are written to .local/bench.json.
 */
import '../lib/local/node-version-warning.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { catalog } from '../lib/cloud/catalog.js';
import { bundlesTable, measureBundles } from '../lib/tools/bench/bundles.js';
import {
  callCostTable,
  measureCallCost,
  measureRedactionCallCost,
  type CallCost,
} from '../lib/tools/bench/call-cost.js';
import { prepareFloor } from '../lib/tools/bench/floor.js';
import {
  combine,
  concurrent,
  sequential,
  type LatencySummary,
  type Runs,
  type Throughput,
} from '../lib/tools/bench/load.js';
import { startBenchStack, type BenchStack } from '../lib/tools/bench/stack-process.js';
import { startCallClient } from '../lib/tools/bench/start-call.js';
import { ApiClient } from '../lib/tools/cli/api-client.js';
import { importTable, measureImport } from '../lib/tools/bench/imports.js';
import { measureSearch, searchTable } from '../lib/tools/bench/knowledge-search.js';
import { campaignTable, measureCampaign } from '../lib/tools/bench/campaign.js';
import { measureSmsCampaign, smsCampaignTable } from '../lib/tools/bench/sms-campaign.js';
import { seed, type SeedResult } from '../lib/tools/cli/seed.js';
import { measureWeb, webTable } from '../lib/tools/bench/web.js';
import { WEB_DIST, ensureWebBuild } from '../lib/local/web.js';
import { cloudPathTable, conversationTable, measureConversation } from '../lib/tools/bench/conversation.js';
import { measureToolTurn, toolTurnTable } from '../lib/tools/bench/tool-turn.js';
import { handoffTable, measureHandoff } from '../lib/tools/bench/handoff.js';
import { costTable, hotKeysTable, measureCost } from '../lib/tools/bench/cost.js';
import { hotKeysReportTable, measureHotKeys } from '../lib/tools/bench/hotkeys.js';
import { DEFAULT_MEMORY_MB } from '../lib/cloud/constructs/service-function.js';
import { measureRedaction, redactionTable } from '../lib/tools/bench/redaction.js';

const ROOT = resolve(import.meta.dirname, '..');
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const WARMUP = 20;
/**
 * The floor and start-call take turns, in this many rounds of each measure, so that both see the
 * same machine (other work on it comes and goes): the ratios compare like with like.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENCY = 8;
const CONCURRENT_OPERATIONS = Number(process.env.BENCH_CONCURRENT_OPERATIONS ?? 400);
const CALLS = Number(process.env.BENCH_CALLS ?? 20);
/** Calls made before the measured ones (BENCH_CALL_WARMUP): the cost of a call in a running stack. */
const CALL_WARMUP = Number(process.env.BENCH_CALL_WARMUP ?? 20);
/** As `npm start` runs: INFO logs and the gateway's access log (BENCH_LOG_LEVEL to change). */
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'INFO';
/** A number the simulator answers (the README's example). */
const TO_PHONE = '+61491570156';
/**
 * start-call's calls with and without their play-out (BENCH_START_CALL_PLAYOUT=off): off dials the
 * simulator's external scenario (+61491570116), answered with no relay session opened by the
 * simulator — dispatched, its status callbacks handled, but no conversation (no turns, no model) on
 * the same 2 cores while start-call is timed.
 */
const START_CALL_PLAYOUT = process.env.BENCH_START_CALL_PLAYOUT !== 'off';
const START_CALL_TO = START_CALL_PLAYOUT ? TO_PHONE : '+61491570116';
/** Budgets: start-call over the floor. */
const START_CALL_BUDGET = { p50: 1.5, p99: 2, throughput: 0.6 } as const;
/** Which parts to run (comma-separated): start-call, call-cost, bundles, … Default: all. */
const PARTS = new Set(
  (
    process.env.BENCH_PARTS ??
    'start-call,call-cost,bundles,import,campaign,knowledge,sms,web,conversation,tools,handoff,redaction'
  ).split(','),
);
/** Knowledge-base search (lib/tools/bench/knowledge-search.ts, part `knowledge`): listings in the base. */
const KB_ITEMS = Number(process.env.BENCH_KB_ITEMS ?? 10_000);
/** The batch campaign (lib/tools/bench/campaign.ts, part `campaign`): contacts, cap, simulator time scale. */
const CAMPAIGN_CONTACTS = Number(process.env.BENCH_CAMPAIGN_CONTACTS ?? 10_000);
const CAMPAIGN_CAP = Number(process.env.BENCH_CAMPAIGN_CAP ?? 20);
const CAMPAIGN_TIME_SCALE = Number(process.env.BENCH_CAMPAIGN_TIME_SCALE ?? 120);
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
/** Contact import (lib/tools/bench/imports.ts): rows of the generated CSV (part `import`). */
const IMPORT_ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 50_000);

async function demoOrganisation(stack: BenchStack): Promise<SeedResult> {
  const demo = await seed(stack.state, { plan: 'growth' }, log);
  const owner = new ApiClient(stack.state.base_url, demo.owner_token);
  await owner.patch(`/api/v1/workspaces/${demo.workspace_id}`, { concurrent_call_limit: 1000 });
  return demo;
}

/** CPU milliseconds per operation, one at a time: the bench's own process and each of the stack's. */
type CpuPerOperation = Record<string, number>;

interface StartCallReport {
  floor: { sequential: LatencySummary; concurrent: Throughput; cpuMsPerOperation: CpuPerOperation };
  startCall: {
    sequential: LatencySummary;
    concurrent: Throughput;
    cpuMsPerOperation: CpuPerOperation;
    statuses: Record<number, number>;
  };
  ratios: { p50: number; p99: number; throughput: number };
  budget: typeof START_CALL_BUDGET;
  withinBudget: { p50: boolean; p99: boolean; throughput: boolean };
}

/**
 * Start-call and its floor against one stack, taking turns (ROUNDS). Calls play out at
 * SIMULATOR_TIME_SCALE 1: they are dispatched and answered while start-call is timed, as they would
 * be, but none ends (and starts the post-call pipeline) before the timing is over.
 */
async function measureStartCallAgainstFloor(): Promise<StartCallReport> {
  const stack = await startBenchStack({
    root: ROOT,
    stateDir: join(ROOT, '.local', `bench-${process.pid}-start-call`),
    logPath: join(ROOT, '.local', 'bench-stack-start-call.log'),
    env: { POWERTOOLS_LOG_LEVEL: LOG_LEVEL, SIMULATOR_TIME_SCALE: '1' },
  });
  const environment = { ...process.env };
  try {
    const demo = await demoOrganisation(stack);
    const client = startCallClient({
      baseUrl: stack.state.base_url,
      workspaceId: demo.workspace_id,
      agentId: demo.agent_id,
      apiKey: demo.api_key,
      toPhone: START_CALL_TO,
      maxSockets: CONCURRENCY,
    });
    await client.op(0);
    const callId = client.callIds[0];
    if (!callId) throw new Error(`start-call answered ${JSON.stringify(client.statuses)}`);

    // The floor's clients are the handlers' own, pointed at this stack's DynamoDB Local and fauxqs.
    Object.assign(process.env, stack.state.env);
    const floor = await prepareFloor({
      workspaceId: demo.workspace_id,
      agentId: demo.agent_id,
      apiKey: demo.api_key,
      callId,
    });
    log(`warming up: ${WARMUP} of each`);
    let floorIndex = 0;
    let startIndex = 1;
    await sequential(floor.op, WARMUP, floorIndex);
    await sequential(client.op, WARMUP, startIndex);
    floorIndex += WARMUP;
    startIndex += WARMUP;

    const perRound = (n: number) => Math.max(1, Math.round(n / ROUNDS));
    // CPU over the one-at-a-time runs: the bench's own (the floor's SDK calls, start-call's client)
    // and each of the stack's processes (GET /_local/metrics).
    const cpu = { floor: {} as CpuPerOperation, startCall: {} as CpuPerOperation };
    const timedCpu = async (into: CpuPerOperation, run: () => Promise<Runs>): Promise<Runs> => {
      const before = await stack.metrics();
      const bench = process.cpuUsage();
      const runs = await run();
      const benchCpu = process.cpuUsage(bench);
      const after = await stack.metrics();
      into.bench = (into.bench ?? 0) + (benchCpu.user + benchCpu.system) / 1000;
      for (const [name, metrics] of Object.entries(after.processes))
        into[name] = (into[name] ?? 0) + metrics.cpu_ms - (before.processes[name]?.cpu_ms ?? 0);
      return runs;
    };
    const runs = {
      floorSequential: [] as Runs[],
      startSequential: [] as Runs[],
      floorConcurrent: [] as Runs[],
      startConcurrent: [] as Runs[],
    };
    log(`one at a time: ${SAMPLES} of each in ${ROUNDS} rounds`);
    for (let round = 0; round < ROUNDS; round += 1) {
      const [floorFrom, startFrom] = [floorIndex, startIndex];
      runs.floorSequential.push(
        await timedCpu(cpu.floor, () => sequential(floor.op, perRound(SAMPLES), floorFrom)),
      );
      floorIndex += perRound(SAMPLES);
      runs.startSequential.push(
        await timedCpu(cpu.startCall, () => sequential(client.op, perRound(SAMPLES), startFrom)),
      );
      startIndex += perRound(SAMPLES);
    }
    log(`${CONCURRENCY} at once: ${CONCURRENT_OPERATIONS} of each in ${ROUNDS} rounds`);
    for (let round = 0; round < ROUNDS; round += 1) {
      runs.floorConcurrent.push(
        await concurrent(floor.op, CONCURRENCY, perRound(CONCURRENT_OPERATIONS), floorIndex),
      );
      floorIndex += perRound(CONCURRENT_OPERATIONS);
      runs.startConcurrent.push(
        await concurrent(client.op, CONCURRENCY, perRound(CONCURRENT_OPERATIONS), startIndex),
      );
      startIndex += perRound(CONCURRENT_OPERATIONS);
    }
    await floor.cleanup();
    client.close();
    const total = startIndex;
    if ((client.statuses[201] ?? 0) !== total)
      throw new Error(`start-call answered ${JSON.stringify(client.statuses)} (all ${total} should be 201)`);
    const floorSequential = combine(runs.floorSequential, 1).latency;
    const startSequential = combine(runs.startSequential, 1).latency;
    const perOperation = (total: CpuPerOperation, n: number) =>
      Object.fromEntries(Object.entries(total).map(([name, ms]) => [name, Math.round((ms / n) * 100) / 100]));
    const floorConcurrent = combine(runs.floorConcurrent, CONCURRENCY);
    const startConcurrent = combine(runs.startConcurrent, CONCURRENCY);

    const ratios = {
      p50: startSequential.p50 / floorSequential.p50,
      p99: startSequential.p99 / floorSequential.p99,
      throughput: startConcurrent.perSecond / floorConcurrent.perSecond,
    };
    return {
      floor: {
        sequential: floorSequential,
        concurrent: floorConcurrent,
        cpuMsPerOperation: perOperation(cpu.floor, floorSequential.count),
      },
      startCall: {
        sequential: startSequential,
        concurrent: startConcurrent,
        cpuMsPerOperation: perOperation(cpu.startCall, startSequential.count),
        statuses: client.statuses,
      },
      ratios,
      budget: START_CALL_BUDGET,
      withinBudget: {
        p50: ratios.p50 <= START_CALL_BUDGET.p50,
        p99: ratios.p99 <= START_CALL_BUDGET.p99,
        throughput: ratios.throughput >= START_CALL_BUDGET.throughput,
      },
    };
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in environment)) delete process.env[key];
    Object.assign(process.env, environment);
    await stack.stop();
  }
}

/** The cost of a call, on a stack of its own where calls play out at 60x (as in the tests). */
async function measureCostOfACall(): Promise<CallCost> {
  const stack = await startBenchStack({
    root: ROOT,
    stateDir: join(ROOT, '.local', `bench-${process.pid}-call-cost`),
    logPath: join(ROOT, '.local', 'bench-stack-call-cost.log'),
    env: { POWERTOOLS_LOG_LEVEL: LOG_LEVEL, SIMULATOR_TIME_SCALE: '60' },
  });
  try {
    const demo = await demoOrganisation(stack);
    log(`cost of a call: ${CALLS} calls, start-call to the post-call webhook`);
    const ids = { stack, workspaceId: demo.workspace_id, agentId: demo.agent_id, apiKey: demo.api_key, log };
    const cost = await measureCallCost({ ...ids, toPhone: TO_PHONE, calls: CALLS, warmupCalls: CALL_WARMUP });
    // The same call with the agent's PII redaction on, against off (BENCH_REDACTION_CALLS each way).
    const calls = Number(process.env.BENCH_REDACTION_CALLS ?? 10);
    const redaction = await measureRedactionCallCost({
      ...ids,
      ownerToken: demo.owner_token,
      toPhone: TO_PHONE,
      calls,
    });
    return { ...cost, redaction };
  } finally {
    await stack.stop();
  }
}

const f = (n: number, digits = 1) => n.toFixed(digits);
const mark = (ok: boolean) => (ok ? 'within' : '**OVER**');

const cpuLine = (cpu: CpuPerOperation) =>
  Object.entries(cpu)
    .map(([name, ms]) => `${name} ${f(ms, 2)}`)
    .join(', ') + ' ms';

function startCallTable(r: StartCallReport): string[] {
  const { floor, startCall, ratios, budget, withinBudget } = r;
  return [
    '| measure | floor (SDK only) | start-call (gateway, API key) | ratio | budget | |',
    '|---|---:|---:|---:|---:|---|',
    `| p50, one at a time | ${f(floor.sequential.p50)} ms | ${f(startCall.sequential.p50)} ms | ${f(ratios.p50, 2)}x | ≤ ${budget.p50}x | ${mark(withinBudget.p50)} |`,
    `| p99, one at a time | ${f(floor.sequential.p99)} ms | ${f(startCall.sequential.p99)} ms | ${f(ratios.p99, 2)}x | ≤ ${budget.p99}x | ${mark(withinBudget.p99)} |`,
    `| throughput, ${CONCURRENCY} at once | ${f(floor.concurrent.perSecond)}/s | ${f(startCall.concurrent.perSecond)}/s | ${f(ratios.throughput, 2)}x | ≥ ${budget.throughput}x | ${mark(withinBudget.throughput)} |`,
    `| p50 / p99, ${CONCURRENCY} at once | ${f(floor.concurrent.latency.p50)} / ${f(floor.concurrent.latency.p99)} ms | ${f(startCall.concurrent.latency.p50)} / ${f(startCall.concurrent.latency.p99)} ms | | | |`,
    `| CPU per operation, one at a time | ${cpuLine(floor.cpuMsPerOperation)} | ${cpuLine(startCall.cpuMsPerOperation)} | | | |`,
  ];
}

async function main(): Promise<void> {
  mkdirSync(join(ROOT, '.local'), { recursive: true });
  const startCall = PARTS.has('start-call') ? await measureStartCallAgainstFloor() : undefined;
  const callCost = PARTS.has('call-cost') ? await measureCostOfACall() : undefined;
  // ── What a call costs in money: a 3-minute call, 10 turns, and one SMS campaign message (lib/tools/bench/cost.ts) ──
  // ── A busy workspace's partition keys: outbound calls, writes per key scaled to 100 calls a second (lib/tools/bench/hotkeys.ts) ──
  const hotkeys = PARTS.has('hotkeys')
    ? await measureHotKeys({
        root: ROOT,
        calls: Number(process.env.BENCH_HOTKEYS_CALLS ?? 3),
        warmupCalls: 1,
        env: { POWERTOOLS_LOG_LEVEL: LOG_LEVEL },
        log,
      })
    : undefined;
  const cost =
    PARTS.has('cost') || PARTS.has('cost-hotkeys')
      ? await measureCost({
          root: ROOT,
          calls: Number(process.env.BENCH_COST_CALLS ?? 5),
          warmupCalls: Number(process.env.BENCH_COST_WARMUP ?? 2),
          functions: catalog,
          defaultMemoryMb: DEFAULT_MEMORY_MB,
          env: { POWERTOOLS_LOG_LEVEL: LOG_LEVEL },
          log,
        })
      : undefined;
  // ── Contact import: 50,000 rows vs BatchWriteItem of as many items (lib/tools/bench/imports.ts) ──
  const contactImport = PARTS.has('import')
    ? await measureImport({ root: ROOT, rows: IMPORT_ROWS, env: { POWERTOOLS_LOG_LEVEL: LOG_LEVEL }, log })
    : undefined;

  // ── Batch campaign: every contact dialled once, the cap held, dials/s vs the cap's rate ──
  const campaign = PARTS.has('campaign')
    ? await measureCampaign({
        root: ROOT,
        contacts: CAMPAIGN_CONTACTS,
        cap: CAMPAIGN_CAP,
        timeScale: CAMPAIGN_TIME_SCALE,
        env: { POWERTOOLS_LOG_LEVEL: LOG_LEVEL },
        log,
      })
    : undefined;

  // ── Knowledge-base search: 10,000 listings, search vs GET of the base through the gateway ──
  const knowledgeSearch = PARTS.has('knowledge')
    ? await measureSearch({
        root: ROOT,
        items: KB_ITEMS,
        samples: SAMPLES,
        rounds: ROUNDS,
        env: { POWERTOOLS_LOG_LEVEL: LOG_LEVEL },
        log,
      })
    : undefined;

  // ── SMS campaign: 5,000 messages, messages/s vs BatchWriteItem of as many items (lib/tools/bench/sms-campaign.ts) ──
  const smsCampaign = PARTS.has('sms')
    ? await measureSmsCampaign({
        root: ROOT,
        messages: Number(process.env.BENCH_SMS_MESSAGES ?? 5_000),
        env: { POWERTOOLS_LOG_LEVEL: LOG_LEVEL },
        log,
      })
    : undefined;

  // ── The voice runtime: latency per turn vs its floor, 100 concurrent sessions (lib/tools/bench/conversation.ts) ──
  const conversation = PARTS.has('conversation')
    ? await measureConversation({
        root: ROOT,
        concurrentCalls: Number(process.env.BENCH_CONVERSATION_CALLS ?? 20),
        turns: Number(process.env.BENCH_CONVERSATION_TURNS ?? 10),
        rounds: Number(process.env.BENCH_CONVERSATION_ROUNDS ?? 5),
        callerPauseMs: Number(process.env.BENCH_CONVERSATION_PAUSE_MS ?? 1000),
        sessions: Number(process.env.BENCH_RELAY_SESSIONS ?? 100),
        sessionTurns: Number(process.env.BENCH_RELAY_SESSION_TURNS ?? 10),
        env: { POWERTOOLS_LOG_LEVEL: LOG_LEVEL, SIMULATOR_TIME_SCALE: '1' },
        log,
      })
    : undefined;
  // The same turns on the cloud's path: every frame as on a fresh Lambda container (no process cache),
  // as the frames of one call land on different containers in the cloud.
  const conversationCloud =
    PARTS.has('conversation') && process.env.BENCH_CONVERSATION_CLOUD_PATH !== 'off'
      ? await measureConversation({
          root: ROOT,
          concurrentCalls: Number(process.env.BENCH_CONVERSATION_CALLS ?? 20),
          turns: Number(process.env.BENCH_CONVERSATION_TURNS ?? 10),
          rounds: Number(process.env.BENCH_CONVERSATION_CLOUD_ROUNDS ?? 2),
          callerPauseMs: Number(process.env.BENCH_CONVERSATION_PAUSE_MS ?? 1000),
          sessions: Number(process.env.BENCH_RELAY_CLOUD_SESSIONS ?? 20),
          sessionTurns: Number(process.env.BENCH_RELAY_SESSION_TURNS ?? 10),
          env: {
            POWERTOOLS_LOG_LEVEL: LOG_LEVEL,
            SIMULATOR_TIME_SCALE: '1',
            CONVERSATION_PROCESS_CACHE: 'off',
          },
          log,
        })
      : undefined;

  // ── A tool turn: the model calls a function tool answering in 50 ms (lib/tools/bench/tool-turn.ts) ──
  const toolTurn = PARTS.has('tools')
    ? await measureToolTurn({
        root: ROOT,
        calls: Number(process.env.BENCH_TOOL_CALLS ?? 10),
        turns: Number(process.env.BENCH_TOOL_TURNS ?? 10),
        callerPauseMs: Number(process.env.BENCH_TOOL_PAUSE_MS ?? 1000),
        env: { POWERTOOLS_LOG_LEVEL: LOG_LEVEL, SIMULATOR_TIME_SCALE: '1' },
        log,
      })
    : undefined;

  // ── A handoff: the caller's line → the target agent's first words (lib/tools/bench/handoff.ts) ──
  const handoff = PARTS.has('handoff')
    ? await measureHandoff({
        root: ROOT,
        calls: Number(process.env.BENCH_HANDOFF_CALLS ?? 60),
        concurrency: Number(process.env.BENCH_HANDOFF_CONCURRENCY ?? 10),
        callerPauseMs: Number(process.env.BENCH_HANDOFF_PAUSE_MS ?? 1000),
        env: { POWERTOOLS_LOG_LEVEL: LOG_LEVEL, SIMULATOR_TIME_SCALE: '1' },
        log,
      })
    : undefined;

  let bundles;
  if (PARTS.has('bundles')) {
    log('bundling every function');
    bundles = await measureBundles(ROOT, catalog, join(ROOT, '.local', 'bench-bundles'));
  }

  // ── The dashboard's script: first load and each page's chunk, gzipped (lib/tools/bench/web.ts) ──
  let web;
  const redaction = PARTS.has('redaction') ? measureRedaction() : undefined;
  if (PARTS.has('web')) {
    await ensureWebBuild(log);
    web = measureWeb(WEB_DIST);
  }

  const report = {
    date: new Date().toISOString(),
    web,
    logLevel: LOG_LEVEL,
    startCall,
    callCost,
    cost,
    hotkeys,
    bundles,
    contactImport,
    campaign,
    knowledgeSearch,
    smsCampaign,
    conversation,
    toolTurn,
    handoff,
    redaction,
  };
  writeFileSync(join(ROOT, '.local', 'bench.json'), `${JSON.stringify(report, null, 2)}\n`);

  const lines = [
    ...(redaction
      ? [
          '## PII redaction: time per stored line vs its floor (same run, rules only)',
          ...redactionTable(redaction),
          '',
        ]
      : []),
    ...(startCall
      ? [
          `## start-call vs its floor (same DynamoDB Local and fauxqs, same run; log level ${LOG_LEVEL}; calls ${START_CALL_PLAYOUT ? 'played out by the simulator' : 'not played out (BENCH_START_CALL_PLAYOUT=off)'})`,
          ...startCallTable(startCall),
          '',
        ]
      : []),
    ...(callCost
      ? [
          `## the cost of a call (start-call → completed → post-call webhook delivered; mean of ${callCost.calls})`,
          ...callCostTable(callCost),
          '',
        ]
      : []),
    ...(cost && PARTS.has('cost') ? [...costTable(cost), ''] : []),
    ...(cost && PARTS.has('cost-hotkeys') ? [...hotKeysTable(cost), ''] : []),
    ...(hotkeys ? [...hotKeysReportTable(hotkeys), ''] : []),
    ...(bundles
      ? [
          '## function bundles (esbuild as the CDK bundles them: minified ESM, node22) vs a bare handler',
          ...bundlesTable(bundles),
          '',
        ]
      : []),
    ...(web
      ? [
          '## the dashboard (web/dist): script gzipped, the first load and each lazily loaded chunk',
          ...webTable(web),
          '',
        ]
      : []),
    ...(contactImport
      ? [
          `## contact import: ${contactImport.rows} CSV rows (2 % invalid, 5 % duplicates) vs its floor, same run`,
          ...importTable(contactImport),
          '',
        ]
      : []),
    ...(campaign
      ? [
          `## batch campaign: ${campaign.contacts} contacts, cap ${campaign.cap} (simulator time scale ${campaign.timeScale})`,
          ...campaignTable(campaign),
          '',
        ]
      : []),
    ...(smsCampaign
      ? [
          `## SMS campaign: ${smsCampaign.messages} messages vs its floor, same run`,
          ...smsCampaignTable(smsCampaign),
          '',
        ]
      : []),
    ...(knowledgeSearch
      ? [
          `## knowledge-base search: ${knowledgeSearch.items} listings, one request at a time, vs its floor in the same run`,
          ...searchTable(knowledgeSearch),
          '',
        ]
      : []),
    ...(conversation
      ? [
          `## the voice runtime: turns vs their floor, and ${conversation.concurrency.sessions} sessions at once (log level ${LOG_LEVEL})`,
          ...conversationTable(conversation),
          '',
          ...(conversationCloud ? [...cloudPathTable(conversation, conversationCloud), ''] : []),
        ]
      : []),
    ...(toolTurn ? [...toolTurnTable(toolTurn), ''] : []),
    ...(handoff ? [...handoffTable(handoff), ''] : []),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
