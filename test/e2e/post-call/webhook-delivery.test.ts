import { Webhook } from 'standardwebhooks';
import { CallRecordWire } from '../../../functions/post-call/schemas.js';
import { api } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import {
  connectNumber,
  createAgent,
  deliveries,
  newTenant,
  startCall,
  receiversForThisFile,
  TO,
  webhookDlqBodies,
  webhookSecret,
  ws,
} from './fixtures.js';

/**
 * The post-call webhook end to end on the local stack: a real call through the gateway and the
 * telephony simulator, the post-call queues, the delivery queue, and a receiver on this machine.
 */

const LISTING = {
  listing_id: 'lst_harbour_7',
  listing_address: '7 Harbour View Road, Mosman NSW 2088',
  listing_price: '$2,450,000',
};

const receiver = receiversForThisFile();

const headersOf = (request: { headers: Record<string, unknown> }) =>
  request.headers as Record<string, string>;

describe('the post-call webhook', () => {
  it('a completed call produces exactly one delivery, signed, with the documented payload', async () => {
    const hook = await receiver();
    const { tenant, agent, agentNumber } = await (async () => {
      const t = await newTenant();
      const a = await createAgent(t, [{ type: 'webhook', config: { url: hook.url } }]);
      return { tenant: t, agent: a, agentNumber: await connectNumber(t, a.id) };
    })();
    const callId = await startCall(tenant, agent.id, TO.answered, { name: 'Sam', ...LISTING });

    const request = await waitFor(() => hook.requests[0], { what: 'the webhook' });
    const secret = await webhookSecret(tenant);
    const payload = new Webhook(secret).verify(request.body, headersOf(request)) as {
      type: string;
      timestamp: string;
      data: unknown;
    };
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-id']).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/);

    expect(payload.type).toBe('call.ended');
    const data = CallRecordWire.unwrap().strict().parse(payload.data);
    expect(payload.timestamp).toBe(data.ended_at);
    expect(data).toMatchObject({
      call_id: callId,
      workspace_id: tenant.workspaceId,
      agent_id: agent.id,
      agent_name: 'Riley',
      direction: 'outbound',
      status: 'completed',
      from_phone: agentNumber,
      to_phone: TO.answered,
      parameters: { name: 'Sam', ...LISTING },
      recording: {
        key: `recordings/${tenant.workspaceId}/${callId}.wav`,
        url: expect.stringContaining(`/api/v1/workspaces/${tenant.workspaceId}/calls/${callId}/recording`),
        content_type: 'audio/wav',
      },
      properties: [
        { listing_id: LISTING.listing_id, address: LISTING.listing_address, price: LISTING.listing_price },
      ],
    });
    expect(data.duration_seconds).toBeGreaterThan(0);
    expect(data.transcript.length).toBeGreaterThan(1);
    expect(data.sentiment.turns).toHaveLength(data.transcript.length);
    expect(['positive', 'neutral', 'negative']).toContain(data.sentiment.label);
    expect(data.summary).toContain(`Outbound call to ${TO.answered}`);
    // The call detail of the calls API shows the same sentiment.
    const detail = await api('GET', `${ws(tenant)}/calls/${callId}`, { token: tenant.owner.token });
    expect(detail.body.sentiment).toEqual(data.sentiment);

    // Exactly one: once the stack has settled (no attempt left on the delivery queue, delayed or in
    // flight) nothing else has arrived, and the API shows one delivery with one attempt.
    await waitForQuiescence();
    expect(hook.requests).toHaveLength(1);
    const list = await deliveries(tenant, callId);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      webhook_id: request.headers['webhook-id'],
      event_type: 'call.ended',
      call_id: callId,
      url: hook.url,
      state: 'succeeded',
      next_attempt_at: null,
      attempts: [{ status_code: 204, error: null, manual: false }],
    });
    expect(list[0].attempts[0].latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('a receiver that fails twice then succeeds gets the same webhook-id three times, and the call shows three attempts', async () => {
    const hook = await receiver((n) => (n < 2 ? { status: 503, body: 'try later' } : { status: 200 }));
    const tenant = await newTenant();
    const agent = await createAgent(tenant, [{ type: 'webhook', config: { url: hook.url } }]);
    await connectNumber(tenant, agent.id);
    const callId = await startCall(tenant, agent.id);

    await waitFor(() => (hook.requests.length >= 3 ? true : undefined), { what: 'three attempts' });
    const ids = hook.requests.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(1);
    // Each attempt is signed afresh (its own timestamp) and verifies.
    const secret = await webhookSecret(tenant);
    for (const r of hook.requests)
      expect(() => new Webhook(secret).verify(r.body, headersOf(r))).not.toThrow();
    expect(new Set(hook.requests.map((r) => r.body)).size).toBe(1);
    // Backoff: the schedule is 1 s (+ up to 20 % jitter) between attempts.
    expect(hook.requests[1].at - hook.requests[0].at).toBeGreaterThanOrEqual(900);
    expect(hook.requests[2].at - hook.requests[1].at).toBeGreaterThanOrEqual(900);

    const list = await waitFor(
      async () => {
        const items = await deliveries(tenant, callId);
        return items[0]?.state === 'succeeded' ? items : undefined;
      },
      { what: 'the delivery to succeed' },
    );
    expect(list).toHaveLength(1);
    expect(list[0].attempts.map((a: { status_code: number }) => a.status_code)).toEqual([503, 503, 200]);
    expect(list[0].attempts[0].error).toBe('HTTP 503 Service Unavailable: try later');
    // No fourth attempt: nothing is left on the delivery queue once the stack has settled.
    await waitForQuiescence();
    expect(hook.requests).toHaveLength(3);
  });

  it('a receiver that always fails ends in the DLQ with every attempt recorded', async () => {
    const hook = await receiver(() => ({ status: 500 }));
    const tenant = await newTenant();
    const agent = await createAgent(tenant, [{ type: 'webhook', config: { url: hook.url } }]);
    await connectNumber(tenant, agent.id);
    const callId = await startCall(tenant, agent.id);

    const [dead] = await waitFor(
      async () => {
        const items = await deliveries(tenant, callId);
        return items[0]?.state === 'dead' ? items : undefined;
      },
      { what: 'the delivery to be dead', timeoutMs: 45_000 },
    );
    // WEBHOOK_RETRY_SCHEDULE=1,1,1: four attempts, every one recorded.
    expect(hook.requests).toHaveLength(4);
    expect(new Set(hook.requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(dead).toMatchObject({ state: 'dead', dead_reason: 'exhausted', next_attempt_at: null });
    expect(dead.attempts).toHaveLength(4);
    for (const attempt of dead.attempts) {
      expect(attempt).toMatchObject({
        status_code: 500,
        error: 'HTTP 500 Internal Server Error',
        manual: false,
      });
      expect(typeof attempt.at).toBe('string');
      expect(typeof attempt.latency_ms).toBe('number');
    }
    const inDlq = await waitFor(
      async () => (await webhookDlqBodies()).find((body) => body.delivery_id === dead.id),
      { what: 'the message in the webhook-delivery DLQ', timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(inDlq).toMatchObject({ type: 'webhook.attempt', workspace_id: tenant.workspaceId, attempt: 4 });
    expect(hook.requests).toHaveLength(4);

    // A failed delivery can be resent by hand: same webhook-id, one more (manual) attempt.
    const resent = await api('POST', `${ws(tenant)}/webhook-deliveries/${dead.id}/resend`, {
      token: tenant.owner.token,
    });
    expect(resent.status).toBe(200);
    expect(resent.body.attempts).toHaveLength(5);
    expect(resent.body.attempts[4]).toMatchObject({ status_code: 500, manual: true });
    expect(resent.body.state).toBe('dead');
    expect(hook.requests).toHaveLength(5);
    expect(hook.requests[4].headers['webhook-id']).toBe(dead.webhook_id);
  });

  it('is not retried on a 4xx other than 408/409/429, and a Retry-After is honoured', async () => {
    const rejecting = await receiver(() => ({ status: 422, body: 'no thanks' }));
    const limited = await receiver((n) =>
      n === 0 ? { status: 429, headers: { 'retry-after': '3' } } : { status: 200 },
    );
    const tenant = await newTenant();
    const agent = await createAgent(tenant, [
      { type: 'webhook', config: { url: rejecting.url } },
      { type: 'webhook', config: { url: limited.url } },
    ]);
    await connectNumber(tenant, agent.id);
    const callId = await startCall(tenant, agent.id);

    await waitFor(() => limited.requests[1], { what: 'the second attempt after Retry-After' });
    expect(limited.requests[1].at - limited.requests[0].at).toBeGreaterThanOrEqual(2900);
    const list = await waitFor(
      async () => {
        const items = await deliveries(tenant, callId);
        return items.length === 2 && items.every((d) => d.state !== 'pending') ? items : undefined;
      },
      { what: 'both deliveries to settle' },
    );
    await waitForQuiescence(); // no retry is left to come before "not retried" is counted
    const byUrl = Object.fromEntries(list.map((d) => [d.url, d]));
    expect(byUrl[rejecting.url]).toMatchObject({
      state: 'dead',
      dead_reason: 'rejected',
      attempts: [{ status_code: 422 }],
    });
    expect(byUrl[limited.url]).toMatchObject({
      state: 'succeeded',
      attempts: [{ status_code: 429 }, { status_code: 200 }],
    });
    expect(rejecting.requests).toHaveLength(1);
  });

  it('never follows a redirect: a 3xx is a failed attempt', async () => {
    const target = await receiver();
    const redirecting = await receiver((n) =>
      n === 0 ? { status: 302, headers: { location: target.url } } : { status: 204 },
    );
    const tenant = await newTenant();
    const agent = await createAgent(tenant, [{ type: 'webhook', config: { url: redirecting.url } }]);
    await connectNumber(tenant, agent.id);
    const callId = await startCall(tenant, agent.id);

    const [delivery] = await waitFor(
      async () => {
        const items = await deliveries(tenant, callId);
        return items[0]?.state === 'succeeded' ? items : undefined;
      },
      { what: 'the delivery to succeed on the retry' },
    );
    expect(delivery.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([302, 204]);
    expect(delivery.attempts[0].error).toContain('redirects are not followed');
    await waitForQuiescence();
    expect(target.requests).toHaveLength(0);
    expect(target.connections).toBe(0);
  });

  it('a 410 disables the endpoint and tells the workspace; later deliveries to it are not attempted', async () => {
    const gone = await receiver(() => ({ status: 410 }));
    const tenant = await newTenant();
    const agent = await createAgent(tenant, [{ type: 'webhook', config: { url: gone.url } }]);
    await connectNumber(tenant, agent.id);
    const first = await startCall(tenant, agent.id);
    const [delivery] = await waitFor(
      async () => {
        const items = await deliveries(tenant, first);
        return items[0]?.state === 'dead' ? items : undefined;
      },
      { what: 'the first delivery to die' },
    );
    expect(delivery).toMatchObject({ dead_reason: 'gone', attempts: [{ status_code: 410 }] });
    const { emailsTo } = await import('./fixtures.js');
    const told = await waitFor(
      () => emailsTo(tenant.owner.email).find((e) => e.subject.includes('Webhook endpoint disabled')),
      { what: 'the owner to be told' },
    );
    expect(told.text).toContain(gone.url);

    const second = await startCall(tenant, agent.id);
    const [skipped] = await waitFor(
      async () => {
        const items = await deliveries(tenant, second);
        return items[0]?.state === 'dead' ? items : undefined;
      },
      { what: 'the second delivery to die unsent' },
    );
    expect(skipped).toMatchObject({ dead_reason: 'endpoint_disabled', attempts: [] });
    await waitForQuiescence();
    expect(gone.requests).toHaveLength(1);
  });

  it('after a rotation, deliveries carry two v1 signatures for 24 hours: the new and the old secret both verify', async () => {
    const hook = await receiver();
    const tenant = await newTenant();
    const oldSecret = await webhookSecret(tenant);
    const rotated = await api('POST', `${ws(tenant)}/webhook-secret`, { token: tenant.owner.token });
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.secret as string;
    expect(newSecret).not.toBe(oldSecret);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(
      23.9 * 3600 * 1000,
    );

    const agent = await createAgent(tenant, [{ type: 'webhook', config: { url: hook.url } }]);
    await connectNumber(tenant, agent.id);
    await startCall(tenant, agent.id);
    const request = await waitFor(() => hook.requests[0], { what: 'the webhook' });
    const signatures = String(request.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    expect(signatures.every((s) => s.startsWith('v1,'))).toBe(true);
    expect(() => new Webhook(newSecret).verify(request.body, headersOf(request))).not.toThrow();
    expect(() => new Webhook(oldSecret).verify(request.body, headersOf(request))).not.toThrow();
  });
});
