import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { GetQueueUrlCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { OrgMemberEntity, WorkspaceMemberEntity } from '../../../functions/access/entities.js';
import { createOrganisation } from '../../../functions/access/organisations.js';
import { BillingAccountEntity } from '../../../functions/billing/entities.js';
import {
  formatApiKey,
  hashSecret,
  newSecret,
  secretHint,
} from '../../../functions/platform/auth/api-key-secret.js';
import { ApiKeyEntity } from '../../../functions/platform/auth/entities.js';
import type { ApiKeyScope, UserPrincipal } from '../../../functions/platform/auth/principal.js';
import { findOrCreateUser } from '../../../functions/platform/auth/users.js';
import { newId } from '../../../functions/platform/ids.js';
import { readEmailOutbox, type OutboxEmail } from '../../../functions/providers/email/local-outbox.js';
import { readSmsOutbox, type OutboxSms } from '../../../functions/providers/sms/local-outbox.js';
import { dlqName } from '../../../lib/resources.js';
import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { subjectFor, tokenFor } from '../../helpers/tokens.js';

/**
 * Tenants, agents, calls and webhook receivers for the post-call tests. Tenants are opened with the
 * tenancy kernel's own service (the records its routes write); agents, numbers and calls go through
 * the real gateway; the post-call pipeline then runs in the local stack exactly as it would in AWS.
 */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface User {
  email: string;
  token: string;
  userId: string;
  principal: UserPrincipal;
}

export interface Tenant {
  owner: User;
  organisationId: string;
  workspaceId: string;
}

export async function newUser(label = 'user'): Promise<User> {
  const email = `${label}-${randomUUID().slice(0, 8)}@post-call.test`;
  const subject = subjectFor(email);
  const userId = await findOrCreateUser(subject, email);
  const token = await tokenFor(email);
  return { email, token, userId, principal: { kind: 'user', userId, email, subject } };
}

/** An organisation with its owner and Default workspace; `paid` puts it on an active Growth plan. */
export async function newTenant(options: { paid?: boolean } = { paid: true }): Promise<Tenant> {
  const owner = await newUser('owner');
  const { organisationId, workspaceId } = await createOrganisation(owner.principal, {
    name: `Org ${owner.email}`,
  });
  if (options.paid)
    await BillingAccountEntity.patch({ organisationId })
      .set({ plan: 'growth', subscriptionStatus: 'active', balanceUnits: 64_000 * 60 })
      .go();
  return { owner, organisationId, workspaceId };
}

/** A regular organisation member with a workspace role. */
export async function addMember(tenant: Tenant, role: 'admin' | 'member' | 'viewer'): Promise<User> {
  const user = await newUser(role);
  const now = new Date().toISOString();
  await OrgMemberEntity.create({
    organisationId: tenant.organisationId,
    userId: user.userId,
    email: user.email,
    role: 'regular',
    status: 'accepted',
    joinedAt: now,
  }).go();
  await WorkspaceMemberEntity.create({
    workspaceId: tenant.workspaceId,
    userId: user.userId,
    organisationId: tenant.organisationId,
    role,
    addedAt: now,
  }).go();
  return user;
}

export async function apiKey(tenant: Tenant, scopes: ApiKeyScope[] = ['start_call']): Promise<string> {
  const keyId = newId('apiKey');
  const secret = newSecret();
  await ApiKeyEntity.create({
    keyId,
    workspaceId: tenant.workspaceId,
    organisationId: tenant.organisationId,
    name: 'post-call tests',
    scopes,
    secretHash: hashSecret(secret),
    secretHint: secretHint(secret),
    createdBy: tenant.owner.userId,
    createdAt: new Date().toISOString(),
  }).go();
  return formatApiKey(keyId, secret);
}

export const ws = (tenant: Tenant) => `/api/v1/workspaces/${tenant.workspaceId}`;

export async function createAgent(
  tenant: Tenant,
  postCallActions: Json[],
  extra: Record<string, unknown> = {},
): Promise<Json> {
  const res = await api('POST', `${ws(tenant)}/agents`, {
    token: tenant.owner.token,
    body: {
      name: 'Riley',
      prompt: 'You are a friendly real-estate agent.',
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
  const bought = await api('POST', `${ws(tenant)}/phone-numbers`, {
    token: tenant.owner.token,
    body: { country: 'AU' },
  });
  if (bought.status !== 201) throw new Error(`buy number: ${bought.status} ${bought.text}`);
  const connected = await api('PATCH', `${ws(tenant)}/phone-numbers/${bought.body.id}`, {
    token: tenant.owner.token,
    body: { agent_id: agentId },
  });
  if (connected.status !== 200) throw new Error(`connect number: ${connected.status} ${connected.text}`);
  return connected.body.phone_number as string;
}

/** A completed call by default (the telephony simulator decides by the called number, API.md). */
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

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 30_000,
  everyMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
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
