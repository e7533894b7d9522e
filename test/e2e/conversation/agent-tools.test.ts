import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { RelayClient } from '../../../lib/local/simulators/telephony/relay-client.js';
import { api, baseUrl, type Json } from '../../helpers/http.js';
import { readyToCall, waitForCall, ws, type Tenant } from '../calling/fixtures.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import {
  functionTool,
  startEndpoint,
  theSignedRequest,
  webhookSecret,
  type Endpoint,
} from '../agents-tools/fixtures.js';
import { startMcpServer } from '../agents-tools/mcp-server.js';
import { connectRelay, liveCall, openSession } from './fixtures.js';

/**
 * An agent's function tool in a phone call, through the relay against a real local endpoint: the
 * model (the simulator) calls the tool the caller names; the service says `speak_during`, posts the
 * signed request (static arguments merged, the header value opened, `test: false`) and the model
 * speaks the answer; a failing endpoint: `speak_on_failure`, the call goes on; the call detail's
 * `tool_calls` has the type, status, HTTP status and duration, the arguments without static ones.
 */

let endpoint: Endpoint;
beforeAll(async () => {
  endpoint = await startEndpoint();
});
afterAll(async () => {
  await endpoint.stop();
});

async function callWithTool(path: string, extra: Record<string, unknown>) {
  const { tenant, agent } = await readyToCall({
    prompt: 'You are Ava from Harbour Realty. You book inspections.',
    greeting: 'Hi, this is Ava.',
    tools: [functionTool(`${endpoint.base}${path}`, extra)],
  });
  const call = await liveCall(tenant, agent.id);
  const relay = await openSession(call);
  return { tenant, agent, call, relay };
}

/** The service's own metrics as GET /_local/metrics shows them (the cloud's CloudWatch gets the same). */
async function serviceMetrics(): Promise<Record<string, { count: number; p50?: number }>> {
  const res = await fetch(`${baseUrl()}/_local/metrics`);
  return ((await res.json()) as { service_metrics: Record<string, { count: number; p50?: number }> })
    .service_metrics;
}
const countOf = (metrics: Record<string, { count: number }>, name: string) => metrics[name]?.count ?? 0;

async function hangUp(relay: RelayClient, tenant: Tenant, callId: string): Promise<Json> {
  relay.close();
  return waitForCall(tenant, callId, (c) => c.status === 'completed' && c.latency.turns >= 1, 30_000);
}

test('the caller names a tool: speak_during, the signed request, the answer spoken, recorded with its status', async () => {
  const { tenant, agent, call, relay } = await callWithTool('/ok', {
    headers: { 'x-api-key': 'key-in-call-9876' },
    static_arguments: { office: 'north' },
    speak_during: 'Let me book that for you.',
  });
  const before = endpoint.received.length;
  const metricsBefore = await serviceMetrics();
  const turn = await relay.say('Can you book an inspection for Saturday?');
  expect(turn.reply).toBe("Let me book that for you. That's booked.");

  const requests = endpoint.received.slice(before).filter((r) => r.path === '/ok');
  expect(requests).toHaveLength(1);
  const [request] = requests;
  expect(request.headers['x-api-key']).toBe('key-in-call-9876');
  const body = new Webhook(await webhookSecret(tenant)).verify(
    request.body as string,
    request.headers as Record<string, string>,
  ) as Json;
  expect(body).toMatchObject({
    tool: 'book_inspection',
    test: false,
    call: { id: call.callId, channel: 'phone', agent_id: agent.id, direction: 'outbound' },
    arguments: { date: 'Can you book an inspection for Saturday?', office: 'north' },
  });

  const ended = await hangUp(relay, tenant, call.callId);
  // The turn's metrics: the tool's duration once (only agent tools record one: no other test's turn
  // can), and its latency parts (other calls the shared stack plays may add theirs).
  const metricsAfter = await serviceMetrics();
  expect(countOf(metricsAfter, 'ToolDuration') - countOf(metricsBefore, 'ToolDuration')).toBe(1);
  for (const name of ['TurnLatency', 'ModelFirstToken', 'ServicePart'])
    expect(countOf(metricsAfter, name)).toBeGreaterThan(countOf(metricsBefore, name));
  expect(metricsAfter.TurnLatency.p50).toEqual(expect.any(Number));
  expect(ended.tool_calls).toEqual([
    {
      name: 'book_inspection',
      arguments: { date: 'Can you book an inspection for Saturday?' },
      ok: true,
      at: expect.any(String),
      type: 'function',
      status: 'ok',
      http_status: 200,
      duration_ms: expect.any(Number),
      // Which agent called it (a call handed over has several).
      agent_id: agent.id,
    },
  ]);
}, 90_000);

test('an endpoint that fails: speak_on_failure is said (the model not asked again), the call goes on, an incident', async () => {
  const { tenant, call, relay } = await callWithTool('/fail', {
    speak_on_failure: 'I could not book that just now; someone will call you back.',
  });
  const failed = await relay.say('Please book an inspection.');
  expect(failed.reply).toBe('I could not book that just now; someone will call you back.');
  // The call goes on.
  const next = await relay.say('Hello?');
  expect(next.reply).not.toBe('');
  const ended = await hangUp(relay, tenant, call.callId);
  expect(ended.tool_calls).toEqual([
    expect.objectContaining({
      name: 'book_inspection',
      ok: false,
      type: 'function',
      status: 'error',
      http_status: 500,
    }),
  ]);
  expect(ended.conversation_incidents).toEqual(
    expect.arrayContaining([expect.objectContaining({ kind: 'tool_error' })]),
  );
}, 90_000);

test('an interruption while a tool runs: its request is aborted, its result never used, recorded as cancelled; the call goes on', async () => {
  const { tenant, call, relay } = await callWithTool('/slow', { speak_during: 'One moment while I check.' });
  const abandonedBefore = endpoint.abandoned;
  const start = relay.frames.length;
  relay.send({
    type: 'prompt',
    voicePrompt: 'Can you book an inspection for Saturday?',
    lang: 'en-AU',
    last: true,
  });
  // The tool's request went out (speak_during said first); the caller talks over it.
  await relay.until(
    (all) =>
      all.slice(start).some((f) => f.type === 'text' && f.token?.includes('One moment')) ? true : undefined,
    'speak_during',
  );
  await waitFor(() => endpoint.received.find((r) => r.path === '/slow' && r.body.includes(call.callId)), {
    what: "the tool's request",
  });
  relay.send({ type: 'interrupt', utteranceUntilInterrupt: 'One moment', durationUntilInterruptMs: 600 });
  // The service gave up the request long before its 5 s answer or its 8 s timeout.
  await waitFor(() => (endpoint.abandoned > abandonedBefore ? true : undefined), {
    what: 'the tool request aborted',
    timeoutMs: 4_000,
  });
  const next = await relay.say('Hello?');
  expect(next.reply).not.toBe('');
  expect(next.reply).not.toContain('late');
  const ended = await hangUp(relay, tenant, call.callId);
  expect(ended.tool_calls).toEqual([
    expect.objectContaining({ name: 'book_inspection', ok: false, type: 'function', status: 'cancelled' }),
  ]);
  expect(ended.tool_calls[0].http_status).toBeUndefined();
  // Nothing of the late answer reached the model, and a cancelled call is no tool fault.
  expect(JSON.stringify(ended.transcript)).not.toContain('late');
  expect(ended.conversation_incidents ?? []).not.toEqual(
    expect.arrayContaining([expect.objectContaining({ kind: 'tool_error' })]),
  );
  expect(endpoint.received.filter((r) => r.path === '/slow' && r.body.includes(call.callId))).toHaveLength(1);
}, 90_000);

test('the test chat runs the tool too: marked test and channel web, its record shown in the chat as it happens (a tool frame)', async () => {
  const { tenant, agent } = await readyToCall({
    prompt: 'You are Ava from Harbour Realty. You book inspections.',
    greeting: 'Hi, this is Ava.',
    tools: [functionTool(`${endpoint.base}/ok`, { static_arguments: { office: 'north' } })],
  });
  const bought = await api('POST', `${ws(tenant)}/agents/${agent.id}/test-chat`, {
    token: tenant.owner.token,
    body: {},
  });
  expect(bought.status).toBe(201);
  const query = new URLSearchParams({ channel: 'web', ticket: bought.body.ticket as string });
  const chat = await connectRelay({ url: `${bought.body.relay_url}?${query.toString()}`, signature: false });
  if (!(chat instanceof RelayClient)) throw new Error(`refused: ${chat.refused}`);
  const start = chat.frames.length;
  chat.send({ type: 'start' });
  await chat.reply(start);
  const callId = chat.frames.find((f) => f.type === 'session')!.call_id as string;

  const turn = await chat.say('Can you book an inspection for Saturday?');
  expect(turn.reply).toBe("That's booked.");
  // The chat shows the tool's record as it happens (the phone has no such frame).
  expect(turn.frames.filter((f) => f.type === 'tool')).toEqual([
    expect.objectContaining({
      name: 'book_inspection',
      toolType: 'function',
      status: 'ok',
      httpStatus: 200,
    }),
  ]);
  const body = await theSignedRequest(endpoint, tenant, '/ok', callId);
  expect(body).toMatchObject({
    tool: 'book_inspection',
    test: true,
    call: { id: callId, channel: 'web', agent_id: agent.id },
    arguments: { date: 'Can you book an inspection for Saturday?', office: 'north' },
  });
  chat.close();
  const ended = await waitForCall(tenant, callId, (c) => c.status === 'completed', 30_000);
  expect(ended.tool_calls).toEqual([expect.objectContaining({ name: 'book_inspection', status: 'ok' })]);
}, 90_000);

test("an MCP server's tool in a call: listed once for the call, called by the model, its text spoken; a server that is down leaves its tools out and the call goes on", async () => {
  const mcp = await startMcpServer();
  try {
    const { tenant, agent } = await readyToCall({
      prompt: 'You are Ava from Harbour Realty. You look up contacts.',
      greeting: 'Hi, this is Ava.',
      tools: [
        { type: 'mcp', name: 'crm', url: mcp.url, allowed_tools: ['lookup_contact'], timeout_ms: 5000 },
        { type: 'mcp', name: 'down', url: 'http://127.0.0.1:9/mcp', timeout_ms: 1000 },
      ],
    });
    const call = await liveCall(tenant, agent.id);
    const relay = await openSession(call);
    const first = await relay.say('Can you lookup contact details for me?');
    expect(first.reply).toBe('Contact for Can you lookup contact details for me?: Sam Lee');
    const second = await relay.say('And lookup contact again please.');
    expect(second.reply).toBe('Contact for And lookup contact again please.: Sam Lee');
    // Listed once for the whole call (the list is kept beside the conversation), called twice.
    expect(mcp.seen.filter((r) => r.rpc === 'tools/list')).toHaveLength(1);
    expect(mcp.seen.filter((r) => r.rpc === 'tools/call')).toHaveLength(2);
    const ended = await hangUp(relay, tenant, call.callId);
    expect(ended.tool_calls).toEqual([
      expect.objectContaining({ name: 'crm__lookup_contact', ok: true, type: 'mcp', status: 'ok' }),
      expect.objectContaining({ name: 'crm__lookup_contact', ok: true, type: 'mcp', status: 'ok' }),
    ]);
    // The call's session with the server ended with the call (after the call was saved), once.
    await waitFor(() => mcp.seen.some((r) => r.method === 'DELETE'), {
      what: "the call's MCP session ended",
    });
    await waitForQuiescence();
    expect(mcp.seen.filter((r) => r.method === 'DELETE')).toHaveLength(1);
    const failures = ended.conversation_incidents.filter((i: Json) => i.kind === 'mcp_server_failed');
    expect(failures).toHaveLength(1);
    expect(failures[0].detail).toMatch(/^down: /);
  } finally {
    await mcp.stop();
  }
}, 90_000);

test("a customer's MCP server that hangs when its session is ended at hang-up: the call is saved first (transcript, tool calls) and completes; the session's end waits 2.5 s at most", async () => {
  const mcp = await startMcpServer(undefined, { hangOnDelete: true });
  try {
    const { tenant, agent } = await readyToCall({
      prompt: 'You are Ava from Harbour Realty. You look up contacts.',
      greeting: 'Hi, this is Ava.',
      tools: [
        { type: 'mcp', name: 'crm', url: mcp.url, allowed_tools: ['lookup_contact'], timeout_ms: 5000 },
      ],
    });
    const call = await liveCall(tenant, agent.id);
    const relay = await openSession(call);
    const first = await relay.say('Can you lookup contact details for me?');
    expect(first.reply).toBe('Contact for Can you lookup contact details for me?: Sam Lee');
    const ended = await hangUp(relay, tenant, call.callId);
    expect(ended.status).toBe('completed');
    expect(ended.transcript.map((t: Json) => t.text)).toContain('Can you lookup contact details for me?');
    expect(ended.tool_calls).toEqual([
      expect.objectContaining({ name: 'crm__lookup_contact', status: 'ok' }),
    ]);
    await waitFor(() => mcp.seen.some((r) => r.method === 'DELETE'), {
      what: 'the session end asked of the server',
    });
    // The disconnect's invocation returned within its budget although the server never answered.
    await waitForQuiescence();
  } finally {
    await mcp.stop();
  }
}, 90_000);
