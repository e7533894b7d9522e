import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { api } from '../../helpers/http.js';
import { agentPath, createAgent, newTenant, type Tenant } from './fixtures.js';
import { LONG_NAME, startMcpServer, type McpTestServer } from './mcp-server.js';

let server: McpTestServer;
let base: string;
let seen: McpTestServer['seen'];
beforeAll(async () => {
  server = await startMcpServer();
  base = server.url;
  seen = server.seen;
});
afterAll(async () => {
  await server.stop();
});

/**
 * MCP tools against a real MCP server the test builds with the SDK (McpServer over the Streamable
 * HTTP transport, with sessions, on a local port): `…/tools/{name}/list` and a `{server}__{tool}` run
 * through `…/tools/{name}/test`; a server that is down.
 */

async function mcpAgent(tenant: Tenant, url: string, extra: Record<string, unknown> = {}) {
  return createAgent(tenant, [
    {
      type: 'mcp',
      name: 'crm',
      url,
      headers: { authorization: 'Bearer mcp-secret-2468' },
      timeout_ms: 5000,
      ...extra,
    },
  ]);
}

describe('MCP tools', () => {
  it("lists the server's tools with their schemas and whether the agent offers them", async () => {
    const tenant = await newTenant();
    const agent = await mcpAgent(tenant, base, {
      allowed_tools: ['lookup_contact', 'failing_tool', 'not.allowed', LONG_NAME],
    });
    const res = await api('POST', `${agentPath(tenant, agent.id)}/tools/crm/list`, {
      token: tenant.owner.token,
    });
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(
      (res.body.tools as { name: string; allowed: boolean }[]).map((t) => [t.name, t]),
    );
    expect(Object.keys(byName).sort()).toEqual(
      ['failing_tool', LONG_NAME, 'lookup_contact', 'not.allowed', 'other_tool'].sort(),
    );
    expect(byName.lookup_contact).toEqual({
      name: 'lookup_contact',
      description: 'Find a contact by phone',
      input_schema: expect.objectContaining({ type: 'object', properties: { phone: { type: 'string' } } }),
      allowed: true,
    });
    expect(byName.failing_tool).toMatchObject({ allowed: true });
    // Not in allowed_tools; a combined name outside [a-zA-Z0-9_-]; one over 64 characters.
    expect(byName.other_tool).toMatchObject({ allowed: false });
    expect(byName['not.allowed']).toMatchObject({ allowed: false });
    expect(byName[LONG_NAME]).toMatchObject({ allowed: false });
    // The header value reached the server in plain text; the listing's session was ended.
    expect(seen.some((r) => r.headers.authorization === 'Bearer mcp-secret-2468')).toBe(true);
    expect(seen.some((r) => r.method === 'DELETE')).toBe(true);
  });

  it('runs one of its tools through the test route: text content, isError, and 404 for the server alone', async () => {
    const tenant = await newTenant();
    const agent = await mcpAgent(tenant, base);
    const ok = await api('POST', `${agentPath(tenant, agent.id)}/tools/crm__lookup_contact/test`, {
      token: tenant.owner.token,
      body: { arguments: { phone: '+61491570156' } },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      status: 'ok',
      http_status: null,
      duration_ms: expect.any(Number),
      result: 'Contact for +61491570156: Sam Lee',
    });
    const failing = await api('POST', `${agentPath(tenant, agent.id)}/tools/crm__failing_tool/test`, {
      token: tenant.owner.token,
      body: { arguments: {} },
    });
    expect(failing.body).toMatchObject({ status: 'error', result: { error: 'the CRM is read-only today' } });
    const server = await api('POST', `${agentPath(tenant, agent.id)}/tools/crm/test`, {
      token: tenant.owner.token,
      body: { arguments: {} },
    });
    expect(server.status).toBe(404);
  });

  it('a tool the agent does not offer (left out by allowed_tools, or a name a model cannot call) is 404 to the test route, and the server is not asked', async () => {
    const tenant = await newTenant();
    const agent = await mcpAgent(tenant, base, {
      allowed_tools: ['lookup_contact', 'not.allowed', 'unknown_tool'],
    });
    const calls = () => seen.filter((r) => r.rpc === 'tools/call').length;
    const before = calls();
    for (const name of ['crm__other_tool', 'crm__not.allowed', 'crm__unknown_tool']) {
      const res = await api('POST', `${agentPath(tenant, agent.id)}/tools/${name}/test`, {
        token: tenant.owner.token,
        body: { arguments: {} },
      });
      expect({ name, status: res.status, body: res.body }).toEqual({
        name,
        status: name === 'crm__unknown_tool' ? 200 : 404,
        body:
          name === 'crm__unknown_tool'
            ? expect.objectContaining({ status: 'error' })
            : { error: 'Tool not found' },
      });
    }
    // Only the allowed (if unknown to the server) name reached it.
    expect(calls() - before).toBe(1);
  });

  it('a server that is down: the list is empty with why, and a test run is an error', async () => {
    const tenant = await newTenant();
    const down = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const agent = await mcpAgent(tenant, `http://127.0.0.1:${down}/mcp`);
    const listed = await api('POST', `${agentPath(tenant, agent.id)}/tools/crm/list`, {
      token: tenant.owner.token,
    });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ tools: [], error: expect.stringMatching(/could not be listed/) });
    const run = await api('POST', `${agentPath(tenant, agent.id)}/tools/crm__lookup_contact/test`, {
      token: tenant.owner.token,
      body: { arguments: { phone: '+61491570156' } },
    });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ status: 'error', result: { error: expect.any(String) } });
  });
});
