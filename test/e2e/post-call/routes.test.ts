import { Webhook } from 'standardwebhooks';
import { CallRecordWire } from '../../../functions/post-call/schemas.js';
import { api } from '../../helpers/http.js';
import { waitFor } from '../../helpers/wait.js';
import {
  addMember,
  apiKey,
  closeSqs,
  connectNumber,
  createAgent,
  deliveries,
  newTenant,
  startCall,
  startReceiver,
  webhookDlqBodies,
  webhookSecret,
  ws,
  type Receiver,
  type Tenant,
  type User,
} from './fixtures.js';

/**
 * The routes of the post-call capability: webhook secret (read/rotate), deliveries (list/resend) and
 * the webhook action's test payload — happy paths, bad input, roles, and tenant isolation (another
 * tenant's ids are 404, exactly like unknown ones).
 */

const UNKNOWN = {
  delivery: 'dlv_01JZZZZZZZZZZZZZZZZZZZZZZZ',
  agent: 'ag_01JZZZZZZZZZZZZZZZZZZZZZZZ',
  action: 'act_01JZZZZZZZZZZZZZZZZZZZZZZZ',
};

let mine: Tenant;
let theirs: Tenant;
let viewer: User;
let member: User;
let hook: Receiver;
let agent: { id: string; post_call_actions: { id: string; type: string }[] };
let theirAgent: { id: string; post_call_actions: { id: string; type: string }[] };
const receivers: Receiver[] = [];

beforeAll(async () => {
  [mine, theirs] = await Promise.all([newTenant(), newTenant()]);
  [viewer, member] = await Promise.all([addMember(mine, 'viewer'), addMember(mine, 'member')]);
  hook = await startReceiver();
  receivers.push(hook);
  agent = await createAgent(mine, [
    { type: 'webhook', config: { url: hook.url } },
    { type: 'contact_update', config: {} },
  ]);
  theirAgent = await createAgent(theirs, [{ type: 'webhook', config: { url: hook.url } }]);
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.stop()));
  closeSqs();
});

const testPath = (t: Tenant, agentId: string, actionId: string) =>
  `${ws(t)}/agents/${agentId}/post-call-actions/${actionId}/test`;

describe('GET/POST …/webhook-secret', () => {
  it('reads the same whsec_ secret until it is rotated; members may, viewers and API keys may not', async () => {
    const first = await api('GET', `${ws(mine)}/webhook-secret`, { token: mine.owner.token });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      previous_secret_expires_at: null,
      rotated_at: null,
    });
    expect((await api('GET', `${ws(mine)}/webhook-secret`, { token: member.token })).body.secret).toBe(
      first.body.secret,
    );
    // The signing secret is for dashboard users only: an API key (even of this workspace) is refused.
    const byKey = await api('GET', `${ws(mine)}/webhook-secret`, {
      token: await apiKey(mine, ['start_call', 'calls:read', 'agents:write']),
    });
    expect(byKey).toMatchObject({
      status: 403,
      body: { error: "API keys cannot be used here: this route takes a signed-in user's token" },
    });
    expect(byKey.text).not.toContain('whsec_');
    // A viewer's GET is refused by role (who may), never answered "read-only".
    const refused = await api('GET', `${ws(mine)}/webhook-secret`, { token: viewer.token });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      error: 'Only workspace admins and members can see the webhook signing secret',
    });
    expect(refused.text).not.toContain('whsec_');
  });

  it('is 404 for another tenant and 401 without a credential', async () => {
    expect(await api('GET', `${ws(mine)}/webhook-secret`, { token: theirs.owner.token })).toMatchObject({
      status: 404,
      body: { error: 'Workspace not found' },
    });
    expect(await api('POST', `${ws(mine)}/webhook-secret`, { token: theirs.owner.token })).toMatchObject({
      status: 404,
      body: { error: 'Workspace not found' },
    });
    expect((await api('GET', `${ws(mine)}/webhook-secret`)).status).toBe(401);
  });

  it('rotates for members; viewers, other tenants and bad bodies change nothing', async () => {
    const before = await webhookSecret(mine);
    expect((await api('POST', `${ws(mine)}/webhook-secret`, { token: viewer.token })).status).toBe(403);
    expect(
      (
        await api('POST', `${ws(mine)}/webhook-secret`, {
          token: mine.owner.token,
          rawBody: '{',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(422);
    expect(await webhookSecret(mine)).toBe(before);
    const rotated = await api('POST', `${ws(mine)}/webhook-secret`, { token: member.token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(before);
    expect(rotated.body.rotated_at).toEqual(expect.any(String));
    expect(rotated.body.previous_secret_expires_at).toEqual(expect.any(String));
    expect(await webhookSecret(mine)).toBe(rotated.body.secret);
    expect(await webhookSecret(theirs)).not.toBe(rotated.body.secret);
  });
});

describe('POST …/post-call-actions/{action_id}/test', () => {
  it('sends a signed test payload now and returns the attempt', async () => {
    const res = await api('POST', testPath(mine, agent.id, agent.post_call_actions[0].id), {
      token: member.token,
    });
    expect(res.status).toBe(200);
    expect(res.body.attempt).toMatchObject({ status_code: 204, error: null, manual: true });
    expect(res.body.delivery).toMatchObject({
      event_type: 'webhook.test',
      kind: 'test',
      call_id: null,
      url: hook.url,
      state: 'succeeded',
    });
    const request = hook.requests[hook.requests.length - 1];
    expect(request.headers['webhook-id']).toBe(res.body.delivery.webhook_id);
    const payload = new Webhook(await webhookSecret(mine)).verify(
      request.body,
      request.headers as Record<string, string>,
    ) as { type: string; data: unknown };
    expect(payload.type).toBe('webhook.test');
    const data = CallRecordWire.unwrap().strict().parse(payload.data);
    expect(data).toMatchObject({ workspace_id: mine.workspaceId, agent_id: agent.id, agent_name: 'Riley' });
    expect(data.properties[0].address).toContain('Example Street');
    // It is listed with the workspace's deliveries (no call).
    expect((await deliveries(mine)).some((d) => d.id === res.body.delivery.id)).toBe(true);
  });

  it('is 404 for unknown or malformed agents and actions, and for another tenant', async () => {
    const action = agent.post_call_actions[0].id;
    expect(
      await api('POST', testPath(mine, UNKNOWN.agent, action), { token: mine.owner.token }),
    ).toMatchObject({ status: 404, body: { error: 'Agent not found' } });
    expect(await api('POST', testPath(mine, 'nope', action), { token: mine.owner.token })).toMatchObject({
      status: 404,
      body: { error: 'Agent not found' },
    });
    expect(
      await api('POST', testPath(mine, agent.id, UNKNOWN.action), { token: mine.owner.token }),
    ).toMatchObject({ status: 404, body: { error: 'Post-call action not found' } });
    expect((await api('POST', testPath(mine, agent.id, 'act_x'), { token: mine.owner.token })).status).toBe(
      404,
    );
    // Their agent through my workspace, my agent through their token.
    expect(
      await api('POST', testPath(mine, theirAgent.id, theirAgent.post_call_actions[0].id), {
        token: mine.owner.token,
      }),
    ).toMatchObject({ status: 404, body: { error: 'Agent not found' } });
    expect(await api('POST', testPath(mine, agent.id, action), { token: theirs.owner.token })).toMatchObject({
      status: 404,
      body: { error: 'Workspace not found' },
    });
  });

  it('refuses viewers, bad bodies and non-webhook actions, sending nothing', async () => {
    const sent = hook.requests.length;
    const action = agent.post_call_actions[0].id;
    expect(await api('POST', testPath(mine, agent.id, action), { token: viewer.token })).toMatchObject({
      status: 403,
      body: { error: 'Viewers have read-only access' },
    });
    const bad = await api('POST', testPath(mine, agent.id, action), {
      token: mine.owner.token,
      body: { url: 'http://elsewhere' },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ type: 'extra_forbidden', loc: ['body', 'url'] });
    const contactAction = agent.post_call_actions[1].id;
    expect(
      await api('POST', testPath(mine, agent.id, contactAction), { token: mine.owner.token }),
    ).toMatchObject({
      status: 409,
      body: { error: 'Only webhook actions can send a test payload' },
    });
    expect(hook.requests.length).toBe(sent);
  });

  it('refuses loopback, private, link-local and metadata URLs without a connection', async () => {
    const loopback2 = await startReceiver(undefined, '127.0.0.2');
    const loopback6 = await startReceiver(undefined, '::1');
    receivers.push(loopback2, loopback6);
    const urls = [
      loopback2.url,
      `http://[::1]:${loopback6.port}/hook`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/hook',
      'http://192.168.0.10/hook',
    ];
    const ssrfAgent = await createAgent(
      mine,
      urls.map((url) => ({ type: 'webhook', config: { url } })),
    );
    for (const [i, url] of urls.entries()) {
      const res = await api('POST', testPath(mine, ssrfAgent.id, ssrfAgent.post_call_actions[i].id), {
        token: mine.owner.token,
      });
      expect({ url, status: res.status }).toEqual({ url, status: 200 });
      expect(res.body.attempt.status_code).toBeNull();
      expect(res.body.attempt.error).toMatch(/^refused: address not allowed/);
      expect(res.body.delivery).toMatchObject({ state: 'dead', dead_reason: 'refused' });
    }
    expect(loopback2.connections).toBe(0);
    expect(loopback6.connections).toBe(0);
  });
});

describe('GET …/webhook-deliveries and POST …/resend', () => {
  let callId: string;
  let deadId: string;

  beforeAll(async () => {
    // A call whose webhook is refused (SSRF): dead after one attempt, never retried, dead-lettered.
    const refusedAgent = await createAgent(mine, [
      { type: 'webhook', config: { url: 'http://169.254.169.254/latest/meta-data/' } },
      { type: 'webhook', config: { url: hook.url } },
    ]);
    await connectNumber(mine, refusedAgent.id);
    callId = await startCall(mine, refusedAgent.id);
    const list = await waitFor(
      async () => {
        const items = await deliveries(mine, callId);
        return items.length === 2 && items.every((d) => d.state !== 'pending') ? items : undefined;
      },
      { what: 'both deliveries to settle' },
    );
    deadId = list.find((d) => d.state === 'dead')!.id;
  });

  it("lists a call's deliveries with every attempt; a refused URL is dead after one attempt and dead-lettered", async () => {
    const list = await deliveries(mine, callId, viewer.token);
    expect(list).toHaveLength(2);
    const dead = list.find((d) => d.id === deadId)!;
    expect(dead).toMatchObject({
      state: 'dead',
      dead_reason: 'refused',
      call_id: callId,
      event_type: 'call.ended',
    });
    expect(dead.attempts).toHaveLength(1);
    expect(dead.attempts[0]).toMatchObject({
      status_code: null,
      error: expect.stringMatching(/^refused: address not allowed/),
    });
    await waitFor(async () => (await webhookDlqBodies()).find((b) => b.delivery_id === deadId), {
      what: 'the refused delivery in the DLQ',
      timeoutMs: 30_000,
      intervalMs: 500,
    });
  });

  it('pages newest first with limit/cursor and validates the query', async () => {
    const first = await api('GET', `${ws(mine)}/webhook-deliveries?limit=1`, { token: mine.owner.token });
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(1);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await api(
      'GET',
      `${ws(mine)}/webhook-deliveries?limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`,
      { token: mine.owner.token },
    );
    expect(second.status).toBe(200);
    expect(second.body.items[0].id < first.body.items[0].id).toBe(true);
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'colour=red', 'cursor=not-a-cursor']) {
      const res = await api('GET', `${ws(mine)}/webhook-deliveries?${query}`, { token: mine.owner.token });
      expect({ query, status: res.status }).toEqual({ query, status: 422 });
      expect(res.body.detail[0].loc[0]).toBe('query');
    }
  });

  it('is readable with an API key of the workspace that has calls:read', async () => {
    const reader = await apiKey(mine, ['calls:read']);
    const list = await api('GET', `${ws(mine)}/webhook-deliveries?call_id=${callId}`, { token: reader });
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(2);
    expect(
      await api('GET', `${ws(mine)}/webhook-deliveries`, { token: await apiKey(mine, ['start_call']) }),
    ).toMatchObject({
      status: 403,
      body: { error: 'API key lacks required scope: calls:read' },
    });
    expect(
      await api('GET', `${ws(mine)}/webhook-deliveries`, { token: await apiKey(theirs, ['calls:read']) }),
    ).toMatchObject({
      status: 403,
      body: { error: 'API key not authorized for this workspace' },
    });
  });

  it("shows no other tenant's deliveries", async () => {
    expect(await api('GET', `${ws(mine)}/webhook-deliveries`, { token: theirs.owner.token })).toMatchObject({
      status: 404,
      body: { error: 'Workspace not found' },
    });
    expect(await deliveries(theirs, callId)).toEqual([]);
    expect((await deliveries(theirs)).some((d) => d.id === deadId)).toBe(false);
  });

  it("resends by hand with the same webhook-id; 404 for unknown, malformed and other tenants' deliveries; viewers refused", async () => {
    const testSend = await api('POST', testPath(mine, agent.id, agent.post_call_actions[0].id), {
      token: mine.owner.token,
    });
    const deliveryId = testSend.body.delivery.id as string;
    const sent = hook.requests.length;
    const resent = await api('POST', `${ws(mine)}/webhook-deliveries/${deliveryId}/resend`, {
      token: member.token,
    });
    expect(resent.status).toBe(200);
    expect(resent.body.attempts).toHaveLength(2);
    expect(resent.body.attempts[1]).toMatchObject({ status_code: 204, manual: true });
    expect(hook.requests).toHaveLength(sent + 1);
    expect(hook.requests[sent].headers['webhook-id']).toBe(testSend.body.delivery.webhook_id);

    expect(
      await api('POST', `${ws(mine)}/webhook-deliveries/${UNKNOWN.delivery}/resend`, {
        token: mine.owner.token,
      }),
    ).toMatchObject({
      status: 404,
      body: { error: 'Webhook delivery not found' },
    });
    expect(
      (await api('POST', `${ws(mine)}/webhook-deliveries/garbage/resend`, { token: mine.owner.token }))
        .status,
    ).toBe(404);
    expect(
      await api('POST', `${ws(theirs)}/webhook-deliveries/${deliveryId}/resend`, {
        token: theirs.owner.token,
      }),
    ).toMatchObject({
      status: 404,
      body: { error: 'Webhook delivery not found' },
    });
    expect(
      (
        await api('POST', `${ws(mine)}/webhook-deliveries/${deliveryId}/resend`, {
          token: theirs.owner.token,
        })
      ).status,
    ).toBe(404);
    expect(
      (await api('POST', `${ws(mine)}/webhook-deliveries/${deliveryId}/resend`, { token: viewer.token }))
        .status,
    ).toBe(403);
    expect(hook.requests).toHaveLength(sent + 1);
  });
});
