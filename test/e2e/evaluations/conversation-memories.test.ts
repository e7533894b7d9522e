import { receiveCall } from '../../helpers/cli.js';
import { api, type Json } from '../../helpers/http.js';
import { waitForQuiescence } from '../../helpers/wait.js';
import { readyToCall, TEST_NUMBERS, waitForCall, ws, type Tenant } from '../calling/fixtures.js';
import { modelRequests, textOf } from '../conversation/fixtures.js';

/**
 * Conversation memories (API family "Analytics, evaluations, memories"): with the agent setting on, a
 * call to someone the workspace has called before gets the summary of that call in its runtime context
 * (the simulator's agent recalls it), and is billed +5 credits per call minute on top of call
 * handling, as its own ledger entry; without earlier calls, or with the setting off, nothing extra.
 * Inbound calls too (`npm run cli -- call receive`): the caller's earlier calls in their context and
 * billed the same, and an inbound call's summary remembered for the next call to that person.
 */
let tenant: Tenant;
let agent: Json;
let number: Json;

/** Someone dials the agent's number, as `npm run cli -- call receive` has the simulator do. */
async function receiveAndWait(from: string): Promise<Json> {
  const received = { call_id: await receiveCall(from, number.phone_number as string) };
  const call = await waitForCall(
    tenant,
    received.call_id,
    (c) => c.status === 'completed' && c.sentiment !== null,
    90_000,
  );
  await waitForQuiescence({ timeoutMs: 60_000 });
  return call;
}

const recalls = (call: Json): boolean => call.transcript.some((t: Json) => /Last time:/.test(t.text));

async function callAndWait(to: string): Promise<Json> {
  const res = await api('POST', `${ws(tenant)}/agents/${agent.id}/start-call`, {
    token: tenant.owner.token,
    body: { to_phone: to },
  });
  expect(res.status).toBe(201);
  const call = await waitForCall(
    tenant,
    res.body.id,
    (c) => c.status === 'completed' && c.sentiment !== null,
    90_000,
  );
  await waitForQuiescence({ timeoutMs: 60_000 });
  return call;
}

const ledgerFor = async (callId: string): Promise<Json[]> =>
  (
    await api('GET', `/api/v1/organisations/${tenant.organisationId}/billing/ledger?limit=100`, {
      token: tenant.owner.token,
    })
  ).body.items.filter((e: Json) => e.source.startsWith(callId));

beforeAll(async () => {
  ({ tenant, agent, number } = await readyToCall({ settings: { conversation_memories: true } }));
}, 60_000);

describe('conversation memories', () => {
  it('the agent setting defaults to off and can be turned on', async () => {
    expect(agent.settings.conversation_memories).toBe(true);
    const other = await api('POST', `${ws(tenant)}/agents`, {
      token: tenant.owner.token,
      body: { name: 'Plain', prompt: 'You help.' },
    });
    expect(other.body.settings.conversation_memories).toBe(false);
    const bad = await api('PATCH', `${ws(tenant)}/agents/${other.body.id}`, {
      token: tenant.owner.token,
      body: { settings: { conversation_memories: 'yes' } },
    });
    expect(bad.status).toBe(422);
  });

  it('a second call to the same person gets the first call’s summary and is billed +5 credits a minute', async () => {
    const first = await callAndWait(TEST_NUMBERS.answered);
    expect(first.transcript.some((t: Json) => /Last time:/.test(t.text))).toBe(false);
    expect((await ledgerFor(first.id)).map((e: Json) => e.source)).toEqual([`${first.id}:call`]);

    const second = await callAndWait(TEST_NUMBERS.answered);
    const recall = second.transcript.find((t: Json) => /Last time:/.test(t.text));
    expect(recall).toBeDefined();
    // What the model was sent (not only what the simulator echoes): the first call's summary, under
    // the section the service writes into the system prompt.
    const systems = (await modelRequests()).map((request) => textOf(request.messages[0]?.content));
    const withMemories = systems.filter((system) => system.includes('## Earlier calls with this caller'));
    expect(withMemories.length).toBeGreaterThan(0);
    // The memory is the first call's summary: who was called, how it ended, what the caller said.
    const entry = `- Outbound call to ${TEST_NUMBERS.answered} with ${agent.name}, completed after`;
    expect(withMemories.some((system) => system.includes(entry))).toBe(true);
    expect(recall.role).toBe('agent');
    const entries = await ledgerFor(second.id);
    expect(entries.map((e: Json) => e.source).sort()).toEqual([`${second.id}:call`, `${second.id}:memories`]);
    const memories = entries.find((e: Json) => e.source.endsWith(':memories'));
    expect(memories).toMatchObject({
      kind: 'charge',
      usage_kind: 'memories',
      quantity: second.duration_seconds,
    });
    expect(memories.credits).toBeCloseTo(-(5 * second.duration_seconds) / 60, 2);
    // The call's credits are call handling plus memories.
    expect(second.credits).toBeCloseTo(((20 + 5) * second.duration_seconds) / 60, 2);
  });

  it('an inbound call from someone called before gets their earlier calls and is billed +5 credits a minute', async () => {
    const inbound = await receiveAndWait(TEST_NUMBERS.answered);
    expect(inbound).toMatchObject({ direction: 'inbound', from_phone: TEST_NUMBERS.answered });
    const recall = inbound.transcript.find((t: Json) => /Last time:/.test(t.text));
    expect(recall).toMatchObject({ role: 'agent' });
    const entries = await ledgerFor(inbound.id);
    expect(entries.map((e: Json) => e.source).sort()).toEqual([
      `${inbound.id}:call`,
      `${inbound.id}:memories`,
    ]);
    expect(entries.find((e: Json) => e.source.endsWith(':memories'))).toMatchObject({
      usage_kind: 'memories',
      quantity: inbound.duration_seconds,
    });
  }, 180_000);

  it('a first inbound call is not billed for memories; its summary is recalled on the next call to that person', async () => {
    const caller = '+61491570177';
    const inbound = await receiveAndWait(caller);
    expect(recalls(inbound)).toBe(false);
    expect((await ledgerFor(inbound.id)).map((e: Json) => e.source)).toEqual([`${inbound.id}:call`]);

    const next = await callAndWait(caller);
    expect(recalls(next)).toBe(true);
    expect((await ledgerFor(next.id)).map((e: Json) => e.source).sort()).toEqual([
      `${next.id}:call`,
      `${next.id}:memories`,
    ]);
  }, 180_000);

  it('with the setting off, an earlier call is not recalled and nothing extra is billed', async () => {
    await api('PATCH', `${ws(tenant)}/agents/${agent.id}`, {
      token: tenant.owner.token,
      body: { settings: { conversation_memories: false } },
    });
    const third = await callAndWait(TEST_NUMBERS.answered);
    expect(third.transcript.some((t: Json) => /Last time:/.test(t.text))).toBe(false);
    expect((await ledgerFor(third.id)).map((e: Json) => e.source)).toEqual([`${third.id}:call`]);
  });

  it('the pricing model shows the memories rule', async () => {
    const res = await api('GET', '/api/v1/payment/pricing-model');
    expect(JSON.stringify(res.body)).toContain('Conversation memories');
  });
});
