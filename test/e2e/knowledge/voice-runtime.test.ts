import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { CallEntity } from '../../../functions/calling/entities.js';
import { KNOWLEDGE_TOOL_PATH } from '../../../functions/knowledge/voice-tool.js';
import { findAgent } from '../../../functions/agents/service.js';
import { playScript } from '../../../functions/conversation/transports/scripted.js';
import { postProviderForm } from '../../helpers/provider.js';
import { repoRoot } from '../../../lib/local/paths.js';
import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor } from '../../helpers/wait.js';
import {
  createAgent,
  newTenant,
  numberFor,
  TEST_NUMBERS,
  waitForCall,
  ws,
  type Tenant,
} from '../calling/fixtures.js';
import { startReceiver, webhookSecret, type Receiver } from '../post-call/fixtures.js';
import { callKey } from '../../../functions/calling/call-shards.js';

/**
 * The voice runtime reaches the knowledge base: a caller asks the agent about a listing (`npm run cli --
 * call receive … --say …`), the agent's model calls its `search_knowledge` tool over the agent's
 * knowledge bases and speaks the top result: the transcript carries the listing found by search, and
 * the post-call webhook its full address. The knowledge webhook (for an outside voice runtime): signed
 * requests only, the call's own agent's bases only, a live call only, a bounded query.
 */

const run = promisify(execFile);
const CALLER = '+61491570199';
const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.stop()));
});

async function cli(...args: string[]): Promise<Json> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bin/cli.ts', ...args], {
    cwd: repoRoot,
    env: process.env,
  });
  return JSON.parse(stdout.trim()) as Json;
}

async function listingsBase(tenant: Tenant): Promise<{ kb: Json; manly: Json }> {
  const kb = (
    await api('POST', `${ws(tenant)}/knowledge-bases`, {
      token: tenant.owner.token,
      body: { name: 'Listings', kind: 'listings' },
    })
  ).body;
  const add = async (body: Json) => {
    const res = await api('POST', `${ws(tenant)}/knowledge-bases/${kb.id}/items`, {
      token: tenant.owner.token,
      body,
    });
    expect(res.status).toBe(201);
    return res.body as Json;
  };
  const manly = await add({
    external_id: 'L-9001',
    address: '12 Harbour Street',
    suburb: 'Manly',
    state: 'NSW',
    postcode: '2095',
    price_text: '$1,250,000',
    status: 'available',
    bedrooms: 3,
    bathrooms: 2,
    description: 'Sunny family home with harbour views.',
  });
  await add({
    external_id: 'L-9002',
    address: '4/88 Ocean Road',
    suburb: 'Bondi',
    state: 'NSW',
    postcode: '2026',
    price_text: '$890,000',
    status: 'available',
  });
  await waitFor(
    async () => {
      const res = await api('GET', `${ws(tenant)}/knowledge-bases/${kb.id}/search?q=Manly`, {
        token: tenant.owner.token,
      });
      return res.body.items?.[0]?.item_id === manly.id ? true : undefined;
    },
    { what: 'the listing to be searchable', timeoutMs: 30_000, intervalMs: 200 },
  );
  return { kb, manly };
}

const toolUrl = () => `${stackState().base_url}${KNOWLEDGE_TOOL_PATH}`;

async function askTool(params: Record<string, string>, sign = true) {
  const res = await postProviderForm(toolUrl(), params, sign);
  return { status: res.status, body: (await res.json()) as Json };
}

test('a caller asks about a listing: the agent searches its knowledge bases and speaks the listing found', async () => {
  const tenant = await newTenant({ paid: true });
  const { kb, manly } = await listingsBase(tenant);
  const hook = await startReceiver();
  receivers.push(hook);
  const agent = await createAgent(tenant, {
    knowledge_base_ids: [kb.id],
    post_call_actions: [{ type: 'webhook', config: { url: hook.url } }],
  });
  const number = await numberFor(tenant, agent.id);

  const inbound = await cli(
    'call',
    'receive',
    '--from',
    CALLER,
    '--to',
    number.phone_number,
    '--say',
    "Hi, I'm calling about the house on Harbour Street in Manly. Is it still for sale?",
    '--json',
  );
  expect(inbound).toMatchObject({ accepted: true, call_id: expect.stringMatching(/^call_/) });
  const call = await waitForCall(tenant, inbound.call_id, (c) => c.status === 'completed', 60_000);
  const turns = call.transcript.map((t: Json) => `${t.role}: ${t.text}`);
  expect(turns).toContain(
    "user: Hi, I'm calling about the house on Harbour Street in Manly. Is it still for sale?",
  );
  expect(turns).toContain(
    "agent: One moment while I check that. That's 12 Harbour Street, Manly NSW 2095: it is available, listed at $1,250,000. It has 3 bedrooms and 2 bathrooms.",
  );
  // The quote reaches the post-call webhook as a property entry with the full address.
  const secret = await webhookSecret(tenant);
  const request = await waitFor(
    () => hook.requests.find((r) => JSON.parse(r.body).data.call_id === inbound.call_id),
    { what: 'the post-call webhook', timeoutMs: 60_000 },
  );
  const payload = new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as Json;
  // One id for the listing: its own (external) id, whichever way the agent came to quote it.
  expect(payload.data.properties).toEqual([
    { listing_id: 'L-9001', address: '12 Harbour Street, Manly NSW 2095', price: '$1,250,000' },
  ]);
  expect(manly.id).toMatch(/^kbi_/);

  // An agent without knowledge bases finds nothing, and says so.
  const bare = await createAgent(tenant, {});
  const bareNumber = await numberFor(tenant, bare.id);
  const other = await cli(
    'call',
    'receive',
    '--from',
    CALLER,
    '--to',
    bareNumber.phone_number,
    '--say',
    'What about the house on Harbour Street in Manly?',
    '--json',
  );
  const unanswered = await waitForCall(tenant, other.call_id, (c) => c.status === 'completed', 60_000);
  // It has no knowledge tool to use: it searches nothing and quotes nothing.
  expect(unanswered.tool_calls.map((t: Json) => t.name)).not.toContain('search_knowledge');
  expect(JSON.stringify(unanswered.transcript)).not.toContain('12 Harbour Street');
}, 180_000);

test('the knowledge tool: signed requests, the live call of the workspace, its agent’s bases, a bounded query', async () => {
  const tenant = await newTenant({ paid: true });
  const other = await newTenant({ paid: true });
  const { kb, manly } = await listingsBase(tenant);
  const agent = await createAgent(tenant, { knowledge_base_ids: [kb.id] });
  await numberFor(tenant, agent.id);
  // The simulator's `long` scenario: a call that stays up (30 simulated minutes) while the tool is asked.
  const started = await api('POST', `${ws(tenant)}/agents/${agent.id}/start-call`, {
    token: tenant.owner.token,
    body: { to_phone: TEST_NUMBERS.long, parameters: { name: 'Sam' } },
  });
  expect(started.status).toBe(201);
  const callId = started.body.id as string;
  const up = await waitFor(
    async () => {
      const { data } = await CallEntity.get(callKey(tenant.workspaceId, callId)).go();
      return data?.providerCallId ? data : undefined;
    },
    { what: 'the call to be dialled', timeoutMs: 20_000, intervalMs: 100 },
  );
  const params = {
    CallSid: up.providerCallId!,
    call_id: callId,
    workspace_id: tenant.workspaceId,
    query: 'Manly house',
  };

  const found = await askTool(params);
  expect(found.status).toBe(200);
  expect(found.body.results[0]).toMatchObject({
    item_id: manly.id,
    knowledge_base_id: kb.id,
    type: 'listing',
    listing: { full_address: '12 Harbour Street, Manly NSW 2095', price_text: '$1,250,000' },
  });
  expect(found.body.results.length).toBeLessThanOrEqual(3);

  expect((await askTool(params, false)).status).toBe(401);
  expect((await askTool({ ...params, query: 'Bondi' }, false)).status).toBe(401);
  // Another workspace, an unknown call, another provider call: 404.
  expect((await askTool({ ...params, workspace_id: other.workspaceId })).status).toBe(404);
  expect((await askTool({ ...params, call_id: 'call_01ARZ3NDEKTSV4RRFFQ69G5FAV' })).status).toBe(404);
  expect((await askTool({ ...params, CallSid: `CA${'0'.repeat(32)}` })).status).toBe(404);
  for (const query of ['', ' ', 'x'.repeat(1001)]) {
    const bad = await askTool({ ...params, query });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatch(/query/);
  }
  expect((await askTool({ ...params, limit: '0' })).status).toBe(422);
  expect((await askTool({ ...params, limit: '9' })).status).toBe(422);

  // Once the call has ended the tool answers 409.
  const hung = await api('POST', `${ws(tenant)}/calls/${callId}/hangup`, { token: tenant.owner.token });
  expect([200, 202]).toContain(hung.status);
  await waitForCall(tenant, callId, (c) => ['completed', 'failed'].includes(c.status), 30_000);
  const ended = await askTool(params);
  expect(ended.status).toBe(409);
}, 120_000);

test('a scripted call (evaluations) talks to the agent through the conversation engine, its knowledge bases included', async () => {
  const tenant = await newTenant({ paid: true });
  const other = await newTenant({ paid: true });
  const { kb } = await listingsBase(tenant);
  const agent = await createAgent(tenant, {
    knowledge_base_ids: [kb.id],
    prompt: 'You are a friendly agent. Open homes are on Saturdays at 10am.',
    greeting: 'Hello!',
  });
  const stored = await findAgent(tenant.workspaceId, agent.id);
  const call = await playScript({
    agent: stored!,
    callerScript: ['Is the house on Harbour Street in Manly still available?', 'When are open homes?'],
  });
  expect(call.transcript.map((t) => `${t.role}: ${t.text}`)).toEqual([
    'agent: Hello!',
    'user: Is the house on Harbour Street in Manly still available?',
    "agent: One moment while I check that. That's 12 Harbour Street, Manly NSW 2095: it is available, listed at $1,250,000. It has 3 bedrooms and 2 bathrooms.",
    'user: When are open homes?',
    'agent: Open homes are on Saturdays at 10am.',
  ]);
  // The tool by agent: its own workspace only.
  const byAgent = { workspace_id: tenant.workspaceId, agent_id: agent.id, query: 'Manly' };
  expect((await askTool(byAgent)).body.results[0].listing.full_address).toBe(
    '12 Harbour Street, Manly NSW 2095',
  );
  expect((await askTool({ ...byAgent, workspace_id: other.workspaceId })).status).toBe(404);
  expect((await askTool({ ...byAgent, agent_id: 'ag_01ARZ3NDEKTSV4RRFFQ69G5FAV' })).status).toBe(404);
  expect((await askTool(byAgent, false)).status).toBe(401);
}, 120_000);
