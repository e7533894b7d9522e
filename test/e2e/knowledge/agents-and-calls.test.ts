import { Webhook } from 'standardwebhooks';
import { api, type Json } from '../../helpers/http.js';
import { waitFor } from '../../helpers/wait.js';
import {
  connectNumber,
  createAgent,
  newTenant,
  startCall,
  startReceiver,
  TO,
  webhookSecret,
  ws,
  type Receiver,
} from '../post-call/fixtures.js';

/**
 * Knowledge bases in use: agents carry knowledge_base_ids (bases of their own workspace only), and
 * the post-call webhook's property entries take the listing's full address from the listings base,
 * by the listing's id or external id.
 */

const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.stop()));
});

test('agents carry knowledge_base_ids of their workspace; unknown or foreign bases are 422', async () => {
  const tenant = await newTenant();
  const other = await newTenant();
  const mine = await api('POST', `${ws(tenant)}/knowledge-bases`, {
    token: tenant.owner.token,
    body: { name: 'Listings', kind: 'listings' },
  });
  const theirs = await api('POST', `${ws(other)}/knowledge-bases`, {
    token: other.owner.token,
    body: { name: 'Theirs', kind: 'documents' },
  });
  const agent = await createAgent(tenant, [], { knowledge_base_ids: [mine.body.id] });
  expect(agent.knowledge_base_ids).toEqual([mine.body.id]);
  expect((await createAgent(tenant, [])).knowledge_base_ids).toEqual([]);

  for (const ids of [[theirs.body.id], ['kb_nope'], [mine.body.id, mine.body.id]]) {
    const res = await api('POST', `${ws(tenant)}/agents`, {
      token: tenant.owner.token,
      body: { name: 'Bad', knowledge_base_ids: ids },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc.slice(0, 2)).toEqual(['body', 'knowledge_base_ids']);
  }
  const cleared = await api('PATCH', `${ws(tenant)}/agents/${agent.id}`, {
    token: tenant.owner.token,
    body: { knowledge_base_ids: [] },
  });
  expect(cleared.body.knowledge_base_ids).toEqual([]);
  const refused = await api('PATCH', `${ws(tenant)}/agents/${agent.id}`, {
    token: tenant.owner.token,
    body: { knowledge_base_ids: [theirs.body.id] },
  });
  expect(refused.status).toBe(422);
  expect(
    (await api('GET', `${ws(tenant)}/agents/${agent.id}`, { token: tenant.owner.token })).body
      .knowledge_base_ids,
  ).toEqual([]);
});

test("the post-call webhook's property entry carries the listing's full address from the listings base", async () => {
  const tenant = await newTenant();
  const hook = await startReceiver();
  receivers.push(hook);
  const kb = (
    await api('POST', `${ws(tenant)}/knowledge-bases`, {
      token: tenant.owner.token,
      body: { name: 'Listings', kind: 'listings' },
    })
  ).body;
  const listing = (
    await api('POST', `${ws(tenant)}/knowledge-bases/${kb.id}/items`, {
      token: tenant.owner.token,
      body: {
        external_id: 'CRM-77',
        address: '7 Harbour View Road',
        suburb: 'Mosman',
        state: 'NSW',
        postcode: '2088',
        price_text: '$2,450,000',
        status: 'available',
      },
    })
  ).body as Json;
  const agent = await createAgent(tenant, [{ type: 'webhook', config: { url: hook.url } }], {
    knowledge_base_ids: [kb.id],
  });
  await connectNumber(tenant, agent.id);
  // The agent quotes the listing by its external id, and only its street.
  const byExternal = await startCall(tenant, agent.id, TO.answered, {
    name: 'Sam',
    listing_id: 'CRM-77',
    listing_address: '7 Harbour View Rd',
    listing_price: '$2,450,000',
  });
  // …and by its item id; and a listing no base knows keeps what the agent said.
  const byItem = await startCall(tenant, agent.id, TO.answered, {
    name: 'Kim',
    listing_id: listing.id,
    listing_address: 'Harbour View',
    listing_price: '$2,450,000',
  });
  const unknown = await startCall(tenant, agent.id, TO.answered, {
    name: 'Lee',
    listing_id: 'lst_elsewhere',
    listing_address: '1 Nowhere Lane',
    listing_price: '$1',
  });
  const secret = await webhookSecret(tenant);
  const payloadOf = async (callId: string) => {
    const request = await waitFor(
      () => hook.requests.find((r) => JSON.parse(r.body).data.call_id === callId),
      { what: `the webhook of ${callId}`, timeoutMs: 60_000 },
    );
    return new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as Json;
  };
  expect((await payloadOf(byExternal)).data.properties).toEqual([
    { listing_id: 'CRM-77', address: '7 Harbour View Road, Mosman NSW 2088', price: '$2,450,000' },
  ]);
  expect((await payloadOf(byItem)).data.properties).toEqual([
    { listing_id: listing.id, address: '7 Harbour View Road, Mosman NSW 2088', price: '$2,450,000' },
  ]);
  expect((await payloadOf(unknown)).data.properties).toEqual([
    { listing_id: 'lst_elsewhere', address: '1 Nowhere Lane', price: '$1' },
  ]);
}, 120_000);
