import { join } from 'node:path';
import { BillingAccountEntity } from '../../../functions/billing/entities.js';
import { createContact } from '../../../functions/contacts/creation.js';
import { readSmsOutbox } from '../../../functions/providers/sms/local-outbox.js';
import { SmsMessageEntity } from '../../../functions/sms/entities.js';
import { ApiClient } from '../cli/api-client.js';
import { seed } from '../cli/seed.js';
import { resetTableClients } from '../../../functions/platform/table.js';
import { batchWriteFloorOf } from './batch-write-floor.js';
import { startBenchStack } from './stack-process.js';

/**
 * An SMS campaign of N messages (default 5,000; BENCH_SMS_MESSAGES), on a stack of its own: N
 * contactable contacts with a tag (made with the contacts service, not timed), a campaign to the tag
 * with a placeholder, then from PATCH `{status: sending}` to the campaign `sent`: messages per second
 * (each one checked, rendered, recorded, charged through the ledger, handed to the SMS simulator), and
 * on to every delivery callback applied (`delivered` = N). Exactness: recipients, sent and delivered
 * = N, credits = 5 N (each charged once), N distinct messages in the simulator's outbox.
 * Its floor, in the same run against the same DynamoDB Local: N message-sized items written straight
 * with BatchWriteItem (25 a request, 8 requests at once) — the database's own speed for as many writes
 * as there are messages (each message costs ~3 write requests — its claim and charge, its acceptance,
 * its `delivered` — and ~1 read, its `sent` callback's, plus a 50th of its page's and chunk's).
 */

/** A campaign's counts, as `GET …/sms/campaigns/{id}` shows them. */
interface CampaignCounts {
  recipients: number;
  sent: number;
  delivered: number;
  failed: number;
  skipped: number;
  credits: number;
}

export interface SmsCampaignReport {
  messages: number;
  setupSeconds: number;
  seconds: number;
  messagesPerSecond: number;
  deliveredSeconds: number;
  counts: CampaignCounts;
  outbox: number;
  exact: boolean;
  floor: { items: number; seconds: number; itemsPerSecond: number };
  ratio: number;
}

const CREATE_CONCURRENCY = 16;

const floor = (items: number): Promise<SmsCampaignReport['floor']> =>
  batchWriteFloorOf(items, 'BENCHSMS', (i) => ({
    toPhone: { S: `+6142${String(i).padStart(7, '0')}` },
    fromPhone: { S: '+61255501234' },
    body: { S: `Hi Person ${i}, our open home is on Saturday at 10. Reply STOP to opt out.` },
    segments: { N: '1' },
    status: { S: 'sent' },
    createdAt: { S: new Date().toISOString() },
  }));

interface CampaignState extends CampaignCounts {
  status: string;
  progress: { done: number; total: number };
}

export async function measureSmsCampaign(options: {
  root: string;
  messages: number;
  env: Record<string, string>;
  log: (line: string) => void;
}): Promise<SmsCampaignReport> {
  const { log, messages } = options;
  const stack = await startBenchStack({
    root: options.root,
    stateDir: join(options.root, '.local', `bench-${process.pid}-sms`),
    logPath: join(options.root, '.local', 'bench-stack-sms.log'),
    env: options.env,
  });
  const environment = { ...process.env };
  try {
    const demo = await seed(stack.state, { plan: 'growth' }, log);
    Object.assign(process.env, stack.state.env);
    // Clients made for an earlier part of the run point at its stopped stack.
    resetTableClients();
    await BillingAccountEntity.patch({ organisationId: demo.organisation_id })
      .set({ balanceUnits: messages * 5 * 60 * 2 })
      .go();
    const setupStarted = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CREATE_CONCURRENCY }, async () => {
        for (let i = next++; i < messages; i = next++) {
          await createContact(
            demo.workspace_id,
            { first_name: `Person${i}`, phone: `+6142${String(i).padStart(7, '0')}`, tags: ['sms-bench'] },
            { country: 'AU' },
          );
        }
      }),
    );
    const setupSeconds = (performance.now() - setupStarted) / 1000;
    log(`sms campaign: ${messages} contacts made in ${setupSeconds.toFixed(1)} s`);

    const owner = new ApiClient(stack.state.base_url, demo.owner_token);
    const campaigns = `/api/v1/workspaces/${demo.workspace_id}/sms-campaigns`;
    const campaign = await owner.post<{ id: string }>(campaigns, {
      name: `Bench ${messages}`,
      body: 'Hi {{first_name}}, our open home is on Saturday at 10. Reply STOP to opt out.',
      audience: { tag: 'sms-bench' },
    });
    const path = `${campaigns}/${campaign.id}`;
    const started = performance.now();
    await owner.patch(path, { status: 'sending' });
    let state: CampaignState;
    let shown = -1;
    let seconds = 0;
    for (;;) {
      state = await owner.get<CampaignState>(path);
      const tenth = state.progress.total > 0 ? Math.floor((state.progress.done / messages) * 10) : 0;
      if (tenth !== shown)
        log(`sms campaign: ${tenth * 10} % (${state.sent} sent, ${state.delivered} delivered)`);
      shown = tenth;
      if (state.status === 'sent' && seconds === 0) seconds = (performance.now() - started) / 1000;
      if (state.status === 'sent' && state.delivered + state.failed >= state.sent) break;
      if (state.status !== 'sending' && state.status !== 'sent')
        throw new Error(`the campaign is ${state.status}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const deliveredSeconds = (performance.now() - started) / 1000;
    // Messages have a key each (docs/scale.md): the bench's own stack is scanned for the campaign's.
    const { data: sentMessages } = await SmsMessageEntity.scan
      .where(
        (attr, op) =>
          `${op.eq(attr.workspaceId, demo.workspace_id)} AND ${op.eq(attr.campaignId, campaign.id)}`,
      )
      .go({ pages: 'all' });
    const ids = new Set(sentMessages.map((m) => `sms:${m.messageId}`));
    const outbox = readSmsOutbox(join(stack.state.env.LOCAL_STATE_DIR ?? '', 'outbox', 'sms.jsonl')).filter(
      (line) => ids.has(line.idempotency_key),
    ).length;
    await stack.settle();
    log(`sms campaign floor: ${messages} items with BatchWriteItem`);
    const measuredFloor = await floor(messages);
    const messagesPerSecond = state.sent / seconds;
    const counts = {
      recipients: state.recipients,
      sent: state.sent,
      delivered: state.delivered,
      failed: state.failed,
      skipped: state.skipped,
      credits: state.credits,
    };
    return {
      messages,
      setupSeconds,
      seconds,
      messagesPerSecond,
      deliveredSeconds,
      counts,
      outbox,
      exact:
        counts.recipients === messages &&
        counts.sent === messages &&
        counts.delivered === messages &&
        counts.credits === messages * 5 &&
        outbox === messages,
      floor: measuredFloor,
      ratio: messagesPerSecond / measuredFloor.itemsPerSecond,
    };
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in environment)) delete process.env[key];
    Object.assign(process.env, environment);
    await stack.stop();
  }
}

export function smsCampaignTable(r: SmsCampaignReport): string[] {
  const f = (n: number, digits = 1) => n.toFixed(digits);
  const c = r.counts;
  return [
    '| measure | floor (BatchWriteItem, same DynamoDB Local) | SMS campaign (PATCH sending → sent) | ratio | |',
    '|---|---:|---:|---:|---|',
    `| ${r.messages} messages | ${f(r.floor.itemsPerSecond)} items/s (${f(r.floor.seconds)} s) | ${f(r.messagesPerSecond)} messages/s (${f(r.seconds)} s; every delivery callback applied after ${f(r.deliveredSeconds)} s) | ${f(r.ratio, 3)}x | |`,
    `| counts | | recipients ${c.recipients}, sent ${c.sent}, delivered ${c.delivered}, failed ${c.failed}, skipped ${c.skipped}, credits ${c.credits}; ${r.outbox} in the simulator's outbox | | ${r.exact ? 'exact' : '**WRONG**'} |`,
  ];
}
