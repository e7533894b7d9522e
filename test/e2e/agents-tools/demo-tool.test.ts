import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startDemoReceiver, type DemoReceiver } from '../../../lib/local/demo-receiver.js';
import { api } from '../../helpers/http.js';
import { agentPath, createAgent, newTenant } from './fixtures.js';

/**
 * The local demo receiver's `book_inspection` tool (lib/local/demo-receiver.ts), called through the
 * test route: it verifies the signature with the workspace's secret (read from the local table, as
 * a customer would paste it) and confirms the booking.
 */

let receiver: DemoReceiver;
beforeAll(async () => {
  receiver = await startDemoReceiver({});
});
afterAll(async () => {
  await receiver.stop();
});

describe('demo book_inspection tool', () => {
  it('confirms a signed booking', async () => {
    const tenant = await newTenant();
    const agent = await createAgent(tenant, [
      {
        type: 'function',
        name: 'book_inspection',
        description: 'Book a property inspection for the caller',
        parameters: {
          type: 'object',
          properties: {
            date: { type: 'string', description: 'YYYY-MM-DD' },
            time: { type: 'string', description: 'HH:MM' },
            address: { type: 'string' },
          },
          required: ['date', 'time'],
        },
        url: receiver.toolUrl,
        speak_during: 'One moment while I book that.',
      },
    ]);
    expect(receiver.toolUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/tools\/book_inspection$/);
    const res = await api('POST', `${agentPath(tenant, agent.id)}/tools/book_inspection/test`, {
      token: tenant.owner.token,
      body: { arguments: { date: '2025-07-01', time: '10:00', address: '12 Harbour St' } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ok',
      http_status: 200,
      duration_ms: expect.any(Number),
      result: {
        confirmed: true,
        inspection: { date: '2025-07-01', time: '10:00', address: '12 Harbour St' },
        reference: expect.stringMatching(/^INS-\d{4}$/),
      },
    });
  });

  it('refuses a request that is not signed', async () => {
    const res = await fetch(receiver.toolUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'book_inspection', call: { workspace_id: 'ws_x' }, arguments: {} }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'signature not valid' });
  });
});
