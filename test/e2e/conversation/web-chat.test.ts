import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { addMember, createAgent, newTenant, waitForCall, ws, type Tenant } from '../calling/fixtures.js';
import { RelayClient } from '../../../lib/local/simulators/telephony/relay-client.js';
import { connectRelay } from './fixtures.js';

/**
 * The dashboard's test chat: the same relay WebSocket and engine as a phone call, authenticated by the
 * user's token in the query (a browser sets no headers on a WebSocket); the session is a call with
 * `channel: web` in the call log, charged, its transcript kept.
 */

const chatUrl = (tenant: Tenant, agentId: string, token: string) =>
  `${stackState().voice_relay_url}?${new URLSearchParams({
    channel: 'web',
    workspace_id: tenant.workspaceId,
    agent_id: agentId,
    access_token: token,
  }).toString()}`;

test('a member chats with an agent: the greeting, replies streamed, the session in the call log as channel web', async () => {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, {
    prompt: 'You are Ava from Harbour Realty. Open homes are on Saturdays at 10am.',
    greeting: 'Hi, this is Ava.',
  });
  const chat = await connectRelay({
    url: chatUrl(tenant, agent.id, tenant.owner.token),
    signature: false,
  });
  if (!(chat instanceof RelayClient)) throw new Error(`refused: ${chat.refused}`);
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
  });
  expect(call.transcript.map((t: Json) => t.text)).toEqual([
    'Hi, this is Ava.',
    'When are the open homes?',
    'Open homes are on Saturdays at 10am.',
    'Goodbye!',
    'Thank you for calling. Goodbye!',
  ]);
  const log = await api('GET', `${ws(tenant)}/calls`, { token: tenant.owner.token });
  expect(log.body.items.map((c: Json) => c.id)).toContain(call.id);
}, 60_000);

test('the test chat is refused without a token, to a viewer, across tenants and for an unknown agent', async () => {
  const tenant = await newTenant({ paid: true });
  const other = await newTenant({ paid: true });
  const agent = await createAgent(tenant, {});
  const viewer = await addMember(tenant, 'viewer');
  expect(await connectRelay({ url: chatUrl(tenant, agent.id, ''), signature: false })).toEqual({
    refused: 401,
  });
  expect(await connectRelay({ url: chatUrl(tenant, agent.id, 'not-a-jwt'), signature: false })).toEqual({
    refused: 401,
  });
  expect(await connectRelay({ url: chatUrl(tenant, agent.id, viewer.token), signature: false })).toEqual({
    refused: 403,
  });
  expect(await connectRelay({ url: chatUrl(tenant, agent.id, other.owner.token), signature: false })).toEqual(
    { refused: 404 },
  );
  expect(
    await connectRelay({
      url: chatUrl(tenant, 'ag_01ARZ3NDEKTSV4RRFFQ69G5FAV', tenant.owner.token),
      signature: false,
    }),
  ).toEqual({ refused: 404 });
  // Nothing was logged for the refused sessions.
  const log = await api('GET', `${ws(tenant)}/calls`, { token: tenant.owner.token });
  expect(log.body.items).toEqual([]);
}, 60_000);
