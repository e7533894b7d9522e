import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';
import { api } from '../../helpers/http.js';
import { agentPath, createAgent, newTenant, type Tenant } from './fixtures.js';

/**
 * MCP tools against a real MCP server the test builds with the SDK (McpServer over the Streamable
 * HTTP transport, with sessions, on a local port): `…/tools/{name}/list` and a `{server}__{tool}` run
 * through `…/tools/{name}/test`; a server that is down.
 */

const LONG_NAME = `t${'x'.repeat(63)}`;

function buildServer(): McpServer {
  const server = new McpServer({ name: 'crm-test', version: '1.0.0' });
  server.registerTool(
    'lookup_contact',
    { description: 'Find a contact by phone', inputSchema: { phone: z.string() } },
    async ({ phone }) => ({ content: [{ type: 'text', text: `Contact for ${phone}: Sam Lee` }] }),
  );
  server.registerTool('failing_tool', { description: 'Always fails' }, async () => ({
    isError: true,
    content: [{ type: 'text', text: 'the CRM is read-only today' }],
  }));
  server.registerTool('not.allowed', { description: 'A dotted name' }, async () => ({ content: [] }));
  server.registerTool(LONG_NAME, { description: 'A long name' }, async () => ({ content: [] }));
  server.registerTool('other_tool', { description: 'Not in allowed_tools' }, async () => ({ content: [] }));
  return server;
}

let http: Server;
let base: string;
const seen: { method: string; headers: IncomingHttpHeaders }[] = [];
const transports = new Map<string, StreamableHTTPServerTransport>();

beforeAll(async () => {
  http = createServer((request, response) => {
    void (async () => {
      seen.push({ method: request.method ?? '', headers: request.headers });
      const sessionId = request.headers['mcp-session-id'] as string | undefined;
      let transport = sessionId ? transports.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId) {
          response.writeHead(404).end();
          return;
        }
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, created);
          },
        });
        created.onclose = () => {
          if (created.sessionId) transports.delete(created.sessionId);
        };
        await buildServer().connect(created);
        transport = created;
      }
      await transport.handleRequest(request, response);
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  for (const transport of transports.values()) await transport.close();
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
});

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
