import { jwtVerify, decodeProtectedHeader } from 'jose';
import { sweepCalls } from '../../../functions/calling/sweeper.js';
import { createWebCall } from '../../../functions/calling/web-call.js';
import { resetClock, setClock } from '../../../functions/platform/clock.js';
import { signTwilioRequest, SIGNATURE_HEADER } from '../../../functions/providers/telephony/twilio-format.js';
import { RelayClient } from '../../../lib/local/simulators/telephony/relay-client.js';
import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import {
  addMember,
  apiKey,
  createAgent,
  newTenant,
  waitForCall,
  workspaceRecord,
  ws,
  type Tenant,
} from '../calling/fixtures.js';
import { connectRelay, setupFrame, storedCall } from './fixtures.js';

/**
 * Browser voice calls (`POST …/agents/{agent_id}/web-call`): the call is created at once, counted in
 * the workspace's concurrency, and connected either by the browser itself over the relay's web route
 * (the `browser` transport, the local stack's default: a one-time ticket) or by Twilio's Voice SDK
 * (the `twilio` transport: an Access Token, then the TwiML App's signed webhook binds the client leg
 * and answers ConversationRelay). Never connected in 60 s, the sweeper ends it `not_connected`, unbilled.
 */

const webCallPath = (tenant: Tenant, agentId: string) => `${ws(tenant)}/agents/${agentId}/web-call`;

async function startWebCall(
  tenant: Tenant,
  agentId: string,
  body: Record<string, unknown> = {},
  token = tenant.owner.token,
): Promise<{ call_id: string; transport: string; expires_at: string; ticket: string; relay_url: string }> {
  const res = await api('POST', webCallPath(tenant, agentId), { token, body });
  if (res.status !== 201) throw new Error(`web-call: ${res.status} ${res.text}`);
  return res.body;
}

const webRoute = (ticket: string) =>
  `${stackState().voice_relay_url}?${new URLSearchParams({ channel: 'web', ticket }).toString()}`;

async function openWebCall(ticket: string): Promise<RelayClient> {
  const socket = await connectRelay({ url: webRoute(ticket), signature: false });
  if (!(socket instanceof RelayClient)) throw new Error(`refused: ${socket.refused}`);
  return socket;
}

const callOf = async (tenant: Tenant, callId: string): Promise<Json> =>
  (await api('GET', `${ws(tenant)}/calls/${callId}`, { token: tenant.owner.token })).body;

const activeCalls = async (tenant: Tenant): Promise<number> =>
  (await workspaceRecord(tenant.workspaceId))?.activeCalls ?? 0;

afterEach(() => resetClock());

test('browser transport: the call is created at once, the ticket opens it once, the agent answers, and the call is billed by wall-clock', async () => {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, {
    prompt: 'You are Ava from Harbour Realty. Open homes are on Saturdays at 10am.',
    greeting: 'Hi {{name}}, this is Ava.',
  });
  const before = Date.now();
  const started = await startWebCall(tenant, agent.id, { parameters: { name: 'Sam' } });
  expect(started).toEqual({
    call_id: expect.stringMatching(/^call_/),
    transport: 'browser',
    expires_at: expect.any(String),
    ticket: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    relay_url: stackState().voice_relay_url,
  });
  const ttl = Date.parse(started.expires_at) - before;
  expect(ttl).toBeGreaterThan(55_000);
  expect(ttl).toBeLessThanOrEqual(61_000);
  // Created at once, holding a concurrency slot.
  expect(await callOf(tenant, started.call_id)).toMatchObject({
    status: 'created',
    channel: 'web',
    direction: 'inbound',
    created_by: tenant.owner.userId,
    agent_version: 1,
    parameters: { name: 'Sam' },
    remote_phone: null,
  });
  expect(await activeCalls(tenant)).toBe(1);

  const socket = await openWebCall(started.ticket);
  const start = socket.frames.length;
  socket.send({ type: 'start' });
  const greeting = await socket.reply(start);
  expect(socket.frames.find((f) => f.type === 'session')).toMatchObject({ call_id: started.call_id });
  expect(greeting.reply).toBe('Hi Sam, this is Ava.');
  expect(await callOf(tenant, started.call_id)).toMatchObject({ status: 'inprogress' });
  expect((await socket.say('When are the open homes?')).reply).toBe('Open homes are on Saturdays at 10am.');

  // The ticket was spent: a second upgrade is refused and changes nothing.
  expect(await connectRelay({ url: webRoute(started.ticket), signature: false })).toEqual({ refused: 401 });

  await socket.say('Goodbye!');
  await socket.until((frames) => frames.find((f) => f.type === 'end'), 'the end frame');
  await socket.waitClosed();
  const call = await waitForCall(
    tenant,
    started.call_id,
    (c) => c.status === 'completed' && c.credits !== null,
  );
  expect(call).toMatchObject({ channel: 'web', end_reason: 'agent_hangup', record: false });
  // Billed by wall-clock from its connection to its end.
  expect(call.duration_seconds).toBe(
    Math.floor((Date.parse(call.ended_at) - Date.parse(call.connected_at)) / 1000),
  );
  expect(call.transcript.map((t: Json) => t.text)).toEqual([
    'Hi Sam, this is Ava.',
    'When are the open homes?',
    'Open homes are on Saturdays at 10am.',
    'Goodbye!',
    'Thank you for calling. Goodbye!',
  ]);
  await waitFor(async () => ((await activeCalls(tenant)) === 0 ? true : undefined), {
    what: 'the slot to come back',
  });
  const list = (await api('GET', `${ws(tenant)}/calls`, { token: tenant.owner.token })).body.items as Json[];
  expect(list.map((c) => c.id)).toEqual([started.call_id]);
}, 60_000);

test('a tab closed mid-reply ends the call and bills what was talked; the model failing mid-call is apologised for and the call goes on', async () => {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, { prompt: 'You are Ava.', greeting: 'Hi, this is Ava.' });
  const { call_id: callId, ticket } = await startWebCall(tenant, agent.id);
  const socket = await openWebCall(ticket);
  const start = socket.frames.length;
  socket.send({ type: 'start' });
  await socket.reply(start);

  const failed = await socket.say('Please simulate a model error now.');
  expect(failed.reply).toBe("I'm sorry, I'm having trouble answering right now. Could you say that again?");
  expect((await socket.say('Are you still there?')).reply.length).toBeGreaterThan(0);
  const connectedAt = Date.parse((await callOf(tenant, callId)).connected_at);

  // At least a second talked (waited for on the clock, not slept), then the tab closes mid-reply.
  await waitFor(() => (Date.now() - connectedAt > 1_100 ? true : undefined), { what: 'a second of talk' });
  const before = socket.frames.length;
  socket.send({ type: 'prompt', voicePrompt: 'Tell me everything about the house.', last: true });
  await socket.until(
    (frames) => frames.slice(before).find((f) => f.type === 'text' && f.token),
    'the reply to begin',
  );
  socket.close();

  const call = await waitForCall(tenant, callId, (c) => c.status === 'completed' && c.credits !== null);
  expect(call).toMatchObject({ end_reason: 'hangup', channel: 'web' });
  expect(call.duration_seconds).toBeGreaterThanOrEqual(1);
  expect(call.credits).toBeGreaterThan(0);
  expect(call.conversation_incidents.length).toBeGreaterThanOrEqual(1);
  const texts = call.transcript.map((t: Json) => t.text as string);
  expect(texts).toContain("I'm sorry, I'm having trouble answering right now. Could you say that again?");
  expect(texts).toContain('Tell me everything about the house.');
}, 60_000);

test('the route: API keys and viewers 403, another organisation 404, bad parameters 422, an unknown agent_version 404; none creates a call', async () => {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, { prompt: 'You are Ava.' });
  const viewer = await addMember(tenant, 'viewer');
  const other = await newTenant({ paid: true });
  const { key } = await apiKey(tenant, ['start_call', 'calls:read', 'agents:write']);
  const post = (token: string, body: Record<string, unknown> = {}) =>
    api('POST', webCallPath(tenant, agent.id), { token, body });

  const byKey = await post(key);
  expect(byKey.status).toBe(403);
  const byViewer = await post(viewer.token);
  expect(byViewer.status).toBe(403);
  expect(byViewer.body).toEqual({ error: 'Viewers have read-only access' });
  expect((await post(other.owner.token)).status).toBe(404);
  expect((await post(tenant.owner.token, { parameters: { name: 'x\u202Ey' } })).status).toBe(422);
  expect((await post(tenant.owner.token, { parameters: { name: 5 } })).status).toBe(422);
  expect((await post(tenant.owner.token, { agent_version: 0 })).status).toBe(422);
  expect((await post(tenant.owner.token, { surprise: true })).status).toBe(422);
  const unknownVersion = await post(tenant.owner.token, { agent_version: 7 });
  expect(unknownVersion.status).toBe(404);
  expect(unknownVersion.body).toEqual({ error: 'Agent version not found' });
  expect(
    (
      await api('POST', webCallPath(tenant, 'agent_01J00000000000000000000000'), {
        token: tenant.owner.token,
        body: {},
      })
    ).status,
  ).toBe(404);

  await waitForQuiescence();
  const list = (await api('GET', `${ws(tenant)}/calls`, { token: tenant.owner.token })).body.items as Json[];
  expect(list).toEqual([]);
  expect(await activeCalls(tenant)).toBe(0);
}, 60_000);

test('not connected within its minute: the sweeper ends it failed, not_connected, unbilled, and its slot comes back; its ticket opens nothing', async () => {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, { prompt: 'You are Ava.' });
  const { call_id: callId, ticket } = await startWebCall(tenant, agent.id);
  expect(await activeCalls(tenant)).toBe(1);
  const created = Date.parse((await callOf(tenant, callId)).created_at);

  // Within its minute the sweeper leaves it alone, and never dispatches it.
  setClock(new Date(created + 45_000));
  await sweepCalls();
  expect(await callOf(tenant, callId)).toMatchObject({ status: 'created' });
  setClock(new Date(created + 61_000));
  const report = await sweepCalls();
  expect(report.notConnected).toBeGreaterThanOrEqual(1);
  resetClock();

  const call = await waitForCall(tenant, callId, (c) => c.status === 'failed' && c.credits !== null);
  expect(call).toMatchObject({ end_reason: 'not_connected', duration_seconds: 0, credits: 0 });
  expect(await activeCalls(tenant)).toBe(0);
  // Swept again: nothing more happens.
  setClock(new Date(created + 120_000));
  await sweepCalls();
  resetClock();
  expect(
    (await callOf(tenant, callId)).status_history.filter((h: Json) => h.status === 'failed'),
  ).toHaveLength(1);
  // Its ticket no longer opens it (the call is not waiting any more).
  expect(await connectRelay({ url: webRoute(ticket), signature: false })).toEqual({ refused: 404 });
  expect(await storedCall(tenant.workspaceId, callId)).toMatchObject({ status: 'failed' });
}, 60_000);

// ── The twilio transport ─────────────────────────────────────────────────────────────────────────

const TWILIO = {
  TWILIO_API_KEY_SID: 'SK0123456789abcdef0123456789abcdef',
  TWILIO_API_KEY_SECRET: 'local-api-key-secret-for-tests',
  TWILIO_TWIML_APP_SID: 'AP0123456789abcdef0123456789abcdef',
  LOCAL_WEB_CALL: 'twilio',
};

/** The route's service as the stack runs it with LOCAL_WEB_CALL=twilio (the shared stack uses the browser transport). */
async function twilioWebCall(tenant: Tenant, agentId: string) {
  const saved = Object.fromEntries(Object.keys(TWILIO).map((name) => [name, process.env[name]]));
  Object.assign(process.env, TWILIO);
  try {
    return await createWebCall({
      principal: tenant.owner.principal,
      workspaceId: tenant.workspaceId,
      agentId,
      body: {},
    });
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

const webCallWebhookUrl = () => `${stackState().env.WEBHOOKS_BASE_URL}/webhooks/telephony/web-call`;

/** Posts the TwiML App's voice webhook as Twilio would: a form, signed (or not). */
async function postWebCallWebhook(params: Record<string, string>, signed = true) {
  const url = webCallWebhookUrl();
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(signed
        ? { [SIGNATURE_HEADER]: signTwilioRequest(stackState().env.TELEPHONY_AUTH_TOKEN, url, params) }
        : {}),
    },
    body: new URLSearchParams(params).toString(),
  });
  return { status: res.status, text: await res.text() };
}

test("twilio transport: the Access Token's claims and signature; the signed webhook binds the leg once and answers ConversationRelay; the relay then converses as for a phone call", async () => {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, {
    prompt: 'You are Ava from Harbour Realty. Open homes are on Saturdays at 10am.',
    greeting: 'Hi, this is Ava.',
    language: 'en-GB',
  });
  const started = await twilioWebCall(tenant, agent.id);
  expect(started).toEqual({
    call_id: expect.stringMatching(/^call_/),
    transport: 'twilio',
    expires_at: expect.any(String),
    token: expect.any(String),
  });
  const token = started.token as string;
  expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'HS256', typ: 'JWT', cty: 'twilio-fpa;v=1' });
  const { payload } = await jwtVerify(token, new TextEncoder().encode(TWILIO.TWILIO_API_KEY_SECRET), {
    algorithms: ['HS256'],
  });
  expect(payload.iss).toBe(TWILIO.TWILIO_API_KEY_SID);
  expect(payload.sub).toMatch(/^AC[0-9a-f]{32}$/);
  expect(payload.exp! - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(300);
  expect(payload.exp! - Math.floor(Date.now() / 1000)).toBeGreaterThan(240);
  const grants = payload.grants as {
    identity: string;
    voice: { outgoing: { application_sid: string; params: Record<string, string> } };
  };
  expect(grants.identity).toMatch(/^[A-Za-z0-9_]{1,121}$/);
  expect(grants.identity).not.toContain(tenant.owner.email.split('@')[0]);
  expect(grants.voice.outgoing).toEqual({
    application_sid: TWILIO.TWILIO_TWIML_APP_SID,
    params: { call_id: started.call_id, workspace_id: tenant.workspaceId },
  });
  // Another key's secret does not verify it.
  await expect(jwtVerify(token, new TextEncoder().encode('another-secret'))).rejects.toThrow();

  const leg = {
    CallSid: `CA${Date.now().toString(16).padStart(32, '0')}`,
    From: `client:${grants.identity}`,
    To: '',
    ...grants.voice.outgoing.params,
  };
  // Unsigned: 401, nothing changes.
  expect((await postWebCallWebhook(leg, false)).status).toBe(401);
  // Someone else's browser, an unknown call: <Reject/>, nothing changes.
  const stranger = await postWebCallWebhook({ ...leg, From: 'client:user_someone_else' });
  expect(stranger.text).toContain('<Reject');
  const unknown = await postWebCallWebhook({ ...leg, call_id: 'call_01J00000000000000000000000' });
  expect(unknown.text).toContain('<Reject');
  expect(await storedCall(tenant.workspaceId, started.call_id)).toMatchObject({ status: 'created' });
  expect((await storedCall(tenant.workspaceId, started.call_id))?.providerCallId).toBeUndefined();

  // Its creator's browser: the leg is the call's, and the answer is ConversationRelay as for a phone call.
  const answered = await postWebCallWebhook(leg);
  expect(answered.status).toBe(200);
  expect(answered.text).toContain('<Connect action=');
  expect(answered.text).toContain('<ConversationRelay');
  expect(answered.text).toContain(`url="${stackState().voice_relay_url}"`);
  expect(answered.text).toContain('language="en-GB"');
  expect(answered.text).toContain('welcomeGreeting="Hi, this is Ava."');
  const bound = await storedCall(tenant.workspaceId, started.call_id);
  expect(bound).toMatchObject({ status: 'connected', providerCallId: leg.CallSid });

  // Already connected: a second leg (or the same again) is rejected and changes nothing.
  const again = await postWebCallWebhook({ ...leg, CallSid: `${leg.CallSid.slice(0, -1)}f` });
  expect(again.text).toContain('<Reject');
  expect(await storedCall(tenant.workspaceId, started.call_id)).toMatchObject({
    providerCallId: leg.CallSid,
  });

  // Twilio then opens the relay as ConversationRelay does.
  const relay = await connectRelay();
  if (!(relay instanceof RelayClient)) throw new Error(`relay refused: ${relay.refused}`);
  relay.send(
    setupFrame({ providerCallId: leg.CallSid, callId: started.call_id, workspaceId: tenant.workspaceId }),
  );
  await waitFor(
    async () =>
      (await storedCall(tenant.workspaceId, started.call_id))?.relayConnectionId ? true : undefined,
    { what: 'the session to be set up' },
  );
  expect((await relay.say('When are the open homes?')).reply).toBe('Open homes are on Saturdays at 10am.');
  relay.close();
  const call = await waitForCall(
    tenant,
    started.call_id,
    (c) => c.status === 'completed' && c.credits !== null,
  );
  expect(call).toMatchObject({ channel: 'web', provider_call_id: leg.CallSid });
  expect(call.transcript.map((t: Json) => t.text)).toEqual([
    'Hi, this is Ava.',
    'When are the open homes?',
    'Open homes are on Saturdays at 10am.',
  ]);
}, 60_000);
