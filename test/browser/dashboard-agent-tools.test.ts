import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Locator, Page } from 'playwright-core';
import * as z from 'zod';
import { seed, type SeedResult } from '../../lib/tools/cli/seed.js';
import type { StackState } from '../../lib/local/state.js';
import { api } from '../helpers/http.js';
import { stackState } from '../helpers/stack-state.js';
import { tokenFor } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait.js';
import { startReceiver, type Receiver } from '../e2e/post-call/fixtures.js';
import {
  controlsBeyondReadOnly,
  DashboardBrowser,
  describeWithBrowser,
  executablePath,
  seriousAxeViolations,
  settled,
} from './dashboard-kit.js';

/**
 * The agent page's Tools section in the system Chromium against the local stack's real API: an owner
 * adds a function tool that calls the stack's demo `book_inspection` endpoint, saves, reloads (its
 * header value comes back masked and is kept when saved untouched), tests it (status ok and the
 * booking's confirmation), sees a bad JSON Schema's 422 and a JSON typo at the field, lists an MCP
 * server's tools; axe-core finds nothing serious; screenshots at 1280 and 390 px under
 * .local/test-output/dashboard-agent-tools/. A viewer reads the tools and finds no control to change them.
 */

/** The demo receiver's `book_inspection` tool (verifies the signature, answers a confirmation). */
const toolUrl = executablePath ? stackState().env.DEMO_TOOL_BOOK_INSPECTION_URL : '';
const HEADER_VALUE = 'sk_test_browser_9876';
const PARAMETERS = {
  type: 'object',
  properties: {
    date: { type: 'string', description: 'The day, YYYY-MM-DD' },
    time: { type: 'string', description: 'The time, HH:MM' },
    address: { type: 'string', description: 'The property' },
  },
  required: ['date'],
};

/** A Streamable HTTP MCP server (the SDK's) with two tools, on a local port. */
async function startMcpServer(): Promise<{ url: string; stop: () => Promise<void> }> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const build = () => {
    const server = new McpServer({ name: 'crm-browser-test', version: '1.0.0' });
    server.registerTool(
      'lookup_contact',
      { description: 'Find a contact by phone', inputSchema: { phone: z.string() } },
      async ({ phone }) => ({ content: [{ type: 'text', text: `Contact for ${phone}: Sam Lee` }] }),
    );
    server.registerTool('delete_contact', { description: 'Not offered to the agent' }, async () => ({
      content: [],
    }));
    return server;
  };
  const http: Server = createServer((request, response) => {
    void (async () => {
      const sessionId = request.headers['mcp-session-id'] as string | undefined;
      let transport = sessionId ? transports.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId) return void response.writeHead(404).end();
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void transports.set(id, created),
        });
        created.onclose = () => {
          if (created.sessionId) transports.delete(created.sessionId);
        };
        await build().connect(created);
        transport = created;
      }
      await transport.handleRequest(request, response);
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    stop: async () => {
      for (const transport of transports.values()) await transport.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

describeWithBrowser('dashboard in Chromium: the agent Tools editor', () => {
  let kit: DashboardBrowser;
  let demo: SeedResult;
  let agentId: string;
  let receiver: Receiver;
  let mcp: { url: string; stop: () => Promise<void> };
  const agentPath = () => `/api/v1/workspaces/${demo.workspace_id}/agents/${agentId}`;
  const owner = () => ({ token: demo.owner_token });
  const savedAgent = async () => (await api('GET', agentPath(), owner())).body;

  beforeAll(async () => {
    expect(toolUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/tools\/book_inspection$/);
    demo = await seed(stackState() as unknown as StackState, { plan: 'growth' }, () => undefined);
    const agent = await api('POST', `/api/v1/workspaces/${demo.workspace_id}/agents`, {
      ...owner(),
      body: { name: 'Agent with tools', prompt: 'Book inspections for {{name}}.' },
    });
    expect(agent.status).toBe(201);
    agentId = agent.body.id;
    receiver = await startReceiver(() => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ received: true }),
    }));
    mcp = await startMcpServer();
    kit = await DashboardBrowser.launch('dashboard-agent-tools');
  }, 120_000);
  afterAll(async () => {
    await kit?.close();
    await receiver?.stop();
    await mcp?.stop();
  });

  const openAgent = async (email: string) => {
    const signed = await kit.signedIn(email, { path: `/agents/${agentId}` });
    await signed.page.getByRole('heading', { level: 1, name: 'Agent with tools' }).waitFor();
    await settled(signed.page);
    return signed;
  };
  const save = async (page: Page) => {
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  };
  /** The 422 or local message under the field labelled `label` within `scope`. */
  const fieldError = (scope: Locator, label: string) =>
    scope
      .locator('.field')
      // `has` is matched inside each .field: a locator from the page, not from `scope`.
      .filter({ has: scope.page().getByLabel(label, { exact: true }) })
      .locator('.field-error');
  const tool1 = (page: Page) => page.getByRole('group', { name: 'Function tool (tool 1)', exact: true });

  it('adds a function tool, saves, reloads with its header masked, and tests it against the demo endpoint', async () => {
    const { context, page } = await openAgent(demo.owner_email);
    await page.getByText('No tools.').waitFor();
    await page.getByRole('button', { name: 'Add function tool' }).click();
    const tool = tool1(page);
    await tool.getByLabel('Tool name').fill('book_inspection');
    await tool.getByLabel('Endpoint URL').fill(toolUrl);
    await tool.getByLabel('Description').fill('Book an inspection of a property for the caller.');
    await tool.getByLabel('Parameters (JSON Schema)').fill(JSON.stringify(PARAMETERS, null, 2));
    await tool.getByRole('button', { name: 'Add header to Function tool (tool 1)' }).click();
    await tool.getByLabel('Header 1 name').fill('x-api-key');
    await tool.getByLabel('Header 1 value').fill(HEADER_VALUE);
    await tool.getByLabel('Static arguments (JSON)').fill('{ "office": "north" }');
    await tool.getByLabel('Timeout (ms)').fill('5000');
    await tool.getByLabel('Said while it runs').fill('One moment, I am booking that.');
    await save(page);

    const saved = await savedAgent();
    expect(saved.tools).toEqual([
      {
        type: 'function',
        name: 'book_inspection',
        description: 'Book an inspection of a property for the caller.',
        parameters: PARAMETERS,
        url: toolUrl,
        headers: { 'x-api-key': '••••9876' },
        static_arguments: { office: 'north' },
        timeout_ms: 5000,
        speak_during: 'One moment, I am booking that.',
      },
    ]);

    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Agent with tools' }).waitFor();
    await settled(page);
    const reloaded = tool1(page);
    await expect(reloaded.getByLabel('Tool name').inputValue()).resolves.toBe('book_inspection');
    await expect(reloaded.getByLabel('Header 1 name').inputValue()).resolves.toBe('x-api-key');
    // The value is write-only: the field is empty, the stored value's mask is shown beside it.
    const value = reloaded.getByLabel('Header 1 value');
    await expect(value.inputValue()).resolves.toBe('');
    await expect(value.getAttribute('placeholder')).resolves.toBe('••••9876');
    await reloaded.getByText('Stored: ••••9876. Type a new value to replace it.').waitFor();
    expect(JSON.parse(await reloaded.getByLabel('Parameters (JSON Schema)').inputValue())).toEqual(
      PARAMETERS,
    );

    // Test: the demo endpoint verifies the signature and confirms the booking.
    await reloaded
      .getByLabel('Test arguments (JSON)')
      .fill('{ "date": "2026-12-01", "time": "10:30", "address": "12 Harbour St" }');
    await reloaded.getByRole('button', { name: 'Test Function tool (tool 1)' }).click();
    const result = reloaded.getByRole('status', { name: 'Test result' });
    await result.waitFor({ timeout: 30_000 });
    await expect(result.locator('dt:text-is("Status") + dd').textContent()).resolves.toBe('ok');
    await expect(result.locator('dt:text-is("HTTP status") + dd').textContent()).resolves.toBe('200');
    await expect(result.locator('dt:text-is("Duration") + dd').textContent()).resolves.toMatch(/^\d+ ms$/);
    const shown = JSON.parse((await result.locator('pre').textContent()) ?? '') as Record<string, unknown>;
    expect(shown).toEqual({
      confirmed: true,
      inspection: { date: '2026-12-01', time: '10:30', address: '12 Harbour St' },
      reference: expect.stringMatching(/^INS-\d{4}$/),
    });

    // Arguments that are not JSON: said at the field, nothing is sent.
    await reloaded.getByLabel('Test arguments (JSON)').fill('{ "date": ');
    await reloaded.getByRole('button', { name: 'Test Function tool (tool 1)' }).click();
    await expect(fieldError(reloaded, 'Test arguments (JSON)').textContent()).resolves.toMatch(
      /^Not valid JSON/,
    );
    await expect(reloaded.getByRole('status', { name: 'Test result' }).count()).resolves.toBe(0);

    // Saved again with the header untouched: the mask goes back and the stored value is kept (the
    // endpoint, now the test's receiver, gets the value typed first).
    await reloaded.getByLabel('Endpoint URL').fill(receiver.url);
    await save(page);
    await waitFor(async () => (await savedAgent()).tools[0].url === receiver.url, { what: 'the new URL' });
    expect((await savedAgent()).tools[0].headers).toEqual({ 'x-api-key': '••••9876' });
    await reloaded.getByLabel('Test arguments (JSON)').fill('{ "date": "2026-12-02" }');
    await reloaded.getByRole('button', { name: 'Test Function tool (tool 1)' }).click();
    await reloaded
      .getByRole('status', { name: 'Test result' })
      .locator('pre', { hasText: '"received": true' })
      .waitFor({ timeout: 30_000 });
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0].headers['x-api-key']).toBe(HEADER_VALUE);
    expect(JSON.parse(receiver.requests[0].body)).toMatchObject({
      tool: 'book_inspection',
      test: true,
      arguments: { date: '2026-12-02', office: 'north' },
    });
    await context.close();
  }, 120_000);

  it('a bad JSON Schema: the API 422 at the field; JSON that does not parse: said at the field; nothing saved', async () => {
    const { context, page } = await openAgent(demo.owner_email);
    const before = await savedAgent();
    const tool = tool1(page);
    const parameters = tool.getByLabel('Parameters (JSON Schema)');
    await parameters.fill('{ "type": "object", "properties": { "date": { "type": "strin" } } }');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await fieldError(tool, 'Parameters (JSON Schema)').waitFor();
    await expect(fieldError(tool, 'Parameters (JSON Schema)').textContent()).resolves.toContain(
      'not a valid JSON Schema',
    );
    await expect(parameters.getAttribute('aria-invalid')).resolves.toBe('true');
    expect((await savedAgent()).updated_at).toBe(before.updated_at);
    await kit.shot(page, 'tools-422-1280');

    await parameters.fill('{ "type": "object", ');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await fieldError(tool, 'Parameters (JSON Schema)')
      .filter({ hasText: /^Not valid JSON/ })
      .waitFor();
    await expect(parameters.getAttribute('aria-invalid')).resolves.toBe('true');
    const after = await savedAgent();
    expect(after.updated_at).toBe(before.updated_at);
    expect(after.tools).toEqual(before.tools);
    await context.close();
  }, 60_000);

  it('adds an MCP server and lists its tools, the allowed one marked; axe is clean; photographed at 1280 and 390 px', async () => {
    const { context, page } = await openAgent(demo.owner_email);
    await page.getByRole('button', { name: 'Add MCP server' }).click();
    const server = page.getByRole('group', { name: 'MCP server (tool 2)', exact: true });
    await server.getByText("Save the agent to list this server's tools.").waitFor();
    await server.getByLabel('Server name').fill('crm');
    await server.getByLabel('Server URL').fill(mcp.url);
    await server.getByLabel('Allowed tools').fill('lookup_contact');
    await save(page);
    expect((await savedAgent()).tools[1]).toEqual({
      type: 'mcp',
      name: 'crm',
      url: mcp.url,
      allowed_tools: ['lookup_contact'],
      timeout_ms: 8000,
    });
    await server.getByRole('button', { name: 'List tools of MCP server (tool 2)' }).click();
    const listed = server.getByRole('status', { name: 'Server tools' });
    await listed.waitFor({ timeout: 30_000 });
    await expect(listed.locator('li').allTextContents()).resolves.toEqual([
      expect.stringMatching(/^lookup_contact — offered to the agent/),
      expect.stringMatching(/^delete_contact — not offered/),
    ]);

    expect({ violations: await seriousAxeViolations(page) }).toEqual({ violations: [] });
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await kit.shot(page, `tools-${width}`);
    }
    await context.close();
  }, 90_000);

  it('more than 10 tests of the agent in a minute: the 429 is said as the API words it, and nothing more is sent', async () => {
    const { context, page } = await openAgent(demo.owner_email);
    const tool = tool1(page);
    const refused = tool.getByRole('alert');
    await tool.getByLabel('Test arguments (JSON)').fill('{ "date": "2026-12-03" }');
    // The limit counts a calendar minute: at most 10 answered before the 429 (more if the minute turns).
    let answered = 0;
    let sentWhenRefused: number | undefined;
    for (let i = 0; i < 25 && sentWhenRefused === undefined; i += 1) {
      const before = receiver.requests.length;
      await tool.getByRole('button', { name: 'Test Function tool (tool 1)' }).click();
      await waitFor(async () => receiver.requests.length > before || (await refused.count()) > 0, {
        what: 'the test to be answered or refused',
      });
      await tool
        .getByRole('button', { name: 'Test Function tool (tool 1)' })
        .and(page.locator(':enabled'))
        .waitFor();
      if ((await refused.count()) > 0) sentWhenRefused = receiver.requests.length - before;
      else answered += receiver.requests.length - before;
    }
    await expect(refused.textContent()).resolves.toBe(
      'Too many tool tests for this agent: at most 10 a minute',
    );
    // Each answered test reached the endpoint once; the refused one did not reach it.
    expect(answered).toBeGreaterThanOrEqual(1);
    expect(sentWhenRefused).toBe(0);
    await context.close();
  }, 120_000);

  it('a viewer reads the tools (header masked) and finds no control to change or run them', async () => {
    const email = `viewer-tools-${Date.now()}@example.com`;
    const invited = await api('POST', `/api/v1/organisations/${demo.organisation_id}/invitations`, {
      ...owner(),
      body: { email, role: 'regular', workspaces: [{ workspace_id: demo.workspace_id, role: 'viewer' }] },
    });
    expect(invited.status).toBe(201);
    const accepted = await api('POST', `/api/v1/invitations/${invited.body.invitation_id}/accept`, {
      token: await tokenFor(email),
    });
    expect(accepted.status).toBe(200);

    const { context, page } = await openAgent(email);
    const tools = page.getByRole('region', { name: 'Tools' });
    const fn = tools.getByRole('group', { name: 'Function tool (tool 1)' });
    await fn.getByRole('heading', { name: /book_inspection/ }).waitFor();
    await fn.getByText('x-api-key: ••••9876').waitFor();
    await tools.getByRole('group', { name: 'MCP server (tool 2)' }).getByText('lookup_contact').waitFor();
    await expect(tools.locator('button, input, select, textarea').count()).resolves.toBe(0);
    await expect(page.getByText(HEADER_VALUE).count()).resolves.toBe(0);
    expect(await controlsBeyondReadOnly(page)).toEqual([]);
    expect({ violations: await seriousAxeViolations(page) }).toEqual({ violations: [] });
    await kit.shot(page, 'viewer-tools-1280');
    await context.close();
    expect(kit.cspViolations).toEqual([]);
  }, 90_000);
});
