import { randomUUID } from 'node:crypto';
import {
  OrgMemberEntity,
  WorkspaceEntity,
  WorkspaceMemberEntity,
} from '../../../functions/access/entities.js';
import { createOrganisation } from '../../../functions/billing/organisations.js';
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
import { api, type Json } from '../../helpers/http.js';
import { subjectFor, tokenFor } from '../../helpers/tokens.js';
import { waitFor } from '../../helpers/wait.js';

/**
 * Tenants for the calling tests, made through the tenancy kernel's own service functions (the same
 * records the tenancy routes write), and calls driven through the real gateway.
 */

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
  const email = `${label}-${randomUUID().slice(0, 8)}@calling.test`;
  const subject = subjectFor(email);
  const userId = await findOrCreateUser(subject, email);
  const token = await tokenFor(email);
  return { email, token, userId, principal: { kind: 'user', userId, email, subject } };
}

/** An organisation with its owner and Default workspace; `paid` puts it on an active Growth subscription. */
export async function newTenant(options: { paid?: boolean } = {}): Promise<Tenant> {
  const owner = await newUser('owner');
  const { organisationId, workspaceId } = await createOrganisation(owner.principal, {
    name: `Org ${owner.email}`,
  });
  if (options.paid) {
    await setPlan(organisationId, 'growth', 'active');
    await setBalance(organisationId, 64_000 * 60); // the Growth plan's 64,000 credits, in units
  }
  return { owner, organisationId, workspaceId };
}

export async function setPlan(
  organisationId: string,
  plan: 'free' | 'starter' | 'growth' | 'scale',
  status: 'none' | 'active' | 'past_due' | 'canceled',
) {
  await BillingAccountEntity.patch({ organisationId }).set({ plan, subscriptionStatus: status }).go();
}

export async function setBalance(organisationId: string, balanceUnits: number) {
  await BillingAccountEntity.patch({ organisationId }).set({ balanceUnits }).go();
}

export async function setConcurrencyLimit(workspaceId: string, concurrentCallLimit: number) {
  await WorkspaceEntity.patch({ workspaceId }).set({ concurrentCallLimit }).go();
}

export async function workspaceRecord(workspaceId: string) {
  return (await WorkspaceEntity.get({ workspaceId }).go({ consistent: true })).data;
}

/** A regular organisation member with a workspace role. */
export async function addMember(
  tenant: Tenant,
  role: 'admin' | 'member' | 'viewer',
  organisationRole: 'regular' | 'admin' = 'regular',
): Promise<User> {
  const user = await newUser(role);
  const now = new Date().toISOString();
  await OrgMemberEntity.create({
    organisationId: tenant.organisationId,
    userId: user.userId,
    email: user.email,
    role: organisationRole,
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

/** An API key bound to the tenant's workspace (`vak_<key id>_<secret>`). */
export async function apiKey(
  tenant: Tenant,
  scopes: ApiKeyScope[] = ['start_call'],
): Promise<{ key: string; keyId: string }> {
  const keyId = newId('apiKey');
  const secret = newSecret();
  await ApiKeyEntity.create({
    keyId,
    workspaceId: tenant.workspaceId,
    organisationId: tenant.organisationId,
    name: 'calling tests',
    scopes,
    secretHash: hashSecret(secret),
    secretHint: secretHint(secret),
    createdBy: tenant.owner.userId,
    createdAt: new Date().toISOString(),
  }).go();
  return { key: formatApiKey(keyId, secret), keyId };
}

export const ws = (tenant: Tenant) => `/api/v1/workspaces/${tenant.workspaceId}`;

/** Creates an agent through the API (as the owner). */
export async function createAgent(tenant: Tenant, body: Record<string, unknown> = {}): Promise<Json> {
  const res = await api('POST', `${ws(tenant)}/agents`, {
    token: tenant.owner.token,
    body: {
      name: 'Sales agent',
      prompt: 'You are a friendly agent for {{agency}}.',
      greeting: 'Hi {{name}}!',
      ...body,
    },
  });
  if (res.status !== 201) throw new Error(`create agent: ${res.status} ${res.text}`);
  return res.body;
}

/** Buys a number (the tenant must be on a paid plan) and connects it to the agent. */
export async function numberFor(tenant: Tenant, agentId: string): Promise<Json> {
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
  return connected.body;
}

/** A paid tenant with an agent that has a number: ready to call. */
export async function readyToCall(agentBody: Record<string, unknown> = {}) {
  const tenant = await newTenant({ paid: true });
  const agent = await createAgent(tenant, agentBody);
  const number = await numberFor(tenant, agent.id);
  return { tenant, agent, number };
}

/** Polls the call detail until `done` holds (default: ended and reported to the post-call pipeline). */
export async function waitForCall(
  tenant: Tenant,
  callId: string,
  done: (call: Json) => boolean = (call) => ['completed', 'failed'].includes(call.status),
  timeoutMs = 20_000,
): Promise<Json> {
  let last: Json;
  return waitFor(
    async () => {
      const res = await api('GET', `${ws(tenant)}/calls/${callId}`, { token: tenant.owner.token });
      last = res.body;
      return res.status === 200 && done(res.body) ? (res.body as Json) : undefined;
    },
    { what: () => `call ${callId} to get there; last seen: ${JSON.stringify(last)}`, timeoutMs },
  );
}

export const TEST_NUMBERS = {
  answered: '+61491570156',
  busy: '+61491570110',
  noAnswer: '+61491570111',
  failed: '+61491570112',
  long: '+61491570113',
  duplicated: '+61491570114',
  /** The simulator's addition: answered, then the provider never reports the end. */
  silent: '+61491570115',
} as const;
