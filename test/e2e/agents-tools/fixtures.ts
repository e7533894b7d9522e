import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { AgentEntity } from '../../../functions/agents/entities.js';
import { api, type Json } from '../../helpers/http.js';
import { ws, type Tenant } from '../calling/fixtures.js';

/**
 * Agents with tools, and the customer's side a tool test talks to: an HTTP endpoint the test starts
 * on a local port (the test stack's WEBHOOK_ALLOWED_HOSTS lets 127.0.0.1 through).
 */

export { addMember, newTenant, ws, type Tenant, type User } from '../calling/fixtures.js';

export const PARAMETERS = {
  type: 'object',
  properties: { date: { type: 'string' }, time: { type: 'string' } },
  required: ['date'],
};

export function functionTool(url: string, extra: Record<string, unknown> = {}): Json {
  return {
    type: 'function',
    name: 'book_inspection',
    description: 'Book an inspection',
    parameters: PARAMETERS,
    url,
    ...extra,
  };
}

export async function createAgent(tenant: Tenant, tools: Json[] = []): Promise<Json> {
  const res = await api('POST', `${ws(tenant)}/agents`, {
    token: tenant.owner.token,
    body: { name: 'Tool agent', prompt: 'You book inspections.', tools },
  });
  if (res.status !== 201) throw new Error(`create agent: ${res.status} ${res.text}`);
  return res.body;
}

export const agentPath = (tenant: Tenant, agentId: string) => `${ws(tenant)}/agents/${agentId}`;

/** The agent's item as stored (to check what was written, and that nothing was). */
export async function storedAgent(workspaceId: string, agentId: string) {
  return (await AgentEntity.get({ workspaceId, agentId }).go({ consistent: true })).data;
}

export async function agentCount(tenant: Tenant): Promise<number> {
  const res = await api('GET', `${ws(tenant)}/agents?limit=100`, { token: tenant.owner.token });
  expect(res.status).toBe(200);
  return res.body.items.length as number;
}

export async function webhookSecret(tenant: Tenant): Promise<string> {
  const res = await api('GET', `${ws(tenant)}/webhook-secret`, { token: tenant.owner.token });
  expect(res.status).toBe(200);
  return res.body.secret as string;
}

// ── The customer's endpoint ─────────────────────────────────────────────────────────────────────

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Endpoint {
  base: string;
  received: Received[];
  /** Responses whose write the client cut short (the 20 MB body). */
  cut: number;
  /** /slow requests the client gave up on before their answer (an aborted or timed-out tool call). */
  abandoned: number;
  stop(): Promise<void>;
}

const TWENTY_MB = 20 * 1024 * 1024;
/** What /card's 500 answer carries: the caller's data, which no log line may show. */
export const CARD_IN_ERROR = '4111111111111111';
export const EMAIL_IN_ERROR = 'zoe.card@example.com';

/**
 * Paths: /ok (200 JSON echoing the arguments), /fail (500), /card (500 whose body has a card number
 * and an e-mail), /html (200 text/html), /binary (200
 * application/octet-stream), /big (200 JSON, 20 MB), /slow (answers after 5 s), /hang (never answers), /close (closes the
 * socket without answering).
 */
export async function startEndpoint(): Promise<Endpoint> {
  const received: Received[] = [];
  const state = { cut: 0, abandoned: 0 };
  const open = new Set<ServerResponse>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = request.url ?? '/';
      received.push({ path, headers: request.headers, body });
      open.add(response);
      response.on('close', () => open.delete(response));
      switch (path) {
        case '/ok': {
          const parsed = JSON.parse(body) as { arguments: unknown };
          response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
          response.end(JSON.stringify({ confirmed: true, echo: parsed.arguments }));
          return;
        }
        case '/fail':
          response.writeHead(500, { 'content-type': 'text/plain' }).end('database down');
          return;
        case '/card':
          response
            .writeHead(500, { 'content-type': 'text/plain' })
            .end(`card ${CARD_IN_ERROR} declined for ${EMAIL_IN_ERROR}`);
          return;
        case '/html':
          response.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Booked</body></html>');
          return;
        case '/binary':
          response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(64));
          return;
        case '/big': {
          response.writeHead(200, { 'content-type': 'application/json' });
          const chunk = Buffer.alloc(64 * 1024, 'a');
          let sent = 0;
          response.on('close', () => {
            if (sent < TWENTY_MB) state.cut += 1;
          });
          const write = () => {
            while (sent < TWENTY_MB && !response.destroyed) {
              sent += chunk.length;
              if (!response.write(chunk)) {
                response.once('drain', write);
                return;
              }
            }
            if (!response.destroyed) response.end();
          };
          write();
          return;
        }
        case '/slow': {
          let answered = false;
          const timer = setTimeout(() => {
            answered = true;
            if (!response.destroyed)
              response.writeHead(200, { 'content-type': 'application/json' }).end('{"late":true}');
          }, 5_000);
          response.on('close', () => {
            clearTimeout(timer);
            if (!answered) state.abandoned += 1;
          });
          return;
        }
        case '/hang':
          // Never answers: only the client's own timeout ends it.
          response.on('close', () => (state.abandoned += 1));
          return;
        case '/close':
          request.socket.destroy();
          return;
        default:
          response.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    received,
    get cut() {
      return state.cut;
    },
    get abandoned() {
      return state.abandoned;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const response of open) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The one request `endpoint` received at `path` whose body mentions `marker` (a call or agent id),
 * its Standard Webhooks signature verified with the workspace's secret: its body.
 */
export async function theSignedRequest(
  endpoint: Endpoint,
  tenant: Tenant,
  path: string,
  marker: string,
): Promise<Json> {
  const requests = endpoint.received.filter((r) => r.path === path && r.body.includes(marker));
  expect(requests).toHaveLength(1);
  return new Webhook(await webhookSecret(tenant)).verify(
    requests[0].body,
    requests[0].headers as Record<string, string>,
  ) as Json;
}

/** Waits, when needed, until at least `seconds` remain of the current minute (the rate windows). */
export async function roomInMinute(seconds: number): Promise<void> {
  const left = 60 - new Date().getUTCSeconds();
  if (left < seconds) await new Promise((resolve) => setTimeout(resolve, left * 1000 + 200));
}
