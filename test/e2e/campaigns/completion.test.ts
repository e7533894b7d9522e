import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { jest } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { api, type Json } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { startReceiver, webhookSecret, type Receiver } from '../post-call/fixtures.js';
import {
  createCampaign,
  csvOf,
  patchCampaign,
  readyToCall,
  uniqueMobile,
  uploadAndWait,
  ws,
  type Tenant,
} from './fixtures.js';

/**
 * The end of a campaign as its owner sees it: `npm run cli -- campaign watch` follows the progress
 * until the campaign is completed (exit 0, the final counts), and `campaign.completed` reaches the
 * workspace's webhook endpoint subscribed to it — signed, once, in the delivery log.
 */

jest.setTimeout(240_000);

const run = promisify(execFile);
let receiver: Receiver | undefined;
afterAll(async () => receiver?.stop());

test('campaign watch follows a campaign to completed; campaign.completed is delivered once to the subscribed endpoint', async () => {
  const { tenant, agent } = (await readyToCall()) as unknown as { tenant: Tenant; agent: { id: string } };
  receiver = await startReceiver();
  const endpoint = await api('POST', `${ws(tenant)}/webhook-endpoints`, {
    token: tenant.owner.token,
    body: { url: receiver.url, event_types: ['campaign.completed'] },
  });
  expect(endpoint.status).toBe(201);

  const made = await createCampaign(tenant, { agent_id: agent.id, max_concurrency: 2 });
  const phones = [uniqueMobile(), uniqueMobile(), uniqueMobile()];
  const job = await uploadAndWait(
    tenant,
    made.id,
    csvOf([['phone', 'name', 'agency'], ...phones.map((p, i) => [p, `Person ${i}`, 'Acme'])]),
  );
  expect(job).toMatchObject({ status: 'completed', counts: { created: 3 } });
  expect((await patchCampaign(tenant, made.id, { status: 'running' })).status).toBe(200);

  // The CLI, as a user runs it, until the campaign is over (exit 0 once completed).
  const cli = (...args: string[]) =>
    run(
      'npx',
      ['tsx', 'bin/cli.ts', 'campaign', 'watch', made.id, '--workspace', tenant.workspaceId, ...args],
      {
        env: { ...process.env },
        timeout: 200_000,
      },
    );
  const watched = await cli('--token', tenant.owner.token, '--json');
  const result = JSON.parse(watched.stdout.trim()) as { campaign: Json; progress: Json };
  expect(result.campaign).toMatchObject({ id: made.id, status: 'completed' });
  expect(result.progress).toMatchObject({ total: 3, completed: 3, pending: 0, calling: 0 });
  const text = await cli('--token', tenant.owner.token);
  expect(text.stdout).toContain(`Campaign ${made.id} completed: 3 contacts, 3 completed`);
  const usage = await run('npx', ['tsx', 'bin/cli.ts', 'campaign', 'watch', made.id], {
    env: { ...process.env },
    timeout: 90_000,
  }).catch((error: { code: number; stderr: string }) => error);
  // Without a workspace and a user, and no demo to take them from (the test stack makes none): said so.
  expect(usage).toMatchObject({
    code: 1,
    stderr: expect.stringContaining('Give --workspace and --email (or --token)'),
  });

  // campaign.completed: signed with the workspace's secret, its counts, once (a later pass sends nothing more).
  const request = await waitFor(() => receiver!.requests[0], { what: 'the campaign.completed event' });
  const payload = new Webhook(await webhookSecret(tenant)).verify(
    request.body,
    request.headers as Record<string, string>,
  ) as { type: string; data: Json };
  expect(request.headers['webhook-id']).toBe(`evt_campaign_completed_${made.id}`);
  expect(payload).toMatchObject({
    type: 'campaign.completed',
    data: {
      campaign_id: made.id,
      agent_id: agent.id,
      total: 3,
      completed: 3,
      failed: 0,
      skipped: 0,
      cancelled: 0,
      credits_used: expect.any(Number),
    },
  });
  expect(payload.data.credits_used).toBeGreaterThan(0);
  await waitForQuiescence();
  expect(receiver.requests).toHaveLength(1);
  const log = await api('GET', `${ws(tenant)}/webhook-deliveries`, { token: tenant.owner.token });
  expect(log.body.items.filter((d: Json) => d.event_type === 'campaign.completed')).toEqual([
    expect.objectContaining({
      webhook_id: `evt_campaign_completed_${made.id}`,
      endpoint_id: endpoint.body.id,
    }),
  ]);
});
