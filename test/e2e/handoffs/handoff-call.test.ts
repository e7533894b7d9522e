import { api, type Json } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { createAgent, readyToCall, waitForCall, ws, type Tenant } from '../calling/fixtures.js';
import { RelayClient } from '../../../lib/local/simulators/telephony/relay-client.js';
import { liveCall, modelRequests, openSession, textOf } from '../conversation/fixtures.js';

/**
 * One call, several agents, through the relay (the test is ConversationRelay: the `+61491570116`
 * scenario leaves the session to it): the receptionist hands the caller to Sales in the same session,
 * Sales speaks first with the caller's line in hand (a `language` frame first when its language
 * differs), and the call records who spoke, the handoff, and stays the receptionist's.
 */

const SALES_DESCRIPTION = 'the caller wants to buy, asks about a listing or its price, or asks for sales';
const LINE = "I'd like to speak to sales about a listing";

async function receptionAndSales(options: { context?: string; salesLanguage?: string } = {}) {
  const { tenant, agent: reception } = await readyToCall({
    name: 'Reception',
    prompt: 'You are the receptionist of Harbour Realty.',
    greeting: 'Hi, Harbour Realty.',
  });
  const sales = await createAgent(tenant, {
    name: 'Sales',
    prompt: 'You are Sales at Harbour Realty. You know the listings.',
    greeting: 'Hi, Sales here.',
    ...(options.salesLanguage ? { language: options.salesLanguage } : {}),
  });
  const set = await api('PATCH', `${ws(tenant)}/agents/${reception.id}`, {
    token: tenant.owner.token,
    body: {
      handoffs: [{ agent_id: sales.id, description: SALES_DESCRIPTION, context: options.context ?? 'full' }],
    },
  });
  if (set.status !== 200) throw new Error(`handoffs: ${set.status} ${set.text}`);
  return { tenant, reception, sales };
}

/** Every text frame from `from` up to the `count`th `last`, and the other frames among them. */
async function replies(relay: RelayClient, from: number, count: number) {
  await waitFor(
    () =>
      relay.frames.slice(from).filter((f) => f.type === 'text' && f.last).length >= count ? true : undefined,
    { what: `${count} replies`, timeoutMs: 30_000 },
  );
  return relay.frames.slice(from);
}

const said = (frames: Json[]): string[] => {
  const out: string[] = [];
  let current = '';
  for (const frame of frames) {
    if (frame.type !== 'text') continue;
    current += (frame.token as string) ?? '';
    if (frame.last) {
      out.push(current.trim());
      current = '';
    }
  }
  return out;
};

/** The last model request a handoff's target made (its prompt carries the note). */
const targetRequestOf = (requests: Awaited<ReturnType<typeof modelRequests>>) =>
  requests.findLast((r) =>
    r.messages.some(
      (m) => m.role === 'system' && textOf(m.content).includes('## You are taking over this call'),
    ),
  );

async function hangUp(relay: RelayClient, tenant: Tenant, callId: string): Promise<Json> {
  relay.close();
  return waitForCall(tenant, callId, (c) => c.status === 'completed' && c.latency.turns >= 1, 30_000);
}

test("full context: the receptionist hands over in the same session, Sales speaks first (a language frame first) with the caller's line in hand, the call records the handoff and stays the receptionist's", async () => {
  const { tenant, reception, sales } = await receptionAndSales({ salesLanguage: 'es-ES' });
  const call = await liveCall(tenant, reception.id as string);
  const relay = await openSession(call);
  const from = relay.frames.length;
  relay.send({ type: 'prompt', voicePrompt: LINE, lang: 'en-AU', last: true });
  const frames = (await replies(relay, from, 2)) as Json[];
  const [handing, target] = said(frames);
  expect(handing).toBe('Let me put you through to Sales.');
  expect(target).toContain('Sales');
  expect(target).toContain(LINE);
  // The language frame comes between the two replies, before any of the target's words.
  const firstLast = frames.findIndex((f) => f.type === 'text' && f.last);
  const language = frames.findIndex((f) => f.type === 'language');
  expect(language).toBeGreaterThan(firstLast);
  expect(frames[language]).toEqual({
    type: 'language',
    ttsLanguage: 'es-ES',
    transcriptionLanguage: 'es-ES',
  });
  expect(frames.slice(firstLast + 1, language).some((f) => f.type === 'text')).toBe(false);

  // What the target's model was sent: its own prompt, the note, the caller's line, no tool traffic.
  const requests = await modelRequests();
  const targetRequest = targetRequestOf(requests);
  expect(targetRequest).toBeDefined();
  const system = textOf(targetRequest!.messages.find((m) => m.role === 'system')!.content);
  expect(system).toContain('You are Sales at Harbour Realty.');
  expect(system).toContain('Reception handed the caller to you.');
  expect(targetRequest!.messages.some((m) => m.role === 'tool')).toBe(false);
  expect(textOf(targetRequest!.messages.at(-1)!.content)).toBe(LINE);
  // The target is not offered the agent it was just handed from (it has no targets of its own here).
  expect(targetRequest!.tools?.some((t) => t.function.name === 'handoff_to_agent') ?? false).toBe(false);

  // The conversation goes on with Sales.
  const next = await relay.say('Is it still for sale?');
  expect(next.reply).not.toBe('');
  const ended = await hangUp(relay, tenant, call.callId);
  expect(ended.agent_id).toBe(reception.id);
  expect(ended.active_agent_id).toBe(sales.id);
  expect(ended.handoffs).toEqual([
    {
      from_agent_id: reception.id,
      to_agent_id: sales.id,
      to_agent_version: 1,
      at: expect.any(String),
      reason: expect.any(String),
      summary: expect.any(String),
    },
  ]);
  const agentLines = (ended.transcript as Json[]).filter((t) => t.role === 'agent');
  expect(agentLines.map((t) => [t.agent_id, t.text])).toEqual([
    [reception.id, 'Hi, Harbour Realty.'],
    [reception.id, handing],
    [sales.id, target],
    [sales.id, next.reply],
  ]);
  expect(ended.tool_calls).toEqual([
    expect.objectContaining({ name: 'handoff_to_agent', ok: true, agent_id: reception.id }),
  ]);
  // Billed once, as the receptionist's call.
  await waitForQuiescence();
  const detail = await waitForCall(tenant, call.callId, (c) => c.credits !== null, 30_000);
  expect(detail.credits).toBeGreaterThan(0);
}, 120_000);

test.each(['summary', 'none'])(
  "%s context: the target gets the caller's last line only (and the note as its setting says)",
  async (context) => {
    const { tenant, reception } = await receptionAndSales({ context });
    const call = await liveCall(tenant, reception.id as string);
    const relay = await openSession(call);
    await relay.say('Hello, I have a question about a home.');
    const from = relay.frames.length;
    relay.send({ type: 'prompt', voicePrompt: LINE, lang: 'en-AU', last: true });
    await replies(relay, from, 2);
    const requests = await modelRequests();
    const targetRequest = targetRequestOf(requests)!;
    const turns = targetRequest.messages.filter((m) => m.role !== 'system');
    expect(turns.map((m) => textOf(m.content))).toEqual([LINE]);
    // The note names who handed over and why; only `summary` passes the summary on.
    const system = textOf(targetRequest.messages.find((m) => m.role === 'system')!.content);
    expect(system).toContain('Reception handed the caller to you.');
    expect(system.includes('Summary:')).toBe(context === 'summary');
    const ended = await hangUp(relay, tenant, call.callId);
    expect((ended.handoffs as Json[]).length).toBe(1);
  },
  120_000,
);

test('a target deleted since the call began: the tool answers {error}, the receptionist goes on, nothing is handed over', async () => {
  const { tenant, reception, sales } = await receptionAndSales();
  const call = await liveCall(tenant, reception.id as string);
  const relay = await openSession(call);
  const removed = await api('DELETE', `${ws(tenant)}/agents/${sales.id}`, { token: tenant.owner.token });
  expect(removed.status).toBe(204);
  const turn = await relay.say(LINE);
  expect(turn.reply).not.toBe('');
  const ended = await hangUp(relay, tenant, call.callId);
  expect(ended.active_agent_id).toBe(reception.id);
  expect(ended.handoffs).toEqual([]);
  expect(ended.tool_calls).toEqual([
    expect.objectContaining({ name: 'handoff_to_agent', ok: false, agent_id: reception.id }),
  ]);
}, 120_000);

test('a target with targets of its own is offered them on its first reply, on every call (the named targets kept per version in the container)', async () => {
  const { tenant, reception, sales } = await receptionAndSales();
  const support = await createAgent(tenant, {
    name: 'Support',
    prompt: 'You are Support at Harbour Realty.',
    greeting: 'Hi, Support here.',
  });
  const set = await api('PATCH', `${ws(tenant)}/agents/${sales.id}`, {
    token: tenant.owner.token,
    body: {
      handoffs: [
        { agent_id: support.id, description: 'the caller has a problem with a tenancy', context: 'full' },
        { agent_id: reception.id, description: 'the caller wants the front desk', context: 'full' },
      ],
    },
  });
  expect(set.status).toBe(200);
  for (const round of [1, 2]) {
    const call = await liveCall(tenant, reception.id as string);
    const relay = await openSession(call);
    const from = relay.frames.length;
    relay.send({ type: 'prompt', voicePrompt: LINE, lang: 'en-AU', last: true });
    await replies(relay, from, 2);
    const requests = await modelRequests();
    const targetRequest = targetRequestOf(requests)!;
    const offered = JSON.stringify(
      targetRequest.tools?.find((t) => t.function.name === 'handoff_to_agent') ?? null,
    );
    // Support, not the receptionist it was just handed from.
    expect([round, offered.includes(String(support.id))]).toEqual([round, true]);
    expect([round, offered.includes(String(reception.id))]).toEqual([round, false]);
    const ended = await hangUp(relay, tenant, call.callId);
    expect(ended.active_agent_id).toBe(sales.id);
  }
}, 180_000);
