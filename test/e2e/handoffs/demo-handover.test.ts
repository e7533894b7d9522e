import { SALES_HANDOFF, SALES_PROMPT } from '../../../lib/tools/cli/seed.js';
import { api, type Json } from '../../helpers/http.js';
import { waitForQuiescence } from '../../helpers/wait.js';
import { createAgent, newTenant, numberFor, TEST_NUMBERS, waitForCall, ws } from '../calling/fixtures.js';
import { liveCall, openSession, providerEndsSession } from '../conversation/fixtures.js';

/**
 * The demo's hand-over, end to end on the local stack, the test being the caller's side of the relay
 * (as `call talk` is): a receptionist set up as the seed sets up the demo (its target Sales, described
 * as the seed describes it); the caller says "I'd like to speak to sales about a listing": the model
 * simulator hands over, the conversation engine switches, Sales speaks first with the caller's line
 * in hand, and the call detail, the lines' agents, analytics and the call log (its `handoff_count`,
 * `active_agent_id` and `handed_off` filter) say so.
 */

const LINE = "I'd like to speak to sales about a listing";

test("the caller asks for sales: handed to Sales, who answers with the caller's line in hand", async () => {
  const tenant = await newTenant({ paid: true });
  const sales = await createAgent(tenant, { name: 'Sales', prompt: SALES_PROMPT, greeting: '' });
  const reception = await createAgent(tenant, {
    name: 'Ava (demo receptionist)',
    prompt: 'You are Ava, the receptionist of Harbour Realty. Open homes are on Saturdays from 10am.',
    greeting: 'Hi, this is Ava from Harbour Realty.',
    handoffs: [{ agent_id: sales.id, description: SALES_HANDOFF, context: 'full' }],
  });
  await numberFor(tenant, reception.id);
  const call = await liveCall(tenant, reception.id);
  const relay = await openSession(call);

  // The receptionist's short line, then Sales' first reply, unasked.
  const start = relay.frames.length;
  const handing = await relay.say(LINE);
  expect(handing.reply).toBe('Let me put you through to Sales.');
  const after = handing.frames.findIndex((f) => f.type === 'text' && f.last) + start + 1;
  const taking = await relay.reply(after);
  expect(taking.reply).toBe(`Hi, this is Sales. You said: "${LINE}" — I can help with that.`);
  const bye = await relay.say("Thanks, that's all. Goodbye.");
  expect(bye.reply).toBe('Thank you for calling. Goodbye!');
  await relay.until((frames) => frames.find((f) => f.type === 'end'), 'the end frame');
  relay.close();
  await providerEndsSession(call.providerCallId);

  const ended = await waitForCall(
    tenant,
    call.callId,
    (c) => c.status === 'completed' && c.handoffs.length > 0 && c.transcript.length >= 5,
    30_000,
  );
  expect(ended.agent_id).toBe(reception.id);
  expect(ended.active_agent_id).toBe(sales.id);
  expect(ended.handoffs).toEqual([
    {
      from_agent_id: reception.id,
      to_agent_id: sales.id,
      to_agent_version: 1,
      at: expect.any(String),
      reason: 'caller asked for Sales',
      summary: LINE,
    },
  ]);
  expect((ended.transcript as Json[]).map((t) => [t.role, t.agent_id ?? null, t.text])).toEqual([
    ['agent', reception.id, 'Hi, this is Ava from Harbour Realty.'],
    ['user', null, LINE],
    ['agent', reception.id, 'Let me put you through to Sales.'],
    ['agent', sales.id, `Hi, this is Sales. You said: "${LINE}" — I can help with that.`],
    ['user', null, "Thanks, that's all. Goodbye."],
    ['agent', sales.id, 'Thank you for calling. Goodbye!'],
  ]);
  expect((ended.tool_calls as Json[]).map((c) => [c.name, c.agent_id])).toEqual([
    ['handoff_to_agent', reception.id],
    ['end_call', sales.id],
  ]);

  await waitForQuiescence();
  const analytics = await api('GET', `${ws(tenant)}/analytics/calls?group_by=agent`, {
    token: tenant.owner.token,
  });
  expect((analytics.body.items as Json[]).map((i) => [i.key, i.calls, i.handoffs])).toEqual([
    [reception.id, 1, 1],
  ]);

  // The call log: beside a call of Sales' own (a conversation, no handoff) and a busy one (none at all).
  await numberFor(tenant, sales.id);
  const startCall = async (to: string) => {
    const res = await api('POST', `${ws(tenant)}/agents/${sales.id}/start-call`, {
      token: tenant.owner.token,
      body: { to_phone: to },
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const direct = await startCall(TEST_NUMBERS.answered);
  const busy = await startCall(TEST_NUMBERS.busy);
  await waitForCall(tenant, direct, (c) => c.status === 'completed' && c.latency.turns > 0, 30_000);
  await waitForCall(tenant, busy, (c) => c.status === 'failed', 30_000);
  const list = async (query: string) => {
    const res = await api('GET', `${ws(tenant)}/calls?${query}`, { token: tenant.owner.token });
    expect(res.status).toBe(200);
    return (res.body.items as Json[]).map((c) => [c.id, c.handoff_count, c.active_agent_id]);
  };
  expect(await list('')).toEqual([
    [busy, 0, sales.id],
    [direct, 0, sales.id],
    [call.callId, 1, sales.id],
  ]);
  expect(await list('handed_off=true')).toEqual([[call.callId, 1, sales.id]]);
  expect(await list('handed_off=false')).toEqual([
    [busy, 0, sales.id],
    [direct, 0, sales.id],
  ]);
  // On the agent's key too (the call stays its first agent's), and with the other filters.
  expect(await list(`handed_off=true&agent_id=${reception.id}`)).toEqual([[call.callId, 1, sales.id]]);
  expect(await list(`handed_off=false&agent_id=${reception.id}`)).toEqual([]);
  expect(await list(`handed_off=true&agent_id=${sales.id}`)).toEqual([]);
  expect(await list('handed_off=true&status=failed')).toEqual([]);
  const bad = await api('GET', `${ws(tenant)}/calls?handed_off=yes`, { token: tenant.owner.token });
  expect(bad.status).toBe(422);
}, 120_000);
