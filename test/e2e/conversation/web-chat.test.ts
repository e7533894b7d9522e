import { randomBytes, createHash } from 'node:crypto';
import { TestChatTicketEntity } from '../../../functions/agents/entities.js';
import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import {
  addMember,
  apiKey,
  createAgent,
  newTenant,
  waitForCall,
  ws,
  type Tenant,
} from '../calling/fixtures.js';
import { RelayClient } from '../../../lib/local/simulators/telephony/relay-client.js';
import { startReceiver, type Receiver } from '../post-call/fixtures.js';
import { connectRelay, modelRequests, textOf } from './fixtures.js';

/**
 * The dashboard's test chat: the same relay WebSocket and engine as a phone call. A member buys a
 * one-time ticket with their token (POST …/agents/{agent_id}/test-chat: 60 s, single use, bound to the
 * user, workspace, agent, the chat's parameters and whether its post-call actions run); the upgrade
 * carries `?channel=web&ticket=…`, never a token. The session is a call with `channel: web` in the call
 * log, charged, its transcript kept.
 */

const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.stop()));
});

const ticketPath = (tenant: Tenant, agentId: string) => `${ws(tenant)}/agents/${agentId}/test-chat`;

async function buyTicket(
  tenant: Tenant,
  agentId: string,
  body: Record<string, unknown> = {},
  token = tenant.owner.token,
): Promise<{ ticket: string; relay_url: string; expires_at: string }> {
  const res = await api('POST', ticketPath(tenant, agentId), { token, body });
  if (res.status !== 201) throw new Error(`test-chat ticket: ${res.status} ${res.text}`);
  return res.body;
}

const chatUrl = (query: Record<string, string>) =>
  `${stackState().voice_relay_url}?${new URLSearchParams({ channel: 'web', ...query }).toString()}`;

async function openChat(query: Record<string, string>): Promise<RelayClient> {
  const chat = await connectRelay({ url: chatUrl(query), signature: false });
  if (!(chat instanceof RelayClient)) throw new Error(`refused: ${chat.refused}`);
  return chat;
}

const callsOf = async (tenant: Tenant): Promise<Json[]> =>
  (await api('GET', `${ws(tenant)}/calls`, { token: tenant.owner.token })).body.items as Json[];

/** Greets, says goodbye, and waits for the agent to end the chat; the call's id. */
async function chatToTheEnd(chat: RelayClient, line = 'Goodbye!'): Promise<string> {
  const start = chat.frames.length;
  chat.send({ type: 'start' });
  await chat.reply(start);
  const session = chat.frames.find((f) => f.type === 'session');
  await chat.say(line);
  if (line !== 'Goodbye!') await chat.say('Goodbye!');
  await chat.until((frames) => frames.find((f) => f.type === 'end'), 'the end frame');
  await chat.waitClosed();
  return session!.call_id as string;
}

test('a member buys a ticket and chats with an agent: the greeting, replies streamed, the session in the call log as channel web', async () => {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, {
    prompt: 'You are Ava from Harbour Realty. Open homes are on Saturdays at 10am.',
    greeting: 'Hi, this is Ava.',
  });
  const before = Date.now();
  const bought = await buyTicket(tenant, agent.id);
  expect(bought).toEqual({
    ticket: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    relay_url: stackState().voice_relay_url,
    expires_at: expect.any(String),
  });
  const ttl = Date.parse(bought.expires_at) - before;
  expect(ttl).toBeGreaterThan(55_000);
  expect(ttl).toBeLessThanOrEqual(61_000);

  const chat = await openChat({ ticket: bought.ticket });
  const start = chat.frames.length;
  chat.send({ type: 'start' });
  const greeting = await chat.reply(start);
  const session = chat.frames.find((f) => f.type === 'session');
  expect(session).toMatchObject({ call_id: expect.stringMatching(/^call_/) });
  expect(greeting.reply).toBe('Hi, this is Ava.');
  expect((await chat.say('When are the open homes?')).reply).toBe('Open homes are on Saturdays at 10am.');
  await chat.say('Goodbye!');
  await chat.until((frames) => frames.find((f) => f.type === 'end'), 'the end frame');
  await chat.waitClosed();

  const call = await waitForCall(
    tenant,
    session!.call_id as string,
    (c) => c.status === 'completed' && c.credits !== null,
    30_000,
  );
  expect(call).toMatchObject({
    channel: 'web',
    direction: 'inbound',
    end_reason: 'agent_hangup',
    record: false,
    agent_version: 1,
    parameters: {},
  });
  expect(call.transcript.map((t: Json) => t.text)).toEqual([
    'Hi, this is Ava.',
    'When are the open homes?',
    'Open homes are on Saturdays at 10am.',
    'Goodbye!',
    'Thank you for calling. Goodbye!',
  ]);
  expect((await callsOf(tenant)).map((c) => c.id)).toEqual([call.id]);

  // The ticket was spent: a second upgrade with it is refused, and no call is created.
  expect(await connectRelay({ url: chatUrl({ ticket: bought.ticket }), signature: false })).toEqual({
    refused: 401,
  });
  await waitForQuiescence();
  expect((await callsOf(tenant)).map((c) => c.id)).toEqual([call.id]);
}, 60_000);

test("the ticket's parameters are the call's and fill the agent's prompt and greeting in the model's request", async () => {
  const tenant = await newTenant({ paid: true });
  const marker = `Harbour-${randomBytes(4).toString('hex')}`;
  const agent = await createAgent(tenant, {
    prompt: `You are Ava from {{agency}}. The home at {{listing_address}} opens on Saturday.`,
    greeting: 'Hi {{name}}, this is Ava.',
  });
  const parameters = { agency: marker, listing_address: '12 Beach Road, Manly', name: 'Sam' };
  const { ticket } = await buyTicket(tenant, agent.id, { parameters });
  const chat = await openChat({ ticket });
  const start = chat.frames.length;
  chat.send({ type: 'start' });
  expect((await chat.reply(start)).reply).toBe('Hi Sam, this is Ava.');
  const session = chat.frames.find((f) => f.type === 'session');
  await chat.say('Where is the home?');
  await chat.say('Goodbye!');
  await chat.until((frames) => frames.find((f) => f.type === 'end'), 'the end frame');
  await chat.waitClosed();

  const requests = (await modelRequests()).filter((r) =>
    r.messages.some((m) => m.role === 'system' && textOf(m.content).includes(marker)),
  );
  expect(requests.length).toBeGreaterThan(0);
  const system = textOf(requests[0].messages.find((m) => m.role === 'system')!.content);
  expect(system).toContain(`You are Ava from ${marker}. The home at 12 Beach Road, Manly opens on Saturday.`);
  expect(system).not.toContain('{{');

  const call = await waitForCall(tenant, session!.call_id as string, (c) => c.status === 'completed', 30_000);
  expect(call.parameters).toEqual(parameters);
}, 60_000);

test('a used, expired or unknown ticket, no ticket, or an access_token in the URL is refused (401) and no call is stored', async () => {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, {});
  const refused = (query: Record<string, string>) => connectRelay({ url: chatUrl(query), signature: false });

  // An expired ticket (written as the route writes one, its expiry passed; TTL has not removed it yet).
  const expired = randomBytes(32).toString('base64url');
  const nowSeconds = Math.floor(Date.now() / 1000);
  await TestChatTicketEntity.create({
    ticketHash: createHash('sha256').update(expired).digest('hex'),
    workspaceId: tenant.workspaceId,
    organisationId: tenant.organisationId,
    agentId: agent.id,
    userId: tenant.owner.userId,
    parameters: '{}',
    runPostCallActions: false,
    createdAt: new Date((nowSeconds - 61) * 1000).toISOString(),
    expiresAt: nowSeconds - 1,
  }).go();
  expect(await refused({ ticket: expired })).toEqual({ refused: 401 });

  expect(await refused({ ticket: randomBytes(32).toString('base64url') })).toEqual({ refused: 401 });
  expect(await refused({})).toEqual({ refused: 401 });
  expect(await refused({ ticket: '' })).toEqual({ refused: 401 });

  // A token in the URL is refused, alone or beside a good ticket (the old way in is gone).
  expect(await refused({ access_token: tenant.owner.token })).toEqual({ refused: 401 });
  expect(
    await refused({
      workspace_id: tenant.workspaceId,
      agent_id: agent.id,
      access_token: tenant.owner.token,
    }),
  ).toEqual({ refused: 401 });
  const good = await buyTicket(tenant, agent.id);
  expect(await refused({ ticket: good.ticket, access_token: tenant.owner.token })).toEqual({ refused: 401 });
  expect(await refused({ ticket: good.ticket, access_token: '' })).toEqual({ refused: 401 });

  // Used: the first upgrade opens one chat, the second is refused.
  const used = await buyTicket(tenant, agent.id);
  const chat = await openChat({ ticket: used.ticket });
  expect(await refused({ ticket: used.ticket })).toEqual({ refused: 401 });
  chat.close();
  await chat.waitClosed();

  // Two upgrades at once with one ticket: one chat opens, the other is refused.
  const raced = await buyTicket(tenant, agent.id);
  const both = await Promise.all([refused({ ticket: raced.ticket }), refused({ ticket: raced.ticket })]);
  const opened = both.filter((c): c is RelayClient => c instanceof RelayClient);
  expect(opened).toHaveLength(1);
  expect(both.filter((c) => !(c instanceof RelayClient))).toEqual([{ refused: 401 }]);
  opened[0].close();
  await opened[0].waitClosed();

  await waitForQuiescence();
  const calls = await callsOf(tenant);
  expect(calls).toHaveLength(2);
  expect(calls.map((c) => c.channel)).toEqual(['web', 'web']);
}, 60_000);

test('a ticket whose buyer was made a viewer, or removed from the workspace, before it was spent opens no chat (403, 404) and stores no call', async () => {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, {});
  const demoted = await addMember(tenant, 'member');
  const removed = await addMember(tenant, 'member');
  const [demotedTicket, removedTicket] = await Promise.all([
    buyTicket(tenant, agent.id, {}, demoted.token),
    buyTicket(tenant, agent.id, {}, removed.token),
  ]);
  const members = `${ws(tenant)}/members`;
  const changed = await api('PUT', `${members}/${demoted.userId}`, {
    token: tenant.owner.token,
    body: { role: 'viewer' },
  });
  expect(changed.status).toBe(200);
  expect((await api('DELETE', `${members}/${removed.userId}`, { token: tenant.owner.token })).status).toBe(
    204,
  );

  const refused = (ticket: string) => connectRelay({ url: chatUrl({ ticket }), signature: false });
  expect(await refused(demotedTicket.ticket)).toEqual({ refused: 403 });
  expect(await refused(removedTicket.ticket)).toEqual({ refused: 404 });
  // Spent all the same: a second try is 401.
  expect(await refused(demotedTicket.ticket)).toEqual({ refused: 401 });
  expect(await callsOf(tenant)).toEqual([]);

  // A member who still is one chats as before.
  const kept = await addMember(tenant, 'member');
  const chat = await openChat({ ticket: (await buyTicket(tenant, agent.id, {}, kept.token)).ticket });
  await chatToTheEnd(chat);
  expect(await callsOf(tenant)).toHaveLength(1);
}, 60_000);

test("buying a ticket: a viewer is refused (403, before a 422), another workspace's or an unknown agent is 404, an API key 403, bad parameters 422", async () => {
  const tenant = await newTenant({ paid: true });
  const other = await newTenant({ paid: true });
  const agent = await createAgent(tenant, {});
  const viewer = await addMember(tenant, 'viewer');
  const member = await addMember(tenant, 'member');

  const post = (path: string, token: string, body: unknown = {}) => api('POST', path, { token, body });
  const viewerRes = await post(ticketPath(tenant, agent.id), viewer.token);
  expect(viewerRes.status).toBe(403);
  expect(viewerRes.body).toEqual({ error: 'Viewers have read-only access' });
  expect(
    (await post(ticketPath(tenant, agent.id), viewer.token, { parameters: { a: 'x\u202Ey' } })).status,
  ).toBe(403);
  // Another tenant's owner: the workspace is not theirs; their workspace with this agent: not found.
  expect((await post(ticketPath(tenant, agent.id), other.owner.token)).status).toBe(404);
  const otherAgent = await post(`${ws(other)}/agents/${agent.id}/test-chat`, other.owner.token);
  expect(otherAgent.status).toBe(404);
  expect(otherAgent.body).toEqual({ error: 'Agent not found' });
  expect((await post(ticketPath(tenant, 'ag_01ARZ3NDEKTSV4RRFFQ69G5FAV'), tenant.owner.token)).status).toBe(
    404,
  );
  expect((await post(ticketPath(tenant, 'not-an-id'), tenant.owner.token)).status).toBe(404);
  const key = await apiKey(tenant, ['start_call', 'agents:write']);
  expect((await post(ticketPath(tenant, agent.id), key.key)).status).toBe(403);

  for (const body of [
    { parameters: { name: 'Sam\u0000' } },
    { parameters: { name: 'Sam\u202E' } },
    { parameters: { name: '\uD800' } },
    { parameters: { '': 'x' } },
    { parameters: { name: 'x'.repeat(1001) } },
    { parameters: { name: 1 } },
    { run_post_call_actions: 'yes' },
    { ticket: 'mine' },
  ]) {
    const res = await post(ticketPath(tenant, agent.id), member.token, body);
    expect({ body, status: res.status }).toEqual({ body, status: 422 });
  }
  // A member's ticket opens the chat.
  const ok = await post(ticketPath(tenant, agent.id), member.token, { parameters: { name: 'Sam' } });
  expect(ok.status).toBe(201);
  const chat = await openChat({ ticket: ok.body.ticket });
  chat.close();
  await chat.waitClosed();
  await waitForQuiescence();
  const calls = await callsOf(tenant);
  expect(calls).toHaveLength(1);
  expect((await callsOf(other)).length).toBe(0);
}, 60_000);

test("a test chat's post-call actions run only when its ticket asked; it is analysed either way", async () => {
  const hook = await startReceiver();
  receivers.push(hook);
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, {
    prompt: 'You are Ava from Harbour Realty. Open homes are on Saturdays at 10am.',
    greeting: 'Hi, this is Ava.',
    post_call_actions: [{ type: 'webhook', config: { url: hook.url } }],
  });
  const analysed = (callId: string) =>
    waitForCall(tenant, callId, (c) => c.status === 'completed' && c.analysis != null, 30_000);

  const quiet = await chatToTheEnd(
    await openChat({ ticket: (await buyTicket(tenant, agent.id)).ticket }),
    'When are the open homes?',
  );
  const asked = await chatToTheEnd(
    await openChat({ ticket: (await buyTicket(tenant, agent.id, { run_post_call_actions: true })).ticket }),
    'When are the open homes?',
  );
  expect((await analysed(quiet)).analysis).toBeTruthy();
  expect((await analysed(asked)).analysis).toBeTruthy();
  await waitFor(() => (hook.requests.length > 0 ? true : undefined), { what: 'the webhook action' });
  await waitForQuiescence();
  const delivered = hook.requests.map((r) => JSON.stringify(JSON.parse(r.body)));
  expect(delivered.filter((body) => body.includes(asked))).toHaveLength(1);
  expect(delivered.filter((body) => body.includes(quiet))).toHaveLength(0);
  expect(hook.requests).toHaveLength(1);
}, 90_000);

test('a ticket for an earlier version: the chat runs that version (its greeting, the call its version); an unknown one is 404', async () => {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, {
    prompt: 'You are Ava from Harbour Realty. Open homes are on Saturdays at 10am.',
    greeting: 'Hi, this is Ava.',
  });
  const changed = await api('PATCH', `${ws(tenant)}/agents/${agent.id}`, {
    token: tenant.owner.token,
    body: { greeting: 'Hello, Ava here.' },
  });
  expect(changed.body.version).toBe(2);

  const greetingOf = async (body: Record<string, unknown>) => {
    const chat = await openChat({ ticket: (await buyTicket(tenant, agent.id, body)).ticket });
    const start = chat.frames.length;
    chat.send({ type: 'start' });
    const greeting = (await chat.reply(start)).reply;
    const callId = chat.frames.find((f) => f.type === 'session')!.call_id as string;
    await chat.say('Goodbye!');
    await chat.until((frames) => frames.find((f) => f.type === 'end'), 'the end frame');
    await chat.waitClosed();
    const call = await waitForCall(tenant, callId, (c) => c.status === 'completed', 30_000);
    return { greeting, agent_version: call.agent_version };
  };
  expect(await greetingOf({ agent_version: 1 })).toEqual({ greeting: 'Hi, this is Ava.', agent_version: 1 });
  expect(await greetingOf({})).toEqual({ greeting: 'Hello, Ava here.', agent_version: 2 });
  expect(await greetingOf({ agent_version: null })).toEqual({
    greeting: 'Hello, Ava here.',
    agent_version: 2,
  });

  const unknown = await api('POST', ticketPath(tenant, agent.id), {
    token: tenant.owner.token,
    body: { agent_version: 3 },
  });
  expect({ status: unknown.status, body: unknown.body }).toEqual({
    status: 404,
    body: { error: 'Agent version not found' },
  });
  for (const agent_version of [0, 1.5, '1'])
    expect(
      (
        await api('POST', ticketPath(tenant, agent.id), {
          token: tenant.owner.token,
          body: { agent_version },
        })
      ).status,
    ).toBe(422);
}, 90_000);
