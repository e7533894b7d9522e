import { expect, test } from '@jest/globals';
import { api, type Json } from '../../helpers/http.js';
import { readyToCall, waitForCall, ws } from '../calling/fixtures.js';
import { startMcpServer, type McpTestServer, type RawTool } from '../agents-tools/mcp-server.js';
import { liveCall, openSession } from './fixtures.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';

/**
 * MCP listings are bounded (agents/mcp-tools.ts): a server offering more than 64 tools, one whose
 * answer is over the response cap (a 5 MB input schema), one whose input schema breaks the rules of a
 * function tool's `parameters` — each is left out whole with an incident, and the call goes on with
 * the other servers' tools. A session the server replaces is kept for the rest of the call.
 */

const many: RawTool[] = Array.from({ length: 10_000 }, (_, i) => ({
  name: `tool_${i}`,
  description: 'One of very many',
  inputSchema: { type: 'object' },
}));
const huge: RawTool[] = [
  {
    name: 'huge_schema',
    description: 'A 5 MB schema',
    inputSchema: { type: 'object', description: 'x'.repeat(5 * 1024 * 1024) },
  },
];
const broken: RawTool[] = [
  { name: 'fine', description: 'Fine', inputSchema: { type: 'object' } },
  {
    name: 'broken_schema',
    description: 'Not a valid schema',
    inputSchema: { type: 'object', properties: { a: { type: 'banana' } } },
  },
];

const rpcs = (server: McpTestServer, rpc: string) => server.seen.filter((r) => r.rpc === rpc);

test('servers over the bounds are left out whole with an incident each; the call goes on with the others', async () => {
  const servers = {
    crm: await startMcpServer(),
    many: await startMcpServer(many),
    huge: await startMcpServer(huge),
    broken: await startMcpServer(broken),
  };
  try {
    const { tenant, agent } = await readyToCall({
      prompt: 'You are Ava from Harbour Realty. You look up contacts.',
      greeting: 'Hi, this is Ava.',
      tools: Object.entries(servers).map(([name, server]) => ({
        type: 'mcp',
        name,
        url: server.url,
        timeout_ms: 5000,
        ...(name === 'crm' ? { allowed_tools: ['lookup_contact'] } : {}),
      })),
    });
    const call = await liveCall(tenant, agent.id);
    const relay = await openSession(call);
    const turn = await relay.say('Can you lookup contact details for me?');
    expect(turn.reply).toBe('Contact for Can you lookup contact details for me?: Sam Lee');
    relay.close();
    const ended = await waitForCall(tenant, call.callId, (c) => c.status === 'completed', 30_000);
    expect(ended.tool_calls).toEqual([
      expect.objectContaining({ name: 'crm__lookup_contact', status: 'ok' }),
    ]);
    const failed = (name: string) =>
      (ended.conversation_incidents as Json[]).filter(
        (i) => i.kind === 'mcp_server_failed' && (i.detail as string).startsWith(`${name}: `),
      );
    expect(failed('many')).toEqual([
      expect.objectContaining({
        detail: expect.stringMatching(/offers 10000 tools \(at most 64 a server\)/),
      }),
    ]);
    expect(failed('huge')).toHaveLength(1);
    expect(failed('broken')).toEqual([
      expect.objectContaining({ detail: expect.stringMatching(/tool "broken_schema": its input schema/) }),
    ]);
    expect(failed('crm')).toEqual([]);
    // Each server was listed once; the left-out ones were never called.
    for (const server of Object.values(servers)) expect(rpcs(server, 'tools/list')).toHaveLength(1);
    for (const name of ['many', 'huge', 'broken'] as const)
      expect(rpcs(servers[name], 'tools/call')).toEqual([]);

    // The list route says the same of each.
    for (const [name, why] of [
      ['many', /offers 10000 tools/],
      ['broken', /broken_schema/],
      ['huge', /could not be listed/],
    ] as const) {
      const listed = await api('POST', `${ws(tenant)}/agents/${agent.id}/tools/${name}/list`, {
        token: tenant.owner.token,
      });
      expect({ name, status: listed.status, tools: listed.body.tools }).toEqual({
        name,
        status: 200,
        tools: [],
      });
      expect(listed.body.error).toMatch(why);
    }
  } finally {
    for (const server of Object.values(servers)) await server.stop();
  }
}, 120_000);

test("a session the server replaces (it forgot the call's) is kept: later turns use it, the call's end closes it", async () => {
  const crm = await startMcpServer();
  try {
    const { tenant, agent } = await readyToCall({
      prompt: 'You are Ava from Harbour Realty. You look up contacts.',
      greeting: 'Hi, this is Ava.',
      tools: [
        { type: 'mcp', name: 'crm', url: crm.url, allowed_tools: ['lookup_contact'], timeout_ms: 5000 },
      ],
    });
    const call = await liveCall(tenant, agent.id);
    const relay = await openSession(call);
    expect((await relay.say('Please lookup contact one.')).reply).toMatch(/Sam Lee$/);
    await crm.expireSessions();
    expect((await relay.say('Now lookup contact two.')).reply).toMatch(/Sam Lee$/);
    expect((await relay.say('And lookup contact three.')).reply).toMatch(/Sam Lee$/);
    relay.close();
    await waitForCall(tenant, call.callId, (c) => c.status === 'completed', 30_000);
    const sessionOf = (r: McpTestServer['seen'][number]) => r.headers['mcp-session-id'] as string | undefined;
    const called = rpcs(crm, 'tools/call').map(sessionOf);
    // The listing's session, refused once (expired), then the new one for the rest of the call.
    expect(called).toHaveLength(4);
    const [first, refused, second, third] = called;
    expect(first).toEqual(expect.any(String));
    expect(refused).toBe(first);
    expect(second).toEqual(expect.any(String));
    expect(second).not.toBe(first);
    expect(third).toBe(second);
    // Two sessions opened in all (the listing's, the replacement); the call's end closed the kept one.
    expect(rpcs(crm, 'initialize')).toHaveLength(2);
    // The session's end closes it after the call is saved: waited for, then counted once.
    await waitFor(() => crm.seen.some((r) => r.method === 'DELETE'), {
      what: "the call's MCP session ended",
    });
    await waitForQuiescence();
    const deletes = crm.seen.filter((r) => r.method === 'DELETE');
    expect(deletes.map(sessionOf)).toEqual([second]);
  } finally {
    await crm.stop();
  }
}, 120_000);
