import { beforeAll, describe, expect, it } from '@jest/globals';
import { api } from '../../helpers/http.js';
import { badTokens, tokenFor } from '../../helpers/tokens.js';
import { waitFor } from '../../helpers/wait.js';
import { organisation, uniqueEmail, workspace, type Org } from './fixtures.js';

/**
 * The one authentication step, proven through HTTP: every bad JWT is 401, API keys are bound to a
 * workspace and to scopes (403 with the documented messages), revoked and rotated-away keys are 401 at
 * once, and identity/organisation routes refuse API keys (403, saying so).
 */
const UNAUTHORIZED = { error: 'Unauthorized' };

describe('bearer JWTs', () => {
  const email = uniqueEmail('jwt');
  let cases: [string, string][] = [];
  beforeAll(async () => {
    cases = Object.entries(await badTokens(email));
  });

  it('a good access token works (the control case)', async () => {
    const response = await api('GET', '/api/v1/auth/verify', { token: await tokenFor(email) });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ user_id: expect.stringMatching(/^usr_/), email });
  });

  it('every bad token kind is 401 Unauthorized on every kind of route', async () => {
    expect(cases.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        'expired',
        'wrong issuer',
        'wrong client_id',
        'id token',
        'alg none',
        'HS256 with the public key',
        'unknown kid',
      ]),
    );
    for (const [name, token] of cases) {
      for (const [method, path] of [
        ['GET', '/api/v1/auth/verify'],
        ['POST', '/api/v1/organisations'],
        ['GET', '/api/v1/workspaces/ws_01JZZZZZZZZZZZZZZZZZZZZZZZ'],
      ] as const) {
        const response = await api(method, path, {
          token,
          body: method === 'POST' ? { name: 'x' } : undefined,
        });
        expect([name, path, response.status, response.body]).toEqual([name, path, 401, UNAUTHORIZED]);
      }
    }
    // Nothing was created by any of them.
    const mine = await api('GET', '/api/v1/organisations', { token: await tokenFor(email) });
    expect(mine.body.items).toEqual([]);
  });

  it.each([
    ['no header', undefined],
    ['an empty bearer', 'Bearer '],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['two tokens', 'Bearer a b'],
    ['a bare token', 'eyJhbGciOiJSUzI1NiJ9.e30.sig'],
  ])('%s is 401', async (_label, authorization) => {
    const response = await api('GET', '/api/v1/auth/verify', {
      headers: authorization === undefined ? {} : { authorization },
    });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(UNAUTHORIZED);
  });
});

describe('API keys as credentials', () => {
  let org: Org;
  let otherWs: string;
  let readKey: { key_id: string; key: string };
  let callOnlyKey: { key: string };

  const createKey = async (ws: string, scopes: string[], token = org.owner.token) => {
    const response = await api('POST', `/api/v1/workspaces/${ws}/api-keys`, {
      token,
      body: { name: `key ${scopes.join(',')}`, scopes },
    });
    expect(response.status).toBe(201);
    expect(response.body.id).toBe(response.body.key_id);
    return response.body;
  };
  const readWorkspace = (ws: string, key: string) => api('GET', `/api/v1/workspaces/${ws}`, { token: key });

  beforeAll(async () => {
    org = await organisation('keys');
    otherWs = await workspace(org, 'Other');
    readKey = await createKey(org.workspaceId, ['workspace:read', 'start_call']);
    callOnlyKey = await createKey(org.workspaceId, ['start_call']);
  });

  it('a key with the scope reads its own workspace', async () => {
    const response = await readWorkspace(org.workspaceId, readKey.key);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ workspace_id: org.workspaceId, name: 'Default', role: null });
  });

  it('on another workspace (even of its own organisation): 403 API key not authorized for this workspace', async () => {
    for (const ws of [
      otherWs,
      'ws_01JZZZZZZZZZZZZZZZZZZZZZZZ',
      (await organisation('keys-other')).workspaceId,
    ]) {
      const response = await readWorkspace(ws, readKey.key);
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ error: 'API key not authorized for this workspace' });
    }
  });

  it('without the scope the route needs: 403 API key lacks required scope: <scope>', async () => {
    const response = await readWorkspace(org.workspaceId, callOnlyKey.key);
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ error: 'API key lacks required scope: workspace:read' });
  });

  it('malformed, unknown or wrong-secret keys: 401', async () => {
    const [, keyId, secret] = /^vak_(key_[0-9A-Z]{26})_(.+)$/.exec(readKey.key)!;
    const wrongSecret = `vak_${keyId}_${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    for (const bad of [
      'vak_',
      'vak_nonsense',
      `vak_${keyId}`,
      `vak_${keyId}_`,
      `vak_${keyId}_short`,
      wrongSecret,
      `vak_key_01JZZZZZZZZZZZZZZZZZZZZZZZ_${secret}`,
      `${readKey.key}x`,
      readKey.key.toLowerCase(),
    ]) {
      const response = await readWorkspace(org.workspaceId, bad);
      expect([bad, response.status, response.body]).toEqual([bad, 401, UNAUTHORIZED]);
    }
  });

  it('revoked: 401 at once; revoking again changes nothing', async () => {
    const key = await createKey(org.workspaceId, ['workspace:read']);
    expect((await readWorkspace(org.workspaceId, key.key)).status).toBe(200);
    const revoked = await api('DELETE', `/api/v1/workspaces/${org.workspaceId}/api-keys/${key.key_id}`, {
      token: org.owner.token,
    });
    expect(revoked.status).toBe(204);
    expect(await readWorkspace(org.workspaceId, key.key)).toMatchObject({ status: 401, body: UNAUTHORIZED });
    expect(
      (
        await api('DELETE', `/api/v1/workspaces/${org.workspaceId}/api-keys/${key.key_id}`, {
          token: org.owner.token,
        })
      ).status,
    ).toBe(204);
    const listed = (
      await api('GET', `/api/v1/workspaces/${org.workspaceId}/api-keys?limit=100`, { token: org.owner.token })
    ).body.items;
    expect(listed.find((k: { key_id: string }) => k.key_id === key.key_id)).toMatchObject({
      status: 'revoked',
      revoked_at: expect.any(String),
    });
    // A revoked key cannot be rotated back to life.
    expect(
      (
        await api('POST', `/api/v1/workspaces/${org.workspaceId}/api-keys/${key.key_id}/rotate`, {
          token: org.owner.token,
        })
      ).status,
    ).toBe(404);
  });

  it('rotated: the old secret is 401 at once, the new one (shown once, in the 201) works', async () => {
    const key = await createKey(org.workspaceId, ['workspace:read']);
    const rotated = await api('POST', `/api/v1/workspaces/${org.workspaceId}/api-keys/${key.key_id}/rotate`, {
      token: org.owner.token,
    });
    expect(rotated.status).toBe(201);
    expect(rotated.body).toMatchObject({
      key_id: key.key_id,
      status: 'active',
      rotated_at: expect.any(String),
      scopes: ['workspace:read'],
    });
    expect(rotated.body.key).toMatch(new RegExp(`^vak_${key.key_id}_[A-Za-z0-9_-]{43}$`));
    expect(rotated.body.key).not.toBe(key.key);
    expect(await readWorkspace(org.workspaceId, key.key)).toMatchObject({ status: 401, body: UNAUTHORIZED });
    expect((await readWorkspace(org.workspaceId, rotated.body.key)).status).toBe(200);
  });

  it('the list never shows a secret; each use records last_used_at (off the request path)', async () => {
    const key = await createKey(org.workspaceId, ['workspace:read']);
    expect(key).toMatchObject({
      last_used_at: null,
      status: 'active',
      created_by: org.owner.userId,
      secret_hint: key.key.slice(-4),
    });
    expect((await readWorkspace(org.workspaceId, key.key)).status).toBe(200);
    const found = await waitFor(
      async () => {
        const list = await api('GET', `/api/v1/workspaces/${org.workspaceId}/api-keys?limit=100`, {
          token: org.owner.token,
        });
        expect(list.text).not.toContain(key.key.slice(-43));
        const listed = list.body.items.find((k: { key_id: string }) => k.key_id === key.key_id);
        expect(listed).not.toHaveProperty('key');
        return listed?.last_used_at ? (listed as Record<string, unknown>) : undefined;
      },
      { what: 'the key to show last_used_at', timeoutMs: 3_000 },
    );
    expect(found.last_used_at).toEqual(expect.any(String));
  });

  it('identity, organisation and key-management routes are for users only: an API key gets 403, told why', async () => {
    const key = readKey.key;
    for (const [method, path, body] of [
      ['GET', '/api/v1/auth/verify'],
      ['GET', '/api/v1/me'],
      ['GET', '/api/v1/organisations'],
      ['POST', '/api/v1/organisations', { name: 'By key' }],
      ['GET', `/api/v1/organisations/${org.organisationId}`],
      ['GET', `/api/v1/organisations/${org.organisationId}/members`],
      ['GET', '/api/v1/invitations'],
      ['PATCH', `/api/v1/workspaces/${org.workspaceId}`, { name: 'By key' }],
      ['GET', `/api/v1/workspaces/${org.workspaceId}/members`],
      ['POST', `/api/v1/workspaces/${org.workspaceId}/api-keys`, { name: 'k', scopes: ['start_call'] }],
      ['GET', `/api/v1/workspaces/${org.workspaceId}/api-keys`],
      ['POST', `/api/v1/workspaces/${org.workspaceId}/api-keys/${readKey.key_id}/rotate`],
      ['DELETE', `/api/v1/workspaces/${org.workspaceId}/api-keys/${readKey.key_id}`],
    ] as const) {
      const response = await api(method, path, { token: key, body });
      expect([method, path, response.status, response.body]).toEqual([
        method,
        path,
        403,
        { error: "API keys cannot be used here: this route takes a signed-in user's token" },
      ]);
    }
    // The key still works and was not rotated or revoked by any of those.
    expect((await readWorkspace(org.workspaceId, key)).status).toBe(200);
    expect(
      (await api('GET', `/api/v1/workspaces/${org.workspaceId}`, { token: org.owner.token })).body.name,
    ).toBe('Default');
  });
});

describe('API key management', () => {
  it('bad bodies are 422 and create nothing', async () => {
    const org = await organisation('keys-422');
    const path = `/api/v1/workspaces/${org.workspaceId}/api-keys`;
    for (const [body, type] of [
      [{ name: 'k', scopes: [] }, 'too_short'],
      [{ name: 'k', scopes: ['admin'] }, 'enum'],
      [{ name: 'k', scopes: ['start_call', 'start_call'] }, 'value_error'],
      [{ name: '', scopes: ['start_call'] }, 'string_too_short'],
      [{ scopes: ['start_call'] }, 'missing'],
      [{ name: 'k', scopes: ['start_call'], workspace_id: org.workspaceId }, 'extra_forbidden'],
      [{ name: 'k', scopes: ['start_call'], key: 'vak_mine' }, 'extra_forbidden'],
    ] as const) {
      const response = await api('POST', path, { token: org.owner.token, body });
      expect(response.status).toBe(422);
      expect(response.body.detail.map((d: { type: string }) => d.type)).toContain(type);
    }
    expect((await api('GET', path, { token: org.owner.token })).body.items).toEqual([]);
  });

  it('a key of another workspace cannot be revoked or rotated through this one (404) and keeps working', async () => {
    const org = await organisation('keys-cross');
    const second = await workspace(org, 'Second');
    const created = await api('POST', `/api/v1/workspaces/${second}/api-keys`, {
      token: org.owner.token,
      body: { name: 'k', scopes: ['workspace:read'] },
    });
    const keyId = created.body.key_id;
    for (const [method, suffix] of [
      ['DELETE', ''],
      ['POST', '/rotate'],
    ] as const) {
      const response = await api(method, `/api/v1/workspaces/${org.workspaceId}/api-keys/${keyId}${suffix}`, {
        token: org.owner.token,
      });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'API key not found' });
    }
    for (const id of ['key_01JZZZZZZZZZZZZZZZZZZZZZZZ', 'nope']) {
      expect(
        (
          await api('DELETE', `/api/v1/workspaces/${org.workspaceId}/api-keys/${id}`, {
            token: org.owner.token,
          })
        ).status,
      ).toBe(404);
    }
    expect((await api('GET', `/api/v1/workspaces/${second}`, { token: created.body.key })).status).toBe(200);
    // The other workspace's list does not show it.
    expect(
      (await api('GET', `/api/v1/workspaces/${org.workspaceId}/api-keys`, { token: org.owner.token })).body
        .items,
    ).toEqual([]);
  });
});
