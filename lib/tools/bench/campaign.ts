import { join } from 'node:path';
import { WorkspaceEntity } from '../../../functions/access/entities.js';
import { BillingAccountEntity } from '../../../functions/billing/entities.js';
import { workspaceCalls } from '../../../functions/calling/call-log-merge.js';
import { BatchContactEntity } from '../../../functions/campaigns/entities.js';
import { ApiClient } from '../cli/api-client.js';
import { seed } from '../cli/seed.js';
import { startBenchStack } from './stack-process.js';

/**
 * The N-contact campaign (default 10,000; BENCH_CAMPAIGN_CONTACTS), on a stack of its own where calls
 * play out at SIMULATOR_TIME_SCALE = BENCH_CAMPAIGN_TIME_SCALE (default 120: a 60-second call takes
 * 0.5 s). The demo organisation's balance is raised (10,000 one-minute calls cost more than a plan's
 * credits), its workspace's concurrent_call_limit set to the cap, and a campaign with max_concurrency
 * = the cap gets a CSV of N distinct numbers (all answered). From PATCH running to `completed`:
 *  - exactly once: the campaign's calls are read from the table afterwards — duplicates = numbers
 *    called more than once, lost = eligible contacts not completed or never called (both must be 0);
 *  - the cap: the workspace's live calls (its `activeCalls` counter, what start-call's condition
 *    guards) and the campaign's `calling`, sampled every SAMPLE_MS, never above the cap;
 *  - dials per second against the cap's theoretical rate: cap ÷ the mean lifetime of a call (created
 *    → ended, from the same run's call records) — how full the dialer keeps its slots;
 *  - what a call costs: DynamoDB requests per call of the dialer's function and of the whole stack
 *    (GET /_local/metrics), and the number of dialer passes.
 * The bench stack runs no schedules: the dialer's follow-up passes (functions/campaigns/dialer.ts)
 * alone carry the campaign from PATCH running to completed. Each contact gets one attempt.
 */

export interface CampaignBenchReport {
  contacts: number;
  cap: number;
  timeScale: number;
  uploadSeconds: number;
  seconds: number;
  calls: number;
  duplicates: number;
  lost: number;
  /** Contacts whose one call failed (dialled once; e.g. the simulator did not answer in time). */
  failed: number;
  samples: number;
  maxLiveCalls: number;
  maxCampaignCalling: number;
  dialsPerSecond: number;
  meanCallSeconds: number;
  theoreticalDialsPerSecond: number;
  ratio: number;
  /** DynamoDB requests of the dialer's function (passes: reconcile, claims, start-call) per call. */
  dialerRequestsPerCall: number;
  /** DynamoDB requests of the whole stack per call (the call's own life, post-call, the dialer). */
  requestsPerCall: number;
  /** Dialer passes sent while it ran (ticks are off: follow-ups and `call.ended` nudges). */
  passes: number;
  exact: boolean;
  capHeld: boolean;
}

const SAMPLE_MS = 200;

export async function measureCampaign(options: {
  root: string;
  contacts: number;
  cap: number;
  timeScale: number;
  env: Record<string, string>;
  log: (line: string) => void;
}): Promise<CampaignBenchReport> {
  const { log, contacts, cap } = options;
  const stack = await startBenchStack({
    root: options.root,
    stateDir: join(options.root, '.local', `bench-${process.pid}-campaign`),
    logPath: join(options.root, '.local', 'bench-stack-campaign.log'),
    env: { ...options.env, SIMULATOR_TIME_SCALE: String(options.timeScale) },
  });
  const environment = { ...process.env };
  try {
    const demo = await seed(stack.state, { plan: 'growth' }, log);
    Object.assign(process.env, stack.state.env);
    await BillingAccountEntity.patch({ organisationId: demo.organisation_id })
      .set({ balanceUnits: contacts * 60 * 60 })
      .go();
    await WorkspaceEntity.patch({ workspaceId: demo.workspace_id }).set({ concurrentCallLimit: cap }).go();
    const owner = new ApiClient(stack.state.base_url, demo.owner_token);
    const campaigns = `/api/v1/workspaces/${demo.workspace_id}/campaigns`;
    const campaign = await owner.post<{ id: string }>(campaigns, {
      name: `Bench ${contacts}`,
      agent_id: demo.agent_id,
      max_concurrency: cap,
      // One attempt each: a call that fails (say, a simulator too slow to answer on a loaded machine)
      // is not tried again minutes later, so every number is dialled exactly once.
      retry: { max_attempts: 1 },
      calling_window: {
        timezone: 'UTC',
        days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'],
        start: '00:00',
        end: '23:59',
      },
    });
    const lines = ['phone,name,listing_id,listing_address,listing_price'];
    for (let i = 0; i < contacts; i += 1)
      lines.push(`+6140${String(1_000_000 + i).padStart(7, '0')},Person ${i},L${i},${i} Harbour St,$${i}`);
    const path = `${campaigns}/${campaign.id}`;
    const job = await owner.post<{ id: string; upload_url: string }>(`${path}/uploads`, { format: 'csv' });
    const put = await fetch(job.upload_url, { method: 'PUT', body: `${lines.join('\n')}\n` });
    if (!put.ok) throw new Error(`upload: HTTP ${put.status}`);
    const uploadStarted = performance.now();
    await owner.post(`${path}/uploads/${job.id}/start`);
    for (;;) {
      const state = await owner.get<{ status: string; counts: { created: number } }>(
        `${path}/jobs/${job.id}`,
      );
      if (state.status === 'failed') throw new Error('the upload failed');
      if (state.status === 'completed') {
        if (state.counts.created !== contacts) throw new Error(`upload created ${state.counts.created}`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const uploadSeconds = (performance.now() - uploadStarted) / 1000;
    log(`campaign: ${contacts} contacts uploaded in ${uploadSeconds.toFixed(1)} s; running with cap ${cap}`);

    const before = await stack.metrics();
    const started = performance.now();
    await owner.patch(path, { status: 'running' });
    let samples = 0;
    let maxLiveCalls = 0;
    let maxCampaignCalling = 0;
    let shown = -1;
    for (;;) {
      const [{ data: workspace }, progress, status] = await Promise.all([
        WorkspaceEntity.get({ workspaceId: demo.workspace_id }).go({ consistent: true }),
        owner.get<{ calling: number; completed: number; failed: number }>(`${path}/progress`),
        owner.get<{ status: string }>(path),
      ]);
      samples += 1;
      maxLiveCalls = Math.max(maxLiveCalls, workspace?.activeCalls ?? 0);
      maxCampaignCalling = Math.max(maxCampaignCalling, progress.calling);
      const tenth = Math.floor(((progress.completed + progress.failed) / contacts) * 10);
      if (tenth !== shown) log(`campaign: ${tenth * 10} % (${progress.calling} calling)`);
      shown = tenth;
      if (status.status === 'completed') break;
      if (status.status !== 'running') throw new Error(`the campaign is ${status.status}`);
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    }
    const seconds = (performance.now() - started) / 1000;
    const after = await stack.metrics();
    const requestsOf = (metrics: typeof after, fn?: string) =>
      Object.values(fn ? (metrics.dynamodb_by_function[fn] ?? {}) : metrics.dynamodb).reduce(
        (a, b) => a + b,
        0,
      );
    const campaignsQueue = (metrics: typeof after) =>
      Object.entries(metrics.queue_messages_sent)
        .filter(([queue]) => /campaigns$/.test(queue))
        .reduce((sum, [, n]) => sum + n, 0);

    const calls = (await workspaceCalls(demo.workspace_id)).filter((c) => c.campaignId === campaign.id);
    const perNumber = new Map<string, number>();
    for (const call of calls) perNumber.set(call.toPhone, (perNumber.get(call.toPhone) ?? 0) + 1);
    const duplicates = [...perNumber.values()].filter((n) => n > 1).length;
    const { data: batch } = await BatchContactEntity.query
      .byCampaign({ workspaceId: demo.workspace_id, campaignId: campaign.id })
      .go({ pages: 'all' });
    const lost =
      batch.filter((bc) => bc.state !== 'completed' && bc.state !== 'failed').length +
      batch.filter((bc) => !perNumber.has(bc.phone)).length;
    const failed = batch.filter((bc) => bc.state === 'failed').length;
    const lifetimes = calls
      .filter((c) => c.endedAt)
      .map((c) => (Date.parse(c.endedAt!) - Date.parse(c.createdAt)) / 1000);
    const meanCallSeconds = lifetimes.reduce((a, b) => a + b, 0) / Math.max(lifetimes.length, 1);
    const dialsPerSecond = calls.length / seconds;
    const theoreticalDialsPerSecond = cap / meanCallSeconds;
    return {
      contacts,
      cap,
      timeScale: options.timeScale,
      uploadSeconds,
      seconds,
      calls: calls.length,
      duplicates,
      lost,
      failed,
      samples,
      maxLiveCalls,
      maxCampaignCalling,
      dialsPerSecond,
      meanCallSeconds,
      theoreticalDialsPerSecond,
      ratio: dialsPerSecond / theoreticalDialsPerSecond,
      dialerRequestsPerCall:
        (requestsOf(after, 'ProcessCampaignMessages') - requestsOf(before, 'ProcessCampaignMessages')) /
        Math.max(calls.length, 1),
      requestsPerCall: (requestsOf(after) - requestsOf(before)) / Math.max(calls.length, 1),
      passes: campaignsQueue(after) - campaignsQueue(before),
      exact: duplicates === 0 && lost === 0 && calls.length === contacts,
      capHeld: maxLiveCalls <= cap && maxCampaignCalling <= cap,
    };
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in environment)) delete process.env[key];
    Object.assign(process.env, environment);
    await stack.stop();
  }
}

export function campaignTable(r: CampaignBenchReport): string[] {
  const f = (n: number, digits = 1) => n.toFixed(digits);
  return [
    '| measure | result | |',
    '|---|---|---|',
    `| dialled exactly once | ${r.calls} calls for ${r.contacts} contacts: ${r.duplicates} duplicates, ${r.lost} lost (${r.failed} calls failed) | ${r.exact ? 'exact' : '**WRONG**'} |`,
    `| cap ${r.cap} (sampled ${r.samples} times) | max live calls ${r.maxLiveCalls}, max campaign calling ${r.maxCampaignCalling} | ${r.capHeld ? 'held' : '**EXCEEDED**'} |`,
    `| dials/s vs the cap's rate | ${f(r.dialsPerSecond, 2)} dials/s in ${f(r.seconds)} s vs ${f(r.theoreticalDialsPerSecond, 2)} (cap ${r.cap} ÷ ${f(r.meanCallSeconds, 2)} s mean call at time scale ${r.timeScale}) | ${f(r.ratio, 2)}x |`,
    `| what a call costs | ${f(r.dialerRequestsPerCall)} DynamoDB requests in the dialer's function per call, ${f(r.requestsPerCall)} in the whole stack; ${r.passes} dialer passes | |`,
    `| upload | ${r.contacts} rows in ${f(r.uploadSeconds)} s (${f(r.contacts / r.uploadSeconds)} rows/s) | |`,
  ];
}
