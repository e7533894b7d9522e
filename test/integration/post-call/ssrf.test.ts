import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOrganisation } from '../../../functions/billing/organisations.js';
import { findOrCreateUser } from '../../../functions/platform/auth/users.js';
import { newId } from '../../../functions/platform/ids.js';
import { parseAllowedHosts } from '../../../functions/platform/outbound-http/allow-list.js';
import { sendTestDelivery } from '../../../functions/webhook-deliveries/deliveries.js';
import { postWebhook } from '../../../functions/platform/outbound-http/http-attempt.js';

/**
 * SSRF protection of customer webhooks, against real sockets: private, loopback, link-local,
 * metadata and unspecified addresses are refused when the connection would be made — a listening
 * server on this machine sees no connection at all — unless WEBHOOK_ALLOWED_HOSTS names the host:port.
 */

interface Listener {
  server: Server;
  port: number;
  connections: number;
}

async function listen(host: string): Promise<Listener> {
  const listener = { server: createServer((_req, res) => res.writeHead(204).end()), port: 0, connections: 0 };
  listener.server.on('connection', () => {
    listener.connections += 1;
  });
  await new Promise<void>((resolve) => listener.server.listen(0, host, () => resolve()));
  listener.port = (listener.server.address() as AddressInfo).port;
  return listener;
}

let v4: Listener;
let v6: Listener;
let other: Listener;

beforeAll(async () => {
  [v4, v6, other] = await Promise.all([listen('127.0.0.1'), listen('::1'), listen('127.0.0.2')]);
});
afterAll(async () => {
  for (const l of [v4, v6, other]) await new Promise((r) => l.server.close(r));
});

const post = (url: string, allowed = '') =>
  postWebhook({
    url,
    body: '{}',
    headers: { 'content-type': 'application/json' },
    allowedHosts: parseAllowedHosts(allowed),
    requireHttps: false,
  });

describe('SSRF protection', () => {
  const targets = () => [
    `http://127.0.0.1:${v4.port}/hook`,
    `http://localhost:${v4.port}/hook`,
    `http://127.0.0.2:${other.port}/hook`,
    `http://[::1]:${v6.port}/hook`,
    `http://[::ffff:127.0.0.1]:${v4.port}/hook`,
    `http://2130706433:${v4.port}/hook`,
    `http://0x7f.1:${v4.port}/hook`,
    `http://0.0.0.0:${v4.port}/hook`,
    'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
    'http://10.0.0.1/hook',
    'http://192.168.1.1/hook',
    'http://172.16.0.1/hook',
    'http://100.64.0.1/hook',
    'https://[fd00::1]/hook',
  ];

  it('refuses every private, loopback, link-local and metadata address without a connection', async () => {
    for (const url of targets()) {
      const result = await post(url);
      expect({ url, refused: result.refused, status: result.statusCode }).toEqual({
        url,
        refused: true,
        status: undefined,
      });
      expect(result.error).toMatch(/^refused: address not allowed/);
      expect(result.latencyMs).toBeLessThan(1000);
    }
    expect([v4.connections, v6.connections, other.connections]).toEqual([0, 0, 0]);
  });

  it('reaches a host:port the allow-list names, and only that one', async () => {
    const allowed = `127.0.0.1:${v4.port}`;
    const ok = await post(`http://127.0.0.1:${v4.port}/hook`, allowed);
    expect(ok).toMatchObject({ statusCode: 204, refused: false });
    expect(v4.connections).toBe(1);
    // Another port, or the same address by another name, is not allowed by it.
    expect((await post(`http://127.0.0.1:${v6.port}/hook`, allowed)).refused).toBe(true);
    expect((await post(`http://localhost:${v4.port}/hook`, allowed)).refused).toBe(true);
    expect((await post(`http://localhost:${v4.port}/hook`, `localhost:*`)).statusCode).toBe(204);
    expect(v4.connections).toBe(2);
  });

  it('refuses URLs that are not http(s), and plain http where https is required', async () => {
    expect(await post('file:///etc/passwd')).toMatchObject({
      refused: true,
      error: 'refused: unsupported scheme file:',
    });
    expect(await post('gopher://127.0.0.1:70/')).toMatchObject({ refused: true });
    const https = await postWebhook({
      url: `http://127.0.0.1:${v4.port}/`,
      body: '{}',
      headers: {},
      allowedHosts: parseAllowedHosts(`127.0.0.1:*`),
      requireHttps: true,
    });
    expect(https).toMatchObject({ refused: true, error: 'refused: only https URLs are allowed' });
  });

  it('holds for deliveries: with an empty WEBHOOK_ALLOWED_HOSTS a test payload to localhost is refused, dead, never retried', async () => {
    const before = process.env.WEBHOOK_ALLOWED_HOSTS;
    process.env.WEBHOOK_ALLOWED_HOSTS = '';
    try {
      const email = `ssrf-${newId('user').slice(-8).toLowerCase()}@post-call.test`;
      const userId = await findOrCreateUser(`ssrf-${email}`, email);
      const { organisationId, workspaceId } = await createOrganisation(
        { kind: 'user', userId, email, subject: `ssrf-${email}` },
        { name: 'SSRF' },
      );
      const connectionsBefore = v4.connections;
      const delivery = await sendTestDelivery({
        workspaceId,
        organisationId,
        agentId: newId('agent'),
        actionId: newId('action'),
        url: `http://localhost:${v4.port}/hook`,
        payload: '{"type":"webhook.test"}',
        eventType: 'webhook.test',
      });
      expect(delivery).toMatchObject({ state: 'dead', deadReason: 'refused' });
      expect(delivery.attempts).toHaveLength(1);
      expect(delivery.attempts[0].error).toMatch(/^refused: address not allowed/);
      expect(delivery.attempts[0].statusCode).toBeUndefined();
      expect(v4.connections).toBe(connectionsBefore);
    } finally {
      process.env.WEBHOOK_ALLOWED_HOSTS = before;
    }
  });
});

describe('bounded attempts', () => {
  it('gives up after the timeout and reads at most the response cap', async () => {
    const slow = createServer(() => undefined); // never answers
    const big = createServer((_req, res) => {
      res.writeHead(500);
      res.end('x'.repeat(1024 * 1024));
    });
    await Promise.all([
      new Promise<void>((r) => slow.listen(0, '127.0.0.1', r)),
      new Promise<void>((r) => big.listen(0, '127.0.0.1', r)),
    ]);
    try {
      const allowed = parseAllowedHosts('127.0.0.1:*');
      const timedOut = await postWebhook({
        url: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/`,
        body: '{}',
        headers: {},
        allowedHosts: allowed,
        requireHttps: false,
        timeoutMs: 300,
      });
      expect(timedOut.statusCode).toBeUndefined();
      expect(timedOut.error).toContain('timed out after 300 ms');
      expect(timedOut.latencyMs).toBeLessThan(1500);
      const capped = await postWebhook({
        url: `http://127.0.0.1:${(big.address() as AddressInfo).port}/`,
        body: '{}',
        headers: {},
        allowedHosts: allowed,
        requireHttps: false,
        maxResponseBytes: 1024,
      });
      expect(capped).toMatchObject({ statusCode: 500, truncated: true });
      expect(capped.error!.length).toBeLessThan(300);
    } finally {
      slow.closeAllConnections();
      big.closeAllConnections();
      await Promise.all([new Promise((r) => slow.close(r)), new Promise((r) => big.close(r))]);
    }
  });
});
