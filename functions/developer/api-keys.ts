import { clock } from '../platform/clock.js';
import { forbidden, notFound } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { formatApiKey, hashSecret, newSecret, secretHint } from '../platform/auth/api-key-secret.js';
import { ApiKeyEntity } from '../platform/auth/entities.js';
import type { ApiKeyScope } from '../platform/auth/principal.js';
import { BillingAccountEntity } from '../billing/entities.js';
import { PLANS, type Plan } from '../billing/plans.js';
import { isConditionFailure } from '../platform/table.js';
import { paginate, type ListQuery } from '../platform/pagination.js';
import type { WorkspaceAccess } from '../access/workspace-access.js';

/**
 * API keys: bound to one workspace, carrying scopes. Only a SHA-256 hash of the secret is stored; the
 * whole key (`vak_<key_id>_<secret>`) is returned once, when it is created or rotated. Revoked keys
 * and rotated-away secrets fail authentication at once (the kernel reads the key on every use).
 */
export const API_KEY_NOT_FOUND = 'API key not found';

export type ApiKey = NonNullable<Awaited<ReturnType<ReturnType<typeof ApiKeyEntity.get>['go']>>['data']>;

/** Whether the plan includes API keys (docs/api.md: "any workspace member can manage API keys if the plan allows"). */
export const planAllowsApiKeys = (plan: Plan): boolean => plan.features.apiKeys;

export async function requireApiKeysOnPlan(organisationId: string): Promise<void> {
  const { data: account } = await BillingAccountEntity.get({ organisationId }).go();
  const plan = account ? PLANS[account.plan] : undefined;
  if (!plan || !planAllowsApiKeys(plan))
    throw forbidden(`API keys are not available on the ${plan?.name ?? 'current'} plan`);
}

/**
 * Creates a key for a workspace and returns it with its one-time full key. Used by the API route
 * (after authorisation and the plan check) and by the CLI seed.
 */
export async function createApiKey(input: {
  workspaceId: string;
  organisationId: string;
  name: string;
  scopes: ApiKeyScope[];
  createdBy: string;
}): Promise<{ apiKey: ApiKey; key: string }> {
  const keyId = newId('apiKey');
  const secret = newSecret();
  const { data } = await ApiKeyEntity.create({
    keyId,
    workspaceId: input.workspaceId,
    organisationId: input.organisationId,
    name: input.name,
    scopes: [...input.scopes],
    secretHash: hashSecret(secret),
    secretHint: secretHint(secret),
    createdBy: input.createdBy,
    createdAt: clock.now().toISOString(),
  }).go();
  return { apiKey: data as ApiKey, key: formatApiKey(keyId, secret) };
}

export async function listApiKeys(access: WorkspaceAccess, query: ListQuery) {
  const { data } = await ApiKeyEntity.query
    .byWorkspace({ workspaceId: access.workspace.workspaceId })
    .go({ pages: 'all' });
  return paginate(data as ApiKey[], (k) => k.keyId, query);
}

/** The key, if it belongs to the caller's workspace; else 404 (like an unknown key). */
async function keyOfWorkspace(access: WorkspaceAccess, keyId: string): Promise<ApiKey> {
  if (!isId('apiKey', keyId)) throw notFound(API_KEY_NOT_FOUND);
  const { data } = await ApiKeyEntity.get({ keyId }).go({ consistent: true });
  if (
    !data ||
    data.workspaceId !== access.workspace.workspaceId ||
    data.organisationId !== access.organisationId
  ) {
    throw notFound(API_KEY_NOT_FOUND);
  }
  return data;
}

/** Revokes a key: from now on it is 401. Revoking a revoked key changes nothing. */
export async function revokeApiKey(access: WorkspaceAccess, keyId: string): Promise<void> {
  const key = await keyOfWorkspace(access, keyId);
  if (key.revokedAt) return;
  try {
    await ApiKeyEntity.patch({ keyId })
      .set({ revokedAt: clock.now().toISOString() })
      .where(
        (attr, op) =>
          `${op.eq(attr.workspaceId, access.workspace.workspaceId)} AND ${op.notExists(attr.revokedAt)}`,
      )
      .go();
  } catch (error) {
    if (!isConditionFailure(error)) throw error; // revoked meanwhile: the same outcome
  }
}

/** Gives a live key a new secret; the old secret stops working at once. A revoked key is 404 here. */
export async function rotateApiKey(
  access: WorkspaceAccess,
  keyId: string,
): Promise<{ apiKey: ApiKey; key: string }> {
  const key = await keyOfWorkspace(access, keyId);
  if (key.revokedAt) throw notFound(API_KEY_NOT_FOUND);
  const secret = newSecret();
  try {
    const { data } = await ApiKeyEntity.patch({ keyId })
      .set({
        secretHash: hashSecret(secret),
        secretHint: secretHint(secret),
        rotatedAt: clock.now().toISOString(),
      })
      .where(
        (attr, op) =>
          `${op.eq(attr.workspaceId, access.workspace.workspaceId)} AND ${op.notExists(attr.revokedAt)}`,
      )
      .go({ response: 'all_new' });
    return { apiKey: data as ApiKey, key: formatApiKey(keyId, secret) };
  } catch (error) {
    if (isConditionFailure(error)) throw notFound(API_KEY_NOT_FOUND);
    throw error;
  }
}

/** The wire shape of a key: never its secret or hash. */
export function apiKeyView(key: ApiKey) {
  return {
    id: key.keyId,
    key_id: key.keyId,
    workspace_id: key.workspaceId,
    name: key.name,
    scopes: key.scopes as ApiKeyScope[],
    secret_hint: key.secretHint,
    status: key.revokedAt ? ('revoked' as const) : ('active' as const),
    created_by: key.createdBy,
    created_at: key.createdAt,
    rotated_at: key.rotatedAt ?? null,
    revoked_at: key.revokedAt ?? null,
    last_used_at: key.lastUsedAt ?? null,
  };
}
