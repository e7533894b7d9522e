/**
 * The local stack's quiescence signal (GET /_local/quiescence, lib/local/quiescence.ts) that tests wait
 * for instead of sleeping: a queued message, a consumer at work and a call the telephony simulator is
 * still playing each keep the stack busy; once they are done it is quiescent. The endpoint is the
 * gateway's own, outside the API, and no catalog route (so no cloud route) lives under /_local/.
 */
import { catalog } from '../../lib/cloud/catalog.js';
import { sendMessage } from '../../functions/platform/queue.js';
import { queueKeys } from '../../functions/platform/resources.js';
import { api } from '../helpers/http.js';
import {
  readQuiescence,
  telephonyActivity,
  waitFor,
  waitForConsumed,
  waitForQuiescence,
} from '../helpers/wait.js';
import { readyToCall, TEST_NUMBERS, ws } from '../e2e/calling/fixtures.js';

describe('GET /_local/quiescence', () => {
  it('reports every queue, poller, schedule, the gateway and the telephony simulator', async () => {
    const report = await waitForQuiescence();
    expect(report).toMatchObject({ quiescent: true, busy: [], gateway: { in_flight: 0 } });
    expect(Object.keys(report.queues).sort()).toEqual([...queueKeys].sort());
    for (const queue of Object.values(report.queues))
      expect(queue).toEqual({
        visible: 0,
        in_flight: 0,
        delayed: 0,
        dead_letters: expect.any(Number),
      });
    expect(Object.keys(report.pollers).sort()).toEqual(
      catalog
        .filter((fn) => fn.queue)
        .map((fn) => fn.id)
        .sort(),
    );
    expect(telephonyActivity(report)).toMatchObject({
      idle: true,
      calls_playing: 0,
      callbacks_in_flight: 0,
    });
  });

  it('is local only: GET only, nothing else under /_local/, and no catalog route there', async () => {
    expect((await api('POST', '/_local/quiescence')).status).toBe(405);
    expect((await api('GET', '/_local/nothing')).status).toBe(404);
    const paths = catalog.flatMap((fn) => [
      ...(fn.http ?? []).map((route) => route.path),
      ...(fn.functionUrl ? [fn.functionUrl.path] : []),
    ]);
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.filter((path) => path.startsWith('/_local'))).toEqual([]);
  });

  it('a delayed message keeps the stack busy until its consumer has received and handled it', async () => {
    const before = await waitForQuiescence();
    // An attempt for a delivery that does not exist: the consumer reads it and does nothing.
    await sendMessage(
      'webhookDelivery',
      {
        type: 'webhook.attempt',
        workspace_id: 'ws_01ARZ3NDEKTSV4RRFFQ69G5FAV',
        delivery_id: 'whd_01ARZ3NDEKTSV4RRFFQ69G5FAV',
        attempt: 1,
        due_at: new Date().toISOString(),
      },
      { delaySeconds: 1 },
    );
    const busy = await readQuiescence();
    expect(busy.quiescent).toBe(false);
    expect(busy.queues.webhookDelivery.delayed + busy.queues.webhookDelivery.in_flight).toBe(1);
    expect(busy.busy.join('\n')).toContain('queue webhookDelivery');

    const after = await waitForConsumed(before, { DeliverWebhook: 1 });
    expect(after.quiescent).toBe(true);
    expect(after.queues.webhookDelivery).toMatchObject({ visible: 0, in_flight: 0, delayed: 0 });
    expect(after.queues.webhookDelivery.dead_letters).toBe(before.queues.webhookDelivery.dead_letters);
    expect(after.pollers.DeliverWebhook.deleted).toBeGreaterThan(before.pollers.DeliverWebhook.deleted);
  });

  it('a call the simulator is playing keeps the stack busy; once quiescent the call has ended and been reported', async () => {
    const { tenant, agent } = await readyToCall();
    await waitForQuiescence();
    const res = await api('POST', `${ws(tenant)}/agents/${agent.id}/start-call`, {
      token: tenant.owner.token,
      body: { to_phone: TEST_NUMBERS.answered },
    });
    expect(res.status).toBe(201);
    const playing = await waitFor(
      async () => {
        const report = await readQuiescence();
        return telephonyActivity(report).calls_playing > 0 ? report : undefined;
      },
      { what: 'the simulator to play the call' },
    );
    expect(playing.quiescent).toBe(false);
    expect(playing.busy).toContain('telephony-simulator: busy');

    await waitForQuiescence();
    const call = await api('GET', `${ws(tenant)}/calls/${res.body.id}`, { token: tenant.owner.token });
    // Every callback was handled (recording included) and the post-call pipeline has run (its analysis).
    expect(call.body).toMatchObject({ status: 'completed', recording_available: true });
    expect(call.body.sentiment).toEqual(expect.objectContaining({ label: expect.any(String) }));
  });
});
