import { randomUUID } from 'node:crypto';
import { crmSimulator } from '../../../lib/local/simulators/crm/client.js';
import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { readyToCall } from '../calling/fixtures.js';
import { smsTo } from '../post-call/fixtures.js';
import { createWorkflow, listRuns, waitForRun, workflowBody, ws, type Tenant } from './fixtures.js';

/**
 * LISTING_SOLD: a sale in the demo CRM, found by the integration's sync, publishes listing.sold; a
 * workflow on that event (Auto Mode, every stage yolo) texts the sales manager ONCE — a second sync
 * announces nothing more, and a redelivered event makes no second run.
 */

const integrationsPath = (t: Tenant) => `${ws(t)}/integrations`;

async function syncJob(tenant: Tenant, integrationId: string, action: 'connect' | 'sync'): Promise<Json> {
  const res = await api('POST', `${integrationsPath(tenant)}/${integrationId}/${action}`, {
    token: tenant.owner.token,
  });
  expect(res.status).toBe(202);
  return waitFor(
    async () => {
      const job = await api('GET', `${integrationsPath(tenant)}/${integrationId}/jobs/${res.body.id}`, {
        token: tenant.owner.token,
      });
      return job.body.status === 'processing' ? undefined : job.body;
    },
    { what: `the ${action} job to end`, timeoutMs: 90_000, intervalMs: 200 },
  );
}

it('a listing sold in the CRM starts the workflow, which sends one SMS', async () => {
  const { tenant } = await readyToCall();
  const manager = '+61491570501';
  const account = `acct-${randomUUID().slice(0, 8)}`;
  const created = await api('POST', integrationsPath(tenant), {
    token: tenant.owner.token,
    body: { provider: 'demo_crm', name: 'Demo CRM', config: { account } },
  });
  expect(created.status).toBe(201);
  const integration = created.body as Json;
  expect((await syncJob(tenant, integration.id, 'connect')).status).toBe('completed');

  const workflow = await createWorkflow(
    tenant,
    workflowBody({
      name: 'Sold in Manly',
      trigger: { type: 'event', event: 'listing.sold' },
      auto_mode: true,
      yolo: true,
      conditions: [{ field: 'suburb', op: 'eq', value: 'Manly' }],
      action: { type: 'sms', to_phone: manager, body: 'Sold: {{full_address}} ({{price_text}})' },
    }),
  );

  await crmSimulator(stackState().env.CRM_SIMULATOR_URL, account).sell('L-1001');
  const job = await syncJob(tenant, integration.id, 'sync');
  expect(job.counts).toMatchObject({ listing_sold_events: 1 });

  const [run] = await waitFor(async () => {
    const runs = await listRuns(tenant, workflow.id);
    return runs.length > 0 ? runs : undefined;
  });
  const done = await waitForRun(tenant, workflow.id, run.id, (r) => r.status === 'completed');
  expect(done).toMatchObject({
    event: { type: 'listing.sold', data: { external_id: 'L-1001', suburb: 'Manly' } },
    stages: {
      signal: { state: 'done', result: { matched: true } },
      task: { state: 'done', result: { action: 'sms', to_phone: manager } },
      outcome: { state: 'done' },
    },
  });

  // A second sync announces nothing more; the stack settles; one run, one SMS.
  expect((await syncJob(tenant, integration.id, 'sync')).counts).toMatchObject({ listing_sold_events: 0 });
  await waitForQuiescence({ timeoutMs: 60_000 });
  expect(await listRuns(tenant, workflow.id)).toHaveLength(1);
  const texts = smsTo(manager);
  expect(texts).toHaveLength(1);
  expect(texts[0].text).toBe('Sold: 12 Harbour Street, Manly NSW 2095 ($1,250,000)');
});
