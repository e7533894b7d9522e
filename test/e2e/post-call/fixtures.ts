import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { GetQueueUrlCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { ApiKeyScope } from '../../../functions/platform/auth/principal.js';
import { readEmailOutbox, type OutboxEmail } from '../../../functions/providers/email/local-outbox.js';
import { readSmsOutbox, type OutboxSms } from '../../../functions/providers/sms/local-outbox.js';
import { dlqName } from '../../../functions/platform/resources.js';
import { api, type Json } from '../../helpers/http.js';
import {
  apiKey as callingApiKey,
  newTenant as callingTenant,
  numberFor,
  ws,
  type Tenant,
} from '../calling/fixtures.js';
import { stackState } from '../../helpers/stack-state.js';

/**
 * Tenants, agents, calls and webhook receivers for the post-call tests. Tenants are opened with the
 * tenancy kernel's own service (the records its routes write); agents, numbers and calls go through
 * the real gateway; the post-call pipeline then runs in the local stack exactly as it would in AWS.
 */

// Tenants, users, members and API keys are the calling suite's fixtures; the post-call suite's
// defaults differ only in that its tenants are paid and its keys are plain strings.
export type { Tenant, User } from '../calling/fixtures.js';
export { addMember, newUser, ws } from '../calling/fixtures.js';

/** An organisation with its owner and Default workspace, on an active Growth plan unless `paid: false`. */
export const newTenant = (options: { paid?: boolean } = { paid: true }): Promise<Tenant> =>
  callingTenant(options);

export async function apiKey(tenant: Tenant, scopes: ApiKeyScope[] = ['start_call']): Promise<string> {
  return (await callingApiKey(tenant, scopes)).key;
}

export async function createAgent(
  tenant: Tenant,
  postCallActions: Json[],
  extra: Record<string, unknown> = {},
): Promise<Json> {
  const res = await api('POST', `${ws(tenant)}/agents`, {
    token: tenant.owner.token,
    body: {
      name: 'Riley',
      // The agent quotes the call's listing when asked (the model simulator reads the price from its prompt).
      prompt:
        'You are a friendly real-estate agent calling about the home at {{listing_address}}, listed at {{listing_price}}.',
      greeting: 'Hi {{name}}!',
      post_call_actions: postCallActions,
      ...extra,
    },
  });
  if (res.status !== 201) throw new Error(`create agent: ${res.status} ${res.text}`);
  return res.body;
}

/** Buys a number (the tenant must be on a paid plan) and connects it to the agent. */
export async function connectNumber(tenant: Tenant, agentId: string): Promise<string> {
  return (await numberFor(tenant, agentId)).phone_number as string;
}

/** A completed call by default (the telephony simulator decides by the called number, docs/api.md). */
export const TO = {
  answered: '+61491570156',
  noAnswer: '+61491570111',
  duplicated: '+61491570114',
} as const;

export async function startCall(
  tenant: Tenant,
  agentId: string,
  toPhone: string = TO.answered,
  parameters: Record<string, string> = { name: 'Sam' },
): Promise<string> {
  const res = await api('POST', `${ws(tenant)}/agents/${agentId}/start-call`, {
    token: tenant.owner.token,
    body: { to_phone: toPhone, parameters },
  });
  if (res.status !== 201) throw new Error(`start call: ${res.status} ${res.text}`);
  return res.body.id as string;
}

export async function deliveries(
  tenant: Tenant,
  callId?: string,
  token = tenant.owner.token,
): Promise<Json[]> {
  const res = await api('GET', `${ws(tenant)}/webhook-deliveries${callId ? `?call_id=${callId}` : ''}`, {
    token,
  });
  if (res.status !== 200) throw new Error(`list deliveries: ${res.status} ${res.text}`);
  return res.body.items as Json[];
}

export async function webhookSecret(tenant: Tenant): Promise<string> {
  const res = await api('GET', `${ws(tenant)}/webhook-secret`, { token: tenant.owner.token });
  if (res.status !== 200) throw new Error(`webhook secret: ${res.status} ${res.text}`);
  return res.body.secret as string;
}

// ── A webhook receiver the test controls ─────────────────────────────────────────────────────────

export interface ReceivedRequest {
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** TCP connections accepted (to prove that none was made). */
  connections: number;
  stop(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 (allowed by the test stack's WEBHOOK_ALLOWED_HOSTS) answering `reply(n)` to its n-th request (0-based). */
export async function startReceiver(
  reply: (n: number, request: ReceivedRequest) => Reply = () => ({ status: 204 }),
  host = '127.0.0.1',
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const state = { connections: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { at: Date.now(), headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const n = requests.length;
      requests.push(request);
      const answer = reply(n, request);
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  });
  server.on('connection', () => {
    state.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}/hooks/${randomUUID().slice(0, 8)}`,
    port,
    requests,
    get connections() {
      return state.connections;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ── Outboxes and the dead-letter queue ───────────────────────────────────────────────────────────

function stateDir(): string {
  const path = process.env.LOCAL_STACK_STATE;
  if (!path) throw new Error('no local stack');
  const state = JSON.parse(readFileSync(path, 'utf8')) as { state_dir: string };
  return state.state_dir;
}

export const smsTo = (to: string): OutboxSms[] =>
  readSmsOutbox(join(stateDir(), 'outbox', 'sms.jsonl')).filter((sms) => sms.to === to);
export const smsWithKey = (prefix: string): OutboxSms[] =>
  readSmsOutbox(join(stateDir(), 'outbox', 'sms.jsonl')).filter((sms) =>
    sms.idempotency_key.startsWith(prefix),
  );
export const emailsTo = (to: string): OutboxEmail[] =>
  readEmailOutbox(join(stateDir(), 'outbox', 'email.jsonl')).filter((email) => email.to === to);
export const emailsAbout = (callId: string): OutboxEmail[] =>
  readEmailOutbox(join(stateDir(), 'outbox', 'email.jsonl')).filter((email) =>
    email.idempotency_key.includes(callId),
  );

let sqs: SQSClient | undefined;

/** Bodies of the messages now in the webhook-delivery DLQ (read without consuming them). */
export async function webhookDlqBodies(): Promise<Json[]> {
  sqs ??= new SQSClient({ region: stackState().env.AWS_REGION });
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: dlqName('webhookDelivery') }));
  const bodies: Json[] = [];
  for (let i = 0; i < 5; i += 1) {
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 0,
        WaitTimeSeconds: 0,
      }),
    );
    for (const m of Messages ?? []) bodies.push(JSON.parse(m.Body ?? '{}'));
    if (!Messages?.length) break;
  }
  return bodies;
}

export function closeSqs(): void {
  sqs?.destroy();
  sqs = undefined;
}

/**
 * Starts receivers for the test file that calls it (at its top level): they are stopped, and the
 * queue client closed, once the file's tests are done.
 */
export function receiversForThisFile(): (...args: Parameters<typeof startReceiver>) => Promise<Receiver> {
  const started: Receiver[] = [];
  afterAll(async () => {
    await Promise.all(started.map((r) => r.stop()));
    closeSqs();
  });
  return async (...args) => {
    const receiver = await startReceiver(...args);
    started.push(receiver);
    return receiver;
  };
}
