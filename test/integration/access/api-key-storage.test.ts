import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createOrganisation } from '../../../functions/billing/organisations.js';
import { requireWorkspace } from '../../../functions/access/workspace-access.js';
import { authenticateBearer } from '../../../functions/platform/auth/authenticate-bearer.js';
import { ApiKeyEntity } from '../../../functions/platform/auth/entities.js';
import type { UserPrincipal } from '../../../functions/platform/auth/principal.js';
import { newId } from '../../../functions/platform/ids.js';
import { docClient, tableName } from '../../../functions/platform/table.js';
import { createApiKey, revokeApiKey, rotateApiKey } from '../../../functions/developer/api-keys.js';
import { api } from '../../helpers/http.js';
import { tokenFor } from '../../helpers/tokens.js';

/** Every item of the local table, every attribute (the table DynamoDB Local holds for this run). */
async function scanAll(): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await docClient().send(
      new ScanCommand({ TableName: tableName(), ExclusiveStartKey: start }),
    );
    items.push(...((page.Items ?? []) as Record<string, unknown>[]));
    start = page.LastEvaluatedKey as Record<string, unknown> | undefined;
  } while (start);
  return items;
}

/** Every string anywhere in an item (nested maps and lists included). */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

const secretOf = (key: string) => /^vak_key_[0-9A-Z]{26}_(.+)$/.exec(key)![1];
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('API keys at rest', () => {
  it('the table holds no plaintext secret — only its hash — for keys made by the seed service and by HTTP, before and after rotation', async () => {
    // The CLI seed's path: the service, called directly.
    const owner: UserPrincipal = {
      kind: 'user',
      userId: newId('user'),
      email: 'seed-owner@example.com',
      subject: 'seed-subject',
    };
    const { organisationId, workspaceId } = await createOrganisation(owner, { name: 'Seeded' });
    const seeded = await createApiKey({
      workspaceId,
      organisationId,
      name: 'seed',
      scopes: ['start_call', 'workspace:read'],
      createdBy: owner.userId,
    });
    expect(seeded.key).toMatch(/^vak_key_[0-9A-Z]{26}_[A-Za-z0-9_-]{43}$/);
    const principal = await authenticateBearer(`Bearer ${seeded.key}`);
    expect(principal).toEqual({
      kind: 'api_key',
      keyId: seeded.apiKey.keyId,
      workspaceId,
      organisationId,
      scopes: ['start_call', 'workspace:read'],
    });

    // And the HTTP path.
    const email = 'http-key-owner@example.com';
    const token = await tokenFor(email);
    const org = await api('POST', '/api/v1/organisations', { token, body: { name: 'Via HTTP' } });
    const created = await api('POST', `/api/v1/workspaces/${org.body.default_workspace_id}/api-keys`, {
      token,
      body: { name: 'http', scopes: ['workspace:read'] },
    });
    expect(created.status).toBe(201);

    // Rotate the seeded key: its old and new secrets must both be absent.
    const access = await requireWorkspace(owner, workspaceId, 'api_keys:manage');
    const rotated = await rotateApiKey(access, seeded.apiKey.keyId);
    await expect(authenticateBearer(`Bearer ${seeded.key}`)).rejects.toMatchObject({ status: 401 });
    expect((await authenticateBearer(`Bearer ${rotated.key}`)).kind).toBe('api_key');

    const secrets = [secretOf(seeded.key), secretOf(rotated.key), secretOf(created.body.key)];
    const items = await scanAll();
    const everything = items.flatMap(strings);
    for (const secret of secrets) {
      expect(everything.some((s) => s.includes(secret))).toBe(false);
      expect(everything.some((s) => s.includes(secret.slice(0, 20)))).toBe(false);
    }
    for (const key of [seeded.key, rotated.key, created.body.key])
      expect(everything.some((s) => s.includes(key))).toBe(false);
    // The scan did see the key records: their hashes are there.
    const keyItems = items.filter((item) => String(item.pk).startsWith('APIKEY#'));
    expect(keyItems.map((item) => item.secretHash)).toEqual(
      expect.arrayContaining([sha256(secretOf(rotated.key)), sha256(secretOf(created.body.key))]),
    );
    expect(keyItems.map((item) => item.secretHash)).not.toContain(sha256(secretOf(seeded.key)));

    // Revoked: 401 at once, through the kernel's authentication step.
    await revokeApiKey(access, seeded.apiKey.keyId);
    await expect(authenticateBearer(`Bearer ${rotated.key}`)).rejects.toMatchObject({
      status: 401,
      message: 'Unauthorized',
    });
  });

  it('records last_used_at before authentication returns (nothing left pending when Lambda freezes)', async () => {
    const owner: UserPrincipal = {
      kind: 'user',
      userId: newId('user'),
      email: 'last-used@example.com',
      subject: 'last-used-subject',
    };
    const { organisationId, workspaceId } = await createOrganisation(owner, { name: 'Last used' });
    const { key, apiKey } = await createApiKey({
      workspaceId,
      organisationId,
      name: 'used',
      scopes: ['workspace:read'],
      createdBy: owner.userId,
    });
    await authenticateBearer(`Bearer ${key}`);
    const { data } = await ApiKeyEntity.get({ keyId: apiKey.keyId }).go();
    expect(data?.lastUsedAt).toEqual(expect.any(String));
  });
});
