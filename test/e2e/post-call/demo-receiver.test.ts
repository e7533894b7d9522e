import { isAllowedHost, parseAllowedHosts } from '../../../functions/platform/outbound-http/allow-list.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor } from '../../helpers/wait.js';
import { connectNumber, createAgent, newTenant, startCall, webhookSecret } from './fixtures.js';

/**
 * The local demo receiver that `npm start` runs: its URL is in the stack's env, it is allowed as a
 * webhook target, it verifies signatures with the workspace's secret, it lists what it got and shows a
 * call's verified payloads.
 */

interface Received {
  webhook_id: string | null;
  type: string | null;
  call_id: string | null;
  verified: boolean;
  error: string | null;
}

const receiverUrl = () => stackState().env.DEMO_WEBHOOK_RECEIVER_URL;
const received = async (): Promise<Received[]> =>
  ((await (await fetch(receiverUrl())).json()) as { received: Received[] }).received;

describe('the demo webhook receiver', () => {
  it('is in the stack env and allowed as a webhook target', () => {
    expect(receiverUrl()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhooks\/demo$/);
    expect(
      isAllowedHost(new URL(receiverUrl()), parseAllowedHosts(stackState().env.WEBHOOK_ALLOWED_HOSTS)),
    ).toBe(true);
  });

  it('receives and verifies the signed post-call webhook of a call', async () => {
    const tenant = await newTenant();
    const agent = await createAgent(tenant, [{ type: 'webhook', config: { url: receiverUrl() } }]);
    await connectNumber(tenant, agent.id);
    const callId = await startCall(tenant, agent.id);
    const entry = await waitFor(async () => (await received()).find((r) => r.call_id === callId), {
      what: 'the demo receiver to get the call',
    });
    expect(entry).toMatchObject({
      type: 'call.ended',
      verified: true,
      error: null,
      webhook_id: expect.stringMatching(/^msg_/),
    });
    // What it got, as it got it: GET /calls/{call_id} on the receiver.
    const shown = await fetch(new URL(`/calls/${callId}`, receiverUrl()));
    expect(shown.status).toBe(200);
    const { payloads } = (await shown.json()) as {
      payloads: { type: string; data: { call_id: string; transcript: unknown[] } }[];
    };
    expect(payloads).toHaveLength(1);
    expect(payloads[0]).toMatchObject({ type: 'call.ended', data: { call_id: callId } });
    expect(payloads[0]!.data.transcript.length).toBeGreaterThan(0);
  });

  it('answers 401 to a request whose signature does not verify', async () => {
    const tenant = await newTenant();
    await webhookSecret(tenant); // the workspace has a secret: the forged signature is checked against it
    const body = JSON.stringify({
      type: 'call.ended',
      timestamp: new Date().toISOString(),
      data: { call_id: 'call_forged', workspace_id: tenant.workspaceId },
    });
    const res = await fetch(receiverUrl(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_forged',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
      },
      body,
    });
    expect(res.status).toBe(401);
    expect((await received()).find((r) => r.call_id === 'call_forged')).toMatchObject({
      verified: false,
      error: 'No matching signature found',
    });
    // A payload that did not verify is not shown.
    expect((await fetch(new URL('/calls/call_forged', receiverUrl()))).status).toBe(404);
  });
});
