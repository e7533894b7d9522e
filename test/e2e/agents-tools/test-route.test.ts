import { existsSync, readFileSync } from 'node:fs';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { api, type Json } from '../../helpers/http.js';
import { waitFor } from '../../helpers/wait.js';
import {
  agentPath,
  CARD_IN_ERROR,
  createAgent,
  EMAIL_IN_ERROR,
  functionTool,
  newTenant,
  roomInMinute,
  startEndpoint,
  webhookSecret,
  type Endpoint,
  type Tenant,
} from './fixtures.js';

/**
 * `POST …/agents/{agent_id}/tools/{name}/test` against a real local endpoint: the request it gets
 * (signed as a webhook, `test: true`, static arguments merged), and each way an endpoint can answer
 * or fail mapped to a status, never a 5xx of ours; at most 10 tests a minute an agent.
 */

let endpoint: Endpoint;
beforeAll(async () => {
  endpoint = await startEndpoint();
});
afterAll(async () => {
  await endpoint.stop();
});

async function agentWith(tenant: Tenant, path: string, extra: Record<string, unknown> = {}) {
  return createAgent(tenant, [functionTool(`${endpoint.base}${path}`, extra)]);
}

async function runTest(tenant: Tenant, agent: Json, args: Json = { date: '2025-07-01' }) {
  return api('POST', `${agentPath(tenant, agent.id)}/tools/book_inspection/test`, {
    token: tenant.owner.token,
    body: { arguments: args },
  });
}

describe('tool test route', () => {
  it("caps a tool's run below its function's timeout: a tool allowed 30 s answers `timeout` in time, not a 5xx", async () => {
    const tenant = await newTenant();
    // The route's function (AgentsApi) has 10 s, which the local stack enforces as Lambda does.
    const agent = await agentWith(tenant, '/hang', { timeout_ms: 30_000 });
    const started = Date.now();
    const res = await runTest(tenant, agent);
    const took = Date.now() - started;
    expect({ status: res.status, body: res.body }).toEqual({
      status: 200,
      body: {
        status: 'timeout',
        http_status: null,
        duration_ms: expect.any(Number),
        result: { error: expect.stringMatching(/^timed out after \d+ ms$/) },
      },
    });
    expect(took).toBeLessThan(10_000);
    expect((res.body as { duration_ms: number }).duration_ms).toBeGreaterThan(5_000);
  }, 30_000);

  it('posts the signed request a call would, and answers the JSON result', async () => {
    const tenant = await newTenant();
    const agent = await agentWith(tenant, '/ok', {
      headers: { authorization: 'Bearer tool-secret-5678' },
      static_arguments: { office: 'north', date: 'fixed' },
    });
    const res = await runTest(tenant, agent, { date: '2025-07-01', time: '10:00' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ok',
      http_status: 200,
      duration_ms: expect.any(Number),
      // Static arguments are merged and win.
      result: { confirmed: true, echo: { date: 'fixed', time: '10:00', office: 'north' } },
    });

    const request = endpoint.received.filter((r) => r.path === '/ok').at(-1);
    expect(request).toBeDefined();
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.authorization).toBe('Bearer tool-secret-5678');
    const secret = await webhookSecret(tenant);
    const verified = new Webhook(secret).verify(
      request?.body as string,
      request?.headers as Record<string, string>,
    );
    expect(verified).toEqual({
      tool: 'book_inspection',
      test: true,
      call: {
        id: null,
        channel: 'test',
        agent_id: agent.id,
        agent_version: agent.version,
        workspace_id: tenant.workspaceId,
        direction: null,
        from_phone: null,
        to_phone: null,
        parameters: {},
      },
      arguments: { date: 'fixed', time: '10:00', office: 'north' },
    });
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(
        request?.body as string,
        request?.headers as Record<string, string>,
      ),
    ).toThrow();
  });

  it('maps every way an endpoint fails to a status, never a 5xx', async () => {
    const tenant = await newTenant();
    const cases: [string, Record<string, unknown>, Json][] = [
      [
        '/fail',
        {},
        { status: 'error', http_status: 500, result: { error: expect.stringMatching(/^HTTP 500/) } },
      ],
      // text/* is a result, as JSON is.
      ['/html', {}, { status: 'ok', http_status: 200, result: '<html><body>Booked</body></html>' }],
      [
        '/binary',
        {},
        {
          status: 'error',
          http_status: 200,
          result: { error: 'unsupported content type application/octet-stream' },
        },
      ],
      [
        '/slow',
        { timeout_ms: 500 },
        { status: 'timeout', http_status: null, result: { error: 'timed out after 500 ms' } },
      ],
      [
        '/close',
        {},
        {
          status: 'error',
          http_status: null,
          result: { error: expect.stringMatching(/socket hang up|ECONNRESET/) },
        },
      ],
    ];
    for (const [path, extra, expected] of cases) {
      const agent = await agentWith(tenant, path, extra);
      const res = await runTest(tenant, agent);
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 200,
        body: { ...expected, duration_ms: expect.any(Number) },
      });
    }
  });

  it('reads only the first 16 KB of a 20 MB answer', async () => {
    const tenant = await newTenant();
    const agent = await agentWith(tenant, '/big');
    const res = await runTest(tenant, agent);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', http_status: 200 });
    expect(res.body.result).toBe('a'.repeat(16 * 1024));
    expect(res.body.duration_ms).toBeLessThan(5_000);
  });

  it('arguments that do not match the parameters are an error result, and nothing is sent', async () => {
    const tenant = await newTenant();
    const agent = await agentWith(tenant, '/ok');
    const before = endpoint.received.length;
    const res = await runTest(tenant, agent, { time: 10 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'error', http_status: null });
    expect(res.body.result.error).toMatch(/arguments do not match/);
    expect(endpoint.received.length).toBe(before);
  });

  it('test arguments with NUL or a bidi control: 422 at the text, nothing sent, no test counted', async () => {
    const tenant = await newTenant();
    const agent = await agentWith(tenant, '/ok');
    const before = endpoint.received.length;
    await roomInMinute(25);
    for (const [args, loc, found] of [
      [{ date: '2025\u000007-01' }, ['body', 'arguments', 'date'], 'U+0000'],
      [{ date: '2025-07-01', notes: ['ok', 'a\u2066b'] }, ['body', 'arguments', 'notes', 1], 'U+2066'],
    ] as const) {
      const res = await runTest(tenant, agent, args as Json);
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([expect.objectContaining({ type: 'value_error', loc })]);
      expect(res.body.detail[0].msg).toContain(found);
    }
    expect(endpoint.received.length).toBe(before);
    // Refused before the count: ten tests are still left this minute.
    for (let i = 0; i < 10; i += 1) expect((await runTest(tenant, agent)).status).toBe(200);
  });

  it("an endpoint's 500 answer is the test's result, and its content is in no log line", async () => {
    const tenant = await newTenant();
    const agent = await agentWith(tenant, '/card');
    const res = await runTest(tenant, agent);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'error', http_status: 500 });
    expect(res.body.result.error).toContain(CARD_IN_ERROR);
    const logPath = join(dirname(process.env.LOCAL_STACK_STATE ?? ''), 'stack.log');
    expect(existsSync(logPath)).toBe(true);
    const runs = () =>
      readFileSync(logPath, 'utf8')
        .split('\n')
        .filter((line) => line.includes('tool run') && line.includes(agent.id as string));
    await waitFor(() => (runs().length > 0 ? true : undefined), { what: 'the tool run logged' });
    expect(runs()).toHaveLength(1);
    expect(runs()[0]).toContain('error=HTTP 500 Internal Server Error');
    const log = readFileSync(logPath, 'utf8');
    expect(log).not.toContain(CARD_IN_ERROR.slice(0, 8));
    expect(log).not.toContain(EMAIL_IN_ERROR);
  });

  it('a private address reached through a name is refused when it connects', async () => {
    const tenant = await newTenant();
    // The machine's own name is not in the test stack's allow-list (127.0.0.1 and localhost are), nor
    // refused on save (it is not an address); it resolves to loopback, which the connection refuses.
    const name = hostname();
    expect((await lookup(name)).address).toMatch(/^127\.|^::1$/);
    const agent = await createAgent(tenant, [functionTool(`http://${name}:9/x`)]);
    const res = await runTest(tenant, agent);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'error', result: { error: expect.stringMatching(/^refused/) } });
  });

  it('the 11th test of an agent in a minute is 429', async () => {
    const tenant = await newTenant();
    const agent = await agentWith(tenant, '/ok');
    await roomInMinute(20);
    for (let i = 0; i < 10; i += 1) expect((await runTest(tenant, agent)).status).toBe(200);
    const refused = await runTest(tenant, agent);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: 'Too many tool tests for this agent: at most 10 a minute' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another agent has its own count.
    const second = await agentWith(tenant, '/ok');
    expect((await runTest(tenant, second)).status).toBe(200);
  });
});
