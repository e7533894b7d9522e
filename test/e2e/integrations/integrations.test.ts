import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { IntegrationEntity } from '../../../functions/integrations/entities.js';
import {
  requireIntegration,
  startSync,
  syncConnectedIntegrations,
} from '../../../functions/integrations/service.js';
import { syncPage } from '../../../functions/integrations/sync.js';
import { crmSimulator } from '../../../lib/local/simulators/crm/client.js';
import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { addMember, newTenant, ws, type Tenant, type User } from '../calling/fixtures.js';
import { startReceiver, webhookSecret, type Receiver } from '../post-call/fixtures.js';

/**
 * CRM integrations through the gateway against the demo CRM simulator: connect syncs listings into
 * a listings knowledge base and contacts (merged, labelled with the integration's name) without
 * listing.sold; a sale in the CRM and a sync send ONE signed listing.sold to the workspace's webhook
 * endpoint, a second sync none; CRM failures mid-sync are retried and the sync completes; a cursor
 * that goes backwards, a page received twice and a crash half-way duplicate nothing; plan gate,
 * tenancy and roles.
 */

const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.stop()));
});

const integrationsPath = (t: Tenant) => `${ws(t)}/integrations`;
const crm = (account: string) => crmSimulator(stackState().env.CRM_SIMULATOR_URL, account);
const newAccount = () => `acct-${randomUUID().slice(0, 8)}`;

interface Setup {
  tenant: Tenant;
  account: string;
  integration: Json;
  receiver: Receiver;
}

/** A paid tenant subscribed to listing.sold, with a demo_crm integration on a fresh CRM account. */
async function setup(name = 'Acme CRM'): Promise<Setup> {
  const tenant = await newTenant({ paid: true });
  const receiver = await startReceiver();
  receivers.push(receiver);
  const endpoint = await api('POST', `${ws(tenant)}/webhook-endpoints`, {
    token: tenant.owner.token,
    body: { url: receiver.url, event_types: ['listing.sold'] },
  });
  expect(endpoint.status).toBe(201);
  const account = newAccount();
  const created = await api('POST', integrationsPath(tenant), {
    token: tenant.owner.token,
    body: { provider: 'demo_crm', name, config: { account } },
  });
  expect(created.status).toBe(201);
  return { tenant, account, integration: created.body, receiver };
}

async function jobDone(t: Tenant, integrationId: string, jobId: string): Promise<Json> {
  return waitFor(
    async () => {
      const res = await api('GET', `${integrationsPath(t)}/${integrationId}/jobs/${jobId}`, {
        token: t.owner.token,
      });
      expect(res.status).toBe(200);
      return res.body.status === 'processing' ? undefined : res.body;
    },
    { what: `sync job ${jobId} to end`, timeoutMs: 90_000, intervalMs: 200 },
  );
}

async function run(t: Tenant, integrationId: string, action: 'connect' | 'sync'): Promise<Json> {
  const res = await api('POST', `${integrationsPath(t)}/${integrationId}/${action}`, {
    token: t.owner.token,
  });
  expect(res.status).toBe(202);
  expect(res.body).toMatchObject({ id: expect.stringMatching(/^job_/), status: 'processing' });
  return jobDone(t, integrationId, res.body.id);
}

async function listings(t: Tenant, kbId: string): Promise<Json[]> {
  const res = await api('GET', `${ws(t)}/knowledge-bases/${kbId}/items?limit=100`, { token: t.owner.token });
  expect(res.status).toBe(200);
  return res.body.items;
}

async function contacts(t: Tenant): Promise<Json[]> {
  const res = await api('GET', `${ws(t)}/contacts?limit=50`, { token: t.owner.token });
  expect(res.status).toBe(200);
  return res.body.items;
}

const soldRequests = (receiver: Receiver) =>
  receiver.requests.filter((r) => JSON.parse(r.body).type === 'listing.sold');

/** Waits until the stack has nothing left to do (queues drained), so "no event" means none. */
const settle = () => waitForQuiescence({ timeoutMs: 60_000 });

describe('connect: the first full sync', () => {
  test('listings into a new listings base, contacts merged and labelled, and no listing.sold', async () => {
    const { tenant, account, integration, receiver } = await setup('Harbour Realty');
    expect(integration).toMatchObject({
      id: expect.stringMatching(/^int_/),
      provider: 'demo_crm',
      name: 'Harbour Realty',
      status: 'created',
      knowledge_base_id: null,
      last_sync: null,
      config: { account },
    });
    // A contact the workspace has already (the CRM's Olivia, by phone): merged, not duplicated.
    const existing = await api('POST', `${ws(tenant)}/contacts`, {
      token: tenant.owner.token,
      body: { phone: '+61491570001', first_name: 'Liv' },
    });
    expect(existing.status).toBe(201);
    // Sold in the CRM before the first connect: recorded, never announced.
    await crm(account).sell('L-1005');

    const job = await run(tenant, integration.id, 'connect');
    expect(job).toMatchObject({
      kind: 'initial',
      trigger: 'connect',
      status: 'completed',
      counts: {
        total: 9, // the CRM's feed: 5 listings, 3 contacts, then L-1005's sale
        listings: 6,
        listings_created: 5,
        contacts: 3,
        contacts_created: 2,
        contacts_merged: 1,
        rejected: 0,
        listing_sold_events: 0,
      },
      progress: { done: 9, total: 9 },
      failure_reason: null,
    });
    const after = (
      await api('GET', `${integrationsPath(tenant)}/${integration.id}`, { token: tenant.owner.token })
    ).body;
    expect(after).toMatchObject({
      status: 'connected',
      knowledge_base_id: expect.stringMatching(/^kb_/),
      active_job_id: null,
      last_sync: { job_id: job.id, status: 'completed', counts: job.counts },
    });
    const kb = (
      await api('GET', `${ws(tenant)}/knowledge-bases/${after.knowledge_base_id}`, {
        token: tenant.owner.token,
      })
    ).body;
    expect(kb).toMatchObject({
      kind: 'listings',
      name: 'Harbour Realty listings',
      integration_id: integration.id,
    });
    const items = await listings(tenant, kb.id);
    expect(items.map((i) => i.external_id).sort()).toEqual([
      'L-1001',
      'L-1002',
      'L-1003',
      'L-1004',
      'L-1005',
    ]);
    expect(items.find((i) => i.external_id === 'L-1005')).toMatchObject({ status: 'sold' });
    expect(items.find((i) => i.external_id === 'L-1001')).toMatchObject({
      full_address: '12 Harbour Street, Manly NSW 2095',
      price_text: '$1,250,000',
      status: 'available',
    });
    const people = await contacts(tenant);
    expect(people).toHaveLength(3);
    const byPhone = (phone: string) => people.find((c) => c.phone === phone);
    expect(byPhone('+61491570001')).toMatchObject({
      id: existing.body.id,
      first_name: 'Liv', // merged: nothing overwritten
      email: 'olivia.nguyen@example.com', // an empty field filled
      source: 'manual',
    });
    expect(byPhone('+61491570002')).toMatchObject({
      first_name: 'Jack',
      source: 'integration',
      source_label: 'Harbour Realty',
    });
    expect(people.find((c) => c.email === 'mia.patel@example.com')).toMatchObject({
      source: 'integration',
      source_label: 'Harbour Realty',
      phone: null,
    });
    // The listings are searchable once indexed.
    await waitFor(
      async () => {
        const res = await api('GET', `${ws(tenant)}/knowledge-bases/${kb.id}/search?q=bondi%20beach`, {
          token: tenant.owner.token,
        });
        return res.body.items[0]?.listing?.external_id === 'L-1002';
      },
      { what: 'the synced listings to be searchable' },
    );
    await settle();
    expect(soldRequests(receiver)).toHaveLength(0);
    const logged = await api('GET', `${ws(tenant)}/webhook-deliveries`, { token: tenant.owner.token });
    expect(logged.body.items.filter((d: Json) => d.event_type === 'listing.sold')).toHaveLength(0);
  });
});

describe('listing.sold', () => {
  test('a sale in the CRM and a sync send ONE signed listing.sold (even when the feed has it twice); a second sync none', async () => {
    const { tenant, account, integration, receiver } = await setup();
    await run(tenant, integration.id, 'connect');
    const sold = await crm(account).sell('L-1001', { twice: true });
    expect(sold.seqs).toHaveLength(2);

    const job = await run(tenant, integration.id, 'sync');
    expect(job).toMatchObject({
      kind: 'incremental',
      status: 'completed',
      counts: { total: 2, listings: 2, listings_created: 0, listing_sold_events: 1 },
    });
    const request = await waitFor(() => soldRequests(receiver)[0], { what: 'the listing.sold delivery' });
    const secret = await webhookSecret(tenant);
    const payload = new Webhook(secret).verify(
      request.body,
      request.headers as Record<string, string>,
    ) as Json;
    const kbId = (
      await api('GET', `${integrationsPath(tenant)}/${integration.id}`, { token: tenant.owner.token })
    ).body.knowledge_base_id;
    const item = (await listings(tenant, kbId)).find((i) => i.external_id === 'L-1001');
    expect(item.status).toBe('sold');
    expect(payload).toMatchObject({
      type: 'listing.sold',
      data: {
        listing_id: item.id,
        external_id: 'L-1001',
        knowledge_base_id: kbId,
        integration_id: integration.id,
        full_address: '12 Harbour Street, Manly NSW 2095',
        sold_at: sold.listing.sold_at,
      },
    });
    expect(request.headers['webhook-id']).toMatch(new RegExp(`^evt_listing_sold_${item.id}_`));

    const again = await run(tenant, integration.id, 'sync');
    expect(again.counts).toMatchObject({ total: 0, listing_sold_events: 0 });
    await settle();
    expect(soldRequests(receiver)).toHaveLength(1);
    const logged = await api('GET', `${ws(tenant)}/webhook-deliveries`, { token: tenant.owner.token });
    expect(logged.body.items.filter((d: Json) => d.event_type === 'listing.sold')).toHaveLength(1);

    // A later sale of the same listing (relisted, then sold again) is another event.
    await crm(account).putListing({
      external_id: 'L-1001',
      address: '12 Harbour Street',
      status: 'available',
    });
    await crm(account).sell('L-1001', { soldAt: '2030-01-01T00:00:00.000Z' });
    expect((await run(tenant, integration.id, 'sync')).counts.listing_sold_events).toBe(1);
    await waitFor(() => soldRequests(receiver).length === 2, { what: 'the second sale' });
  });

  test('disconnect stops syncing and keeps the data; a reconnect catches up and announces sales', async () => {
    const { tenant, account, integration, receiver } = await setup();
    await run(tenant, integration.id, 'connect');
    const off = await api('POST', `${integrationsPath(tenant)}/${integration.id}/disconnect`, {
      token: tenant.owner.token,
    });
    expect(off.status).toBe(200);
    expect(off.body.status).toBe('disconnected');
    expect(
      (await api('POST', `${integrationsPath(tenant)}/${integration.id}/sync`, { token: tenant.owner.token }))
        .status,
    ).toBe(409);
    expect(await listings(tenant, off.body.knowledge_base_id)).toHaveLength(5);
    expect(await contacts(tenant)).toHaveLength(3);
    // The base an integration fills cannot be deleted while the integration exists.
    expect(
      (
        await api('DELETE', `${ws(tenant)}/knowledge-bases/${off.body.knowledge_base_id}`, {
          token: tenant.owner.token,
        })
      ).status,
    ).toBe(409);

    await crm(account).sell('L-1004');
    await crm(account).addContact({ phone: '+61491570099', first_name: 'Zoe' });
    const catchUp = await run(tenant, integration.id, 'connect');
    expect(catchUp).toMatchObject({
      kind: 'incremental',
      counts: { total: 2, listing_sold_events: 1, contacts_created: 1 },
    });
    await waitFor(() => soldRequests(receiver).length === 1, { what: 'the catch-up sale' });
    expect(JSON.parse(soldRequests(receiver)[0].body).data.external_id).toBe('L-1004');
    const again = await api('GET', `${integrationsPath(tenant)}/${integration.id}`, {
      token: tenant.owner.token,
    });
    expect(again.body).toMatchObject({ status: 'connected', knowledge_base_id: off.body.knowledge_base_id });
  });
});

describe('the schedule', () => {
  test('syncs connected integrations not synced lately; the sale it finds is announced once', async () => {
    const { tenant, account, integration, receiver } = await setup();
    await run(tenant, integration.id, 'connect');
    await crm(account).sell('L-1002');
    // Just synced: the schedule leaves it alone.
    await syncConnectedIntegrations();
    const jobs = async () =>
      (await api('GET', `${integrationsPath(tenant)}/${integration.id}/jobs`, { token: tenant.owner.token }))
        .body.items as Json[];
    expect((await jobs()).map((j) => j.trigger)).toEqual(['connect']);
    const before = process.env.INTEGRATION_SYNC_EVERY_SECONDS;
    process.env.INTEGRATION_SYNC_EVERY_SECONDS = '0.001';
    try {
      expect(await syncConnectedIntegrations()).toMatch(/started [1-9]/);
    } finally {
      if (before === undefined) delete process.env.INTEGRATION_SYNC_EVERY_SECONDS;
      else process.env.INTEGRATION_SYNC_EVERY_SECONDS = before;
    }
    const scheduled = (await jobs()).find((j) => j.trigger === 'schedule');
    expect(scheduled).toBeDefined();
    expect(await jobDone(tenant, integration.id, scheduled.id)).toMatchObject({
      status: 'completed',
      counts: { listing_sold_events: 1 },
    });
    await waitFor(() => soldRequests(receiver).length === 1, { what: 'the scheduled sale' });
  });
});

describe('faults', () => {
  test('the CRM fails mid-sync (500s and a timeout): retried, and the sync completes with exact counts', async () => {
    const { tenant, account, integration } = await setup();
    const sim = crm(account);
    // 150 more contacts: the sync reads the feed in two pages; the second read fails.
    for (let i = 0; i < 150; i += 1)
      await sim.addContact({
        phone: `+614915${String(71000 + i).padStart(5, '0')}`,
        first_name: `Lead ${i}`,
      });
    await sim.fail('error', 4, 1); // after the first page: 4 failed reads (one round of 3, then 1)
    const job = await run(tenant, integration.id, 'connect');
    expect(job).toMatchObject({
      status: 'completed',
      pages: 2,
      counts: { total: 158, listings: 5, contacts: 153, contacts_created: 153 },
    });
    expect(job.retries).toBe(4);
    expect(job.last_error).toMatch(/500/);
    expect((await contacts(tenant)).length).toBe(50); // one page of the list; the count is exact above

    await sim.addContact({ phone: '+61491579999', first_name: 'Late' });
    await sim.fail('timeout', 1);
    const next = await run(tenant, integration.id, 'sync');
    expect(next).toMatchObject({
      status: 'completed',
      retries: 1,
      counts: { total: 1, contacts_created: 1 },
    });
    expect(next.last_error).toMatch(/did not answer/);
  }, 120_000);

  test('a cursor that goes backwards: the changes read again change nothing and announce nothing twice', async () => {
    const { tenant, account, integration, receiver } = await setup();
    await run(tenant, integration.id, 'connect');
    await crm(account).sell('L-1002');
    expect((await run(tenant, integration.id, 'sync')).counts.listing_sold_events).toBe(1);
    await crm(account).rewind(0); // the CRM replays its whole feed
    const replay = await run(tenant, integration.id, 'sync');
    expect(replay).toMatchObject({
      status: 'completed',
      cursor_resets: 1,
      counts: { total: 9, listings_created: 0, contacts_created: 0, listing_sold_events: 0 },
    });
    await settle();
    expect(soldRequests(receiver)).toHaveLength(1);
    const kbId =
      replay.integration_id && (await requireIntegration(tenant.workspaceId, integration.id)).knowledgeBaseId;
    expect(await listings(tenant, kbId!)).toHaveLength(5);
    expect(await contacts(tenant)).toHaveLength(3);
  });

  test('a crash half-way through a page, then the page again: everything once, counted once', async () => {
    const { tenant, account, integration, receiver } = await setup();
    await run(tenant, integration.id, 'connect');
    await crm(account).sell('L-1003');
    await crm(account).addContact({ phone: '+61491570077', first_name: 'Ana' });
    await crm(account).addContact({ email: 'bo@example.com', first_name: 'Bo' });
    const stored = await requireIntegration(tenant.workspaceId, integration.id);
    const job = await startSync(stored, 'sync', { send: false });
    await expect(
      syncPage(tenant.workspaceId, integration.id, job.jobId, { failAfterRecords: 2 }),
    ).rejects.toThrow(/half-way/);
    expect(await syncPage(tenant.workspaceId, integration.id, job.jobId)).toMatch(/completed/);
    // The same page once more (a redelivery): nothing.
    expect(await syncPage(tenant.workspaceId, integration.id, job.jobId)).toBe('not processing');
    const done = await jobDone(tenant, integration.id, job.jobId);
    expect(done.counts).toMatchObject({ total: 3, listing_sold_events: 1, contacts_created: 2 });
    await waitFor(() => soldRequests(receiver).length === 1, { what: 'the sale' });
    await settle();
    expect(soldRequests(receiver)).toHaveLength(1);
    expect(await contacts(tenant)).toHaveLength(5);
    const { data } = await IntegrationEntity.get({
      workspaceId: tenant.workspaceId,
      integrationId: integration.id,
    }).go();
    expect(data?.activeJobId).toBeUndefined();
  });
});

describe('access', () => {
  let paid: Tenant;
  let viewer: User;
  beforeAll(async () => {
    paid = await newTenant({ paid: true });
    viewer = await addMember(paid, 'viewer');
  });

  test('plan gate: writes are 402 without the integrations feature; reads still work', async () => {
    const free = await newTenant();
    const res = await api('POST', integrationsPath(free), {
      token: free.owner.token,
      body: { provider: 'demo_crm', name: 'CRM', config: {} },
    });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ error: 'Your plan does not include integrations' });
    expect((await api('GET', integrationsPath(free), { token: free.owner.token })).body).toEqual({
      items: [],
      next_cursor: null,
    });
  });

  test('bad bodies are 422; viewers read but do not write; another tenant sees 404', async () => {
    for (const body of [
      { provider: 'salesforce', name: 'x', config: {} },
      { provider: 'demo_crm', config: {} },
      { provider: 'demo_crm', name: 'x', config: { account: 'bad account!' } },
      { provider: 'hubspot', name: 'x', config: {} },
      { provider: 'demo_crm', name: 'x', config: { nope: 1 } },
    ]) {
      const res = await api('POST', integrationsPath(paid), { token: paid.owner.token, body });
      expect(res.status).toBe(422);
    }
    const created = await api('POST', integrationsPath(paid), {
      token: paid.owner.token,
      body: { provider: 'demo_crm', name: 'CRM', config: { account: newAccount() } },
    });
    expect(created.status).toBe(201);
    const one = `${integrationsPath(paid)}/${created.body.id}`;
    expect((await api('GET', one, { token: viewer.token })).status).toBe(200);
    expect((await api('GET', `${one}/jobs`, { token: viewer.token })).body).toEqual({
      items: [],
      next_cursor: null,
    });
    for (const [method, path] of [
      ['POST', integrationsPath(paid)],
      ['POST', `${one}/connect`],
      ['POST', `${one}/sync`],
      ['POST', `${one}/disconnect`],
      ['DELETE', one],
    ] as const) {
      const res = await api(method, path, {
        token: viewer.token,
        body: { provider: 'demo_crm', name: 'v', config: {} },
      });
      expect(res.status).toBe(403);
    }
    const other = await newTenant({ paid: true });
    for (const path of [one, `${one}/jobs`, `${one}/jobs/job_01J0000000000000000000000A`]) {
      expect((await api('GET', path, { token: other.owner.token })).status).toBe(404);
    }
    expect((await api('POST', `${one}/connect`, { token: other.owner.token })).status).toBe(404);
    const mine = `${integrationsPath(other)}/${created.body.id}`;
    expect((await api('GET', mine, { token: other.owner.token })).body).toEqual({
      error: 'Integration not found',
    });
    expect((await api('POST', `${mine}/sync`, { token: other.owner.token })).status).toBe(404);
    // Sync before connect: 409. Delete: 204, then 404.
    expect((await api('POST', `${one}/sync`, { token: paid.owner.token })).status).toBe(409);
    expect((await api('DELETE', one, { token: paid.owner.token })).status).toBe(204);
    expect((await api('GET', one, { token: paid.owner.token })).status).toBe(404);
  });
});

describe('deletions in the CRM', () => {
  test('a deleted listing leaves the listings base and its search; a deleted contact is counted and kept', async () => {
    const { tenant, account, integration } = await setup('Deleting Realty');
    await run(tenant, integration.id, 'connect');
    const kbId = (
      await api('GET', `${integrationsPath(tenant)}/${integration.id}`, { token: tenant.owner.token })
    ).body.knowledge_base_id as string;
    const bondi = (await listings(tenant, kbId)).find((i) => i.external_id === 'L-1002');
    await waitFor(
      async () => {
        const res = await api('GET', `${ws(tenant)}/knowledge-bases/${kbId}/search?q=bondi`, {
          token: tenant.owner.token,
        });
        return res.body.items[0]?.item_id === bondi.id ? true : undefined;
      },
      { what: 'L-1002 to be searchable' },
    );
    await crm(account).deleteListing('L-1002');
    await crm(account).deleteContact('C-2002'); // Jack
    await expect(crm(account).deleteListing('L-1002')).rejects.toThrow(/404/);
    expect((await crm(account).listings()).map((l) => l.external_id)).not.toContain('L-1002');

    const job = await run(tenant, integration.id, 'sync');
    expect(job).toMatchObject({
      status: 'completed',
      counts: { total: 2, listings: 0, contacts: 0, listings_deleted: 1, contacts_deleted: 1, rejected: 0 },
    });
    expect((await listings(tenant, kbId)).map((i) => i.external_id).sort()).toEqual([
      'L-1001',
      'L-1003',
      'L-1004',
      'L-1005',
    ]);
    const gone = await api('GET', `${ws(tenant)}/knowledge-bases/${kbId}/items/${bondi.id}`, {
      token: tenant.owner.token,
    });
    expect(gone.status).toBe(404);
    await waitFor(
      async () => {
        const res = await api('GET', `${ws(tenant)}/knowledge-bases/${kbId}/search?q=bondi`, {
          token: tenant.owner.token,
        });
        return res.body.items.some((hit: Json) => hit.item_id === bondi.id) ? undefined : true;
      },
      { what: 'L-1002 to leave the search index' },
    );
    // The contact the CRM deleted stays the workspace's.
    expect((await contacts(tenant)).find((c) => c.phone === '+61491570002')).toMatchObject({
      first_name: 'Jack',
      source_label: 'Deleting Realty',
    });
    // Nothing more to do on the next sync; the same listing added again in the CRM comes back.
    expect((await run(tenant, integration.id, 'sync')).counts).toMatchObject({ total: 0 });
    await crm(account).putListing({ external_id: 'L-1002', address: '4/88 Ocean Road', suburb: 'Bondi' });
    expect((await run(tenant, integration.id, 'sync')).counts).toMatchObject({ listings_created: 1 });
    expect((await listings(tenant, kbId)).find((i) => i.external_id === 'L-1002')?.id).toBe(bondi.id);
  });
});

describe('contact.created', () => {
  /** A receiver subscribed to contact.created, and the distinct events it was sent. */
  async function contactEvents(tenant: Tenant) {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const endpoint = await api('POST', `${ws(tenant)}/webhook-endpoints`, {
      token: tenant.owner.token,
      body: { url: receiver.url, event_types: ['contact.created'] },
    });
    expect(endpoint.status).toBe(201);
    const secret = await webhookSecret(tenant);
    return {
      receiver,
      /** contact id → how many requests carried its event. */
      counts: () => {
        const byContact = new Map<string, number>();
        for (const r of receiver.requests) {
          const payload = new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Json;
          expect(payload.type).toBe('contact.created');
          expect(r.headers['webhook-id']).toBe(`evt_contact_created_${payload.data.contact_id}`);
          byContact.set(payload.data.contact_id, (byContact.get(payload.data.contact_id) ?? 0) + 1);
        }
        return byContact;
      },
    };
  }

  test('the contacts a sync creates are announced once each; merged ones are not', async () => {
    const { tenant, account, integration } = await setup('Announcing Realty');
    // Olivia exists already: the sync merges her (no event for her from the sync).
    const existing = await api('POST', `${ws(tenant)}/contacts`, {
      token: tenant.owner.token,
      body: { phone: '+61491570001', first_name: 'Liv' },
    });
    expect(existing.status).toBe(201);
    const events = await contactEvents(tenant);
    await settle();
    const before = events.receiver.requests.length; // Liv's own contact.created, if it came after the subscription

    const job = await run(tenant, integration.id, 'connect');
    expect(job.counts).toMatchObject({ contacts_created: 2, contacts_merged: 1 });
    const created = (await contacts(tenant)).filter((c) => c.source === 'integration');
    expect(created).toHaveLength(2);
    await waitFor(() => events.receiver.requests.length >= before + 2, { what: 'two contact.created' });
    await crm(account).addContact({ phone: '+61491570066', first_name: 'Una' });
    await crm(account).addContact({ phone: '+61491570002', email: 'jack@example.com' }); // Jack again: merged
    expect((await run(tenant, integration.id, 'sync')).counts).toMatchObject({
      contacts_created: 1,
      contacts_merged: 1,
    });
    await settle();
    const counts = events.counts();
    const una = (await contacts(tenant)).find((c) => c.phone === '+61491570066');
    for (const contact of [...created, una]) expect(counts.get(contact.id)).toBe(1);
    expect(counts.get(existing.body.id) ?? 0).toBeLessThanOrEqual(1); // its own create only, never the sync's
    expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(before + 3);
  });

  test('a page received again after crashes (before a mark, half-way): each created contact announced once', async () => {
    const { tenant, account, integration } = await setup('Crashing Realty');
    await run(tenant, integration.id, 'connect');
    const events = await contactEvents(tenant);
    await crm(account).addContact({ phone: '+61491570041', first_name: 'Ada' });
    await crm(account).addContact({ phone: '+61491570042', first_name: 'Ben' });
    await crm(account).addContact({ phone: '+61491570043', first_name: 'Cy' });
    const stored = await requireIntegration(tenant.workspaceId, integration.id);
    const job = await startSync(stored, 'sync', { send: false });
    // Ada is created and the page crashes before her mark; then Ben's record half-way; then it completes.
    await expect(
      syncPage(tenant.workspaceId, integration.id, job.jobId, { failBeforeMark: 0 }),
    ).rejects.toThrow(/before a mark/);
    await expect(
      syncPage(tenant.workspaceId, integration.id, job.jobId, { failAfterRecords: 1 }),
    ).rejects.toThrow(/half-way/);
    expect(await syncPage(tenant.workspaceId, integration.id, job.jobId)).toMatch(/completed/);
    expect(await syncPage(tenant.workspaceId, integration.id, job.jobId)).toBe('not processing');
    const done = await jobDone(tenant, integration.id, job.jobId);
    // Ada's create was applied again as a merge into the contact it made (counted as an update).
    expect(done.counts).toMatchObject({ total: 3, contacts: 3, contacts_created: 2, contacts_merged: 1 });
    await waitFor(() => events.receiver.requests.length >= 3, { what: 'three contact.created' });
    await settle();
    const counts = events.counts();
    const people = await contacts(tenant);
    for (const phone of ['+61491570041', '+61491570042', '+61491570043']) {
      const contact = people.find((c) => c.phone === phone);
      expect(counts.get(contact.id)).toBe(1);
    }
    expect(events.receiver.requests).toHaveLength(3);
  });
});
