import { api, type Json } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { createAgent, readyToCall, waitForCall, ws } from '../calling/fixtures.js';
import { startMcpServer, type McpTestServer } from '../agents-tools/mcp-server.js';
import { liveCall, modelRequests, openSession, textOf } from '../conversation/fixtures.js';

/**
 * A handed-to agent's own tools: Sales has an MCP server (a real one, built with the SDK). Its first
 * reply — asked while the switch is written, in the receptionist's frame — is offered Sales's tools,
 * not the receptionist's; and when the call ends, both agents' MCP sessions are ended.
 */

let server: McpTestServer;
beforeAll(async () => {
  server = await startMcpServer();
});
afterAll(async () => {
  await server.stop();
});

const LINE = "I'd like to speak to sales about a listing";

test("the target's first reply is offered its own MCP tools; both agents' MCP sessions end with the call", async () => {
  const { tenant, agent: reception } = await readyToCall({
    name: 'Reception',
    prompt: 'You are the receptionist of Harbour Realty.',
    greeting: 'Hi, Harbour Realty.',
    tools: [{ type: 'mcp', name: 'crm', url: server.url, timeout_ms: 5000 }],
  });
  const sales = await createAgent(tenant, {
    name: 'Sales',
    prompt: 'You are Sales at Harbour Realty. You know the listings.',
    greeting: 'Hi, Sales here.',
    tools: [{ type: 'mcp', name: 'listings', url: server.url, timeout_ms: 5000 }],
  });
  const set = await api('PATCH', `${ws(tenant)}/agents/${reception.id}`, {
    token: tenant.owner.token,
    body: { handoffs: [{ agent_id: sales.id, description: 'the caller asks for sales', context: 'full' }] },
  });
  expect(set.status).toBe(200);

  const call = await liveCall(tenant, reception.id as string);
  const relay = await openSession(call);
  const from = relay.frames.length;
  relay.send({ type: 'prompt', voicePrompt: LINE, lang: 'en-AU', last: true });
  await waitFor(
    () =>
      relay.frames.slice(from).filter((f) => f.type === 'text' && f.last).length >= 2 ? true : undefined,
    { what: 'the receptionist’s reply and Sales’s first', timeoutMs: 30_000 },
  );

  const requests = await modelRequests();
  const offered = (request: (typeof requests)[number]) => (request.tools ?? []).map((t) => t.function.name);
  const first = requests.findLast((r) =>
    r.messages.some(
      (m) => m.role === 'system' && textOf(m.content).includes('## You are taking over this call'),
    ),
  );
  expect(first).toBeDefined();
  expect(offered(first!)).toContain('listings__lookup_contact');
  expect(offered(first!)).not.toContain('crm__lookup_contact');
  const receptionRequest = requests.findLast((r) =>
    r.messages.some(
      (m) => m.role === 'system' && textOf(m.content).includes('receptionist of Harbour Realty'),
    ),
  );
  expect(offered(receptionRequest!)).toContain('crm__lookup_contact');
  expect(offered(receptionRequest!)).not.toContain('listings__lookup_contact');

  const deletesBefore = server.seen.filter((r) => r.method === 'DELETE').length;
  relay.close();
  const ended: Json = await waitForCall(tenant, call.callId, (c) => c.status === 'completed', 30_000);
  expect(ended.active_agent_id).toBe(sales.id);
  // Each agent listed its server (a session each); the session's end ends both, once each.
  await waitFor(
    () => (server.seen.filter((r) => r.method === 'DELETE').length >= deletesBefore + 2 ? true : undefined),
    { what: "both agents' MCP sessions to be ended", timeoutMs: 15_000 },
  );
  await waitForQuiescence();
  expect(server.seen.filter((r) => r.method === 'DELETE').length).toBe(deletesBefore + 2);
}, 120_000);
