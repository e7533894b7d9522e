import { GetQueueUrlCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Webhook } from 'standardwebhooks';
import { QUEUES } from '../../../functions/platform/resources.js';
import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { readQuiescence, waitFor, waitForConsumed, waitForQuiescence } from '../../helpers/wait.js';
import {
  connectNumber,
  createAgent,
  deliveries,
  newTenant,
  startCall,
  startReceiver,
  TO,
  webhookSecret,
  ws,
  type Receiver,
  type Tenant,
} from '../post-call/fixtures.js';

/**
 * Workspace events to webhook endpoints end to end: a real call through the gateway and the
 * telephony simulator publishes `call.ended`, RouteWorkspaceEvents delivers it (signed with the
 * workspace's webhook secret) to each enabled endpoint subscribed to it, once.
 */

const receivers: Receiver[] = [];
async function receiver(...args: Parameters<typeof startReceiver>) {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}
let sqs: SQSClient | undefined;
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.stop()));
  sqs?.destroy();
});

async function subscribe(tenant: Tenant, url: string, eventTypes: string[], enabled = true): Promise<Json> {
  const res = await api('POST', `${ws(tenant)}/webhook-endpoints`, {
    token: tenant.owner.token,
    body: { url, event_types: eventTypes, enabled },
  });
  if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${res.text}`);
  return res.body;
}

/** Sends a message to the workspace-events queue as a publisher would (a redelivery, a republish). */
async function sendEventMessage(body: unknown): Promise<void> {
  sqs ??= new SQSClient({ region: stackState().env.AWS_REGION });
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: QUEUES.workspaceEvents.name }));
  await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: JSON.stringify(body) }));
}

const headersOf = (request: { headers: Record<string, unknown> }) =>
  request.headers as Record<string, string>;

describe('workspace events to webhook endpoints', () => {
  it('call.ended: one signed delivery per completed call to each subscribed, enabled endpoint; a redelivered event sends nothing more', async () => {
    const subscribed = await receiver();
    const other = await receiver();
    const disabled = await receiver();
    const tenant = await newTenant();
    const endpoint = await subscribe(tenant, subscribed.url, ['call.ended']);
    await subscribe(tenant, other.url, ['contact.created', 'sms.received']);
    await subscribe(tenant, disabled.url, ['call.ended'], false);
    const agent = await createAgent(tenant, []);
    const agentNumber = await connectNumber(tenant, agent.id);
    const callId = await startCall(tenant, agent.id, TO.answered);

    const request = await waitFor(() => subscribed.requests[0], { what: 'the call.ended event' });
    const secret = await webhookSecret(tenant);
    const payload = new Webhook(secret).verify(request.body, headersOf(request)) as {
      type: string;
      timestamp: string;
      data: Record<string, unknown>;
    };
    expect(request.headers['webhook-id']).toBe(`evt_call_ended_${callId}`);
    expect(payload).toEqual({
      type: 'call.ended',
      timestamp: payload.data.ended_at,
      data: {
        call_id: callId,
        agent_id: agent.id,
        campaign_id: null,
        direction: 'outbound',
        status: 'completed',
        end_reason: 'agent_hangup', // the simulated caller says goodbye; the agent ends the call
        duration_seconds: expect.any(Number),
        from_phone: agentNumber,
        to_phone: TO.answered,
        created_at: expect.any(String),
        ended_at: expect.any(String),
      },
    });
    expect(payload.data.duration_seconds).toBeGreaterThan(0);

    await waitForQuiescence();
    expect(subscribed.requests).toHaveLength(1);
    expect(other.requests).toHaveLength(0);
    expect(disabled.requests).toHaveLength(0);
    expect(disabled.connections).toBe(0);

    // The log: one delivery, with its event type, endpoint and event.
    const log = await deliveries(tenant, callId);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      id: expect.stringMatching(/^dlv_[0-9A-HJKMNP-TV-Z]{26}$/),
      webhook_id: `evt_call_ended_${callId}`,
      event_type: 'call.ended',
      kind: 'event',
      call_id: callId,
      agent_id: agent.id,
      action_id: null,
      endpoint_id: endpoint.id,
      event_id: `evt_call_ended_${callId}`,
      url: subscribed.url,
      state: 'succeeded',
      attempts: [{ status_code: 204, error: null, manual: false }],
    });

    // The same event again (SQS redelivers; a publisher that crashed republishes): nothing more.
    const before = await readQuiescence();
    await sendEventMessage({
      type: 'workspace.event',
      event: {
        id: `evt_call_ended_${callId}`,
        type: 'call.ended',
        workspace_id: tenant.workspaceId,
        organisation_id: tenant.organisationId,
        occurred_at: payload.timestamp,
        data: payload.data,
      },
    });
    await waitForConsumed(before, { RouteWorkspaceEvents: 1 });
    expect(subscribed.requests).toHaveLength(1);
    expect(await deliveries(tenant, callId)).toHaveLength(1);
  });

  it('a failing endpoint is retried with the same webhook-id, like the post-call webhook', async () => {
    const flaky = await receiver((n) => (n === 0 ? { status: 503 } : { status: 200 }));
    const tenant = await newTenant();
    await subscribe(tenant, flaky.url, ['call.ended']);
    const agent = await createAgent(tenant, []);
    await connectNumber(tenant, agent.id);
    const callId = await startCall(tenant, agent.id, TO.answered);
    await waitFor(() => flaky.requests[1], { what: 'the retry' });
    await waitForQuiescence();
    expect(flaky.requests).toHaveLength(2);
    expect(flaky.requests[1]?.headers['webhook-id']).toBe(flaky.requests[0]?.headers['webhook-id']);
    const [delivery] = await deliveries(tenant, callId);
    expect(delivery).toMatchObject({ state: 'succeeded', event_type: 'call.ended' });
    expect(delivery.attempts.map((a: Json) => a.status_code)).toEqual([503, 200]);
  });

  it('contact.created: a contact made through the API is delivered once, with the contact', async () => {
    const hook = await receiver();
    const tenant = await newTenant();
    const endpoint = await subscribe(tenant, hook.url, ['contact.created']);
    const res = await api('POST', `${ws(tenant)}/contacts`, {
      token: tenant.owner.token,
      body: { first_name: 'Avery', last_name: 'Example', phone: '+61491570199' },
    });
    expect(res.status).toBe(201);
    const request = await waitFor(() => hook.requests[0], { what: 'the contact.created event' });
    const payload = new Webhook(await webhookSecret(tenant)).verify(request.body, headersOf(request)) as Json;
    expect(payload).toMatchObject({
      type: 'contact.created',
      data: { contact_id: res.body.id, id: res.body.id, first_name: 'Avery', phone: '+61491570199' },
    });
    expect(request.headers['webhook-id']).toBe(`evt_contact_created_${res.body.id}`);
    await waitForQuiescence();
    expect(hook.requests).toHaveLength(1);
    const log = (await deliveries(tenant)).filter((d: Json) => d.endpoint_id === endpoint.id);
    expect(log).toEqual([
      expect.objectContaining({
        event_type: 'contact.created',
        kind: 'event',
        call_id: null,
        state: 'succeeded',
      }),
    ]);
  });

  it("?endpoint_id= lists one endpoint's deliveries only, and pages them", async () => {
    const hook = await receiver();
    const tenant = await newTenant();
    const contacts = await subscribe(tenant, hook.url, ['contact.created']);
    const quiet = await subscribe(tenant, `${hook.url}/quiet`, ['listing.sold']);
    for (const [index, name] of ['Ada', 'Bo', 'Cy'].entries()) {
      const res = await api('POST', `${ws(tenant)}/contacts`, {
        token: tenant.owner.token,
        body: { first_name: name, phone: `+6149157020${index}` },
      });
      expect(res.status).toBe(201);
    }
    await waitFor(() => hook.requests.length >= 3, { what: 'three contact.created deliveries' });
    await waitForQuiescence();
    const listed = async (query: string) => {
      const res = await api('GET', `${ws(tenant)}/webhook-deliveries?${query}`, {
        token: tenant.owner.token,
      });
      expect(res.status).toBe(200);
      return res.body as { items: Json[]; next_cursor: string | null };
    };
    const all = await listed(`endpoint_id=${contacts.id}`);
    expect(all.items).toHaveLength(3);
    expect(all.items.every((d) => d.endpoint_id === contacts.id && d.event_type === 'contact.created')).toBe(
      true,
    );
    expect((await listed(`endpoint_id=${quiet.id}`)).items).toEqual([]);
    expect((await listed('endpoint_id=whe_01JZZZZZZZZZZZZZZZZZZZZZZZ')).items).toEqual([]);
    // Two a page: the second page holds the third, and no more.
    const first = await listed(`endpoint_id=${contacts.id}&limit=2`);
    expect(first.items).toHaveLength(2);
    const second = await listed(
      `endpoint_id=${contacts.id}&limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`,
    );
    expect(second.items.map((d) => d.id)).toEqual(all.items.slice(2).map((d) => d.id));
  });

  it('an endpoint disabled after subscribing, or deleted, gets nothing', async () => {
    const hook = await receiver();
    const gone = await receiver();
    const tenant = await newTenant();
    const endpoint = await subscribe(tenant, hook.url, ['contact.created']);
    const deleted = await subscribe(tenant, gone.url, ['contact.created']);
    const removed = await api('DELETE', `${ws(tenant)}/webhook-endpoints/${deleted.id}`, {
      token: tenant.owner.token,
    });
    expect(removed.status).toBe(204);
    const off = await api('PATCH', `${ws(tenant)}/webhook-endpoints/${endpoint.id}`, {
      token: tenant.owner.token,
      body: { enabled: false },
    });
    expect(off.status).toBe(200);
    const before = await readQuiescence();
    const res = await api('POST', `${ws(tenant)}/contacts`, {
      token: tenant.owner.token,
      body: { first_name: 'Quinn', phone: '+61491570198' },
    });
    expect(res.status).toBe(201);
    await waitForConsumed(before, { RouteWorkspaceEvents: 1 });
    expect(hook.requests).toHaveLength(0);
    expect(gone.requests).toHaveLength(0);
    expect(await deliveries(tenant)).toEqual([]);
  });

  it('an endpoint answering 410 is disabled like a post-call URL; enabling it again delivers the next event', async () => {
    const hook = await receiver((n) => (n === 0 ? { status: 410 } : { status: 204 }));
    const tenant = await newTenant();
    const endpoint = await subscribe(tenant, hook.url, ['contact.created']);
    const contact = async (phone: string) => {
      const before = await readQuiescence();
      const res = await api('POST', `${ws(tenant)}/contacts`, {
        token: tenant.owner.token,
        body: { first_name: 'Jo', phone },
      });
      expect(res.status).toBe(201);
      await waitForConsumed(before, { RouteWorkspaceEvents: 1 });
      return res.body.id as string;
    };
    const mine = async () =>
      (await deliveries(tenant)).filter((d: Json) => d.endpoint_id === endpoint.id).reverse();

    await contact('+61491570181');
    await contact('+61491570182');
    expect(hook.requests).toHaveLength(1);
    expect((await mine()).map((d: Json) => [d.state, d.dead_reason])).toEqual([
      ['dead', 'gone'],
      ['dead', 'endpoint_disabled'],
    ]);

    const on = await api('PATCH', `${ws(tenant)}/webhook-endpoints/${endpoint.id}`, {
      token: tenant.owner.token,
      body: { enabled: true },
    });
    expect(on.status).toBe(200);
    const third = await contact('+61491570183');
    expect(hook.requests).toHaveLength(2);
    expect(hook.requests[1]?.headers['webhook-id']).toBe(`evt_contact_created_${third}`);
    expect((await mine()).map((d: Json) => d.state)).toEqual(['dead', 'dead', 'succeeded']);
  });

  it('a retry to an endpoint deleted meanwhile is not made: the delivery is dead as endpoint_deleted', async () => {
    // The first answer asks for the retry 10 s later (Retry-After), leaving the delete ample time to land.
    const hook = await receiver((n) =>
      n === 0 ? { status: 503, headers: { 'retry-after': '10' } } : { status: 204 },
    );
    const tenant = await newTenant();
    const endpoint = await subscribe(tenant, hook.url, ['contact.created']);
    const res = await api('POST', `${ws(tenant)}/contacts`, {
      token: tenant.owner.token,
      body: { first_name: 'Lee', phone: '+61491570184' },
    });
    expect(res.status).toBe(201);
    await waitFor(() => hook.requests[0], { what: 'the first attempt' });
    const removed = await api('DELETE', `${ws(tenant)}/webhook-endpoints/${endpoint.id}`, {
      token: tenant.owner.token,
    });
    expect(removed.status).toBe(204);
    const [delivery] = await waitFor(
      async () => {
        const log = await deliveries(tenant);
        return log[0]?.state === 'dead' ? log : undefined;
      },
      { what: 'the delivery to end' },
    );
    await waitForQuiescence();
    expect(hook.requests).toHaveLength(1);
    expect(delivery).toMatchObject({
      endpoint_id: endpoint.id,
      state: 'dead',
      dead_reason: 'endpoint_deleted',
      attempts: [{ status_code: 503 }],
    });
  });
});
