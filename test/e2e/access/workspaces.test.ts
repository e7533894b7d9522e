import { describe, expect, it } from '@jest/globals';
import { api } from '../../helpers/http.js';
import { organisation, UNKNOWN, workspace } from './fixtures.js';

describe('workspaces and their settings (HTTP, local stack)', () => {
  it('create with a timezone; settings: name, timezone, hot-reply alert recipients, concurrent_call_limit', async () => {
    const org = await organisation('settings');
    const created = await api('POST', `/api/v1/organisations/${org.organisationId}/workspaces`, {
      token: org.owner.token,
      body: { name: 'Melbourne', timezone: 'Australia/Melbourne' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      workspace_id: expect.stringMatching(/^ws_/),
      organisation_id: org.organisationId,
      name: 'Melbourne',
      timezone: 'Australia/Melbourne',
      hot_reply_alert_recipients: [],
      concurrent_call_limit: 10,
      role: 'admin',
    });
    const id = created.body.workspace_id;
    expect(created.body.id).toBe(id);
    const patched = await api('PATCH', `/api/v1/workspaces/${id}`, {
      token: org.owner.token,
      body: {
        name: 'Melbourne CBD',
        timezone: 'Australia/Sydney',
        hot_reply_alert_recipients: ['Agent@Example.com', '+61 491 570 156'],
        concurrent_call_limit: 1000,
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'Melbourne CBD',
      timezone: 'Australia/Sydney',
      hot_reply_alert_recipients: ['agent@example.com', '+61491570156'],
      concurrent_call_limit: 1000,
      updated_at: expect.any(String),
    });
    expect((await api('GET', `/api/v1/workspaces/${id}`, { token: org.owner.token })).body).toEqual(
      patched.body,
    );
  });

  it.each([
    ['concurrent_call_limit 0', { concurrent_call_limit: 0 }, 'greater_than_equal'],
    ['concurrent_call_limit 1001', { concurrent_call_limit: 1001 }, 'less_than_equal'],
    ['concurrent_call_limit 2.5', { concurrent_call_limit: 2.5 }, 'int_type'],
    ['concurrent_call_limit "5"', { concurrent_call_limit: '5' }, 'float_type'],
    [
      '11 recipients',
      { hot_reply_alert_recipients: Array.from({ length: 11 }, (_, i) => `r${i}@example.com`) },
      'too_long',
    ],
    ['a bad recipient', { hot_reply_alert_recipients: ['not a recipient'] }, 'value_error'],
    [
      'duplicate recipients',
      { hot_reply_alert_recipients: ['a@example.com', 'A@example.com'] },
      'value_error',
    ],
    ['a bad timezone', { timezone: 'Mars/Olympus_Mons' }, 'value_error'],
    ['an empty name', { name: '' }, 'string_too_short'],
    ['workspace_id', { workspace_id: UNKNOWN.workspace }, 'extra_forbidden'],
    ['organisation_id', { organisation_id: UNKNOWN.organisation }, 'extra_forbidden'],
    ['active_calls', { active_calls: 0 }, 'extra_forbidden'],
  ])('a PATCH with %s is 422 and changes nothing', async (_label, body, type) => {
    const org = await organisation('bad-settings');
    const before = (await api('GET', `/api/v1/workspaces/${org.workspaceId}`, { token: org.owner.token }))
      .body;
    const refused = await api('PATCH', `/api/v1/workspaces/${org.workspaceId}`, {
      token: org.owner.token,
      body: { name: 'Changed', ...body },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail.map((d: { type: string }) => d.type)).toContain(type);
    expect(
      (await api('GET', `/api/v1/workspaces/${org.workspaceId}`, { token: org.owner.token })).body,
    ).toEqual(before);
  });

  it('exactly 10 recipients is allowed', async () => {
    const org = await organisation('ten');
    const recipients = Array.from({ length: 10 }, (_, i) => `r${i}@example.com`);
    const ok = await api('PATCH', `/api/v1/workspaces/${org.workspaceId}`, {
      token: org.owner.token,
      body: { hot_reply_alert_recipients: recipients },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.hot_reply_alert_recipients).toEqual(recipients);
  });

  it('a deleted workspace and everything in it is 404; it leaves the list', async () => {
    const org = await organisation('deleter');
    const doomed = await workspace(org, 'Doomed');
    expect((await api('DELETE', `/api/v1/workspaces/${doomed}`, { token: org.owner.token })).status).toBe(
      204,
    );
    for (const [method, path] of [
      ['GET', `/api/v1/workspaces/${doomed}`],
      ['PATCH', `/api/v1/workspaces/${doomed}`],
      ['DELETE', `/api/v1/workspaces/${doomed}`],
      ['GET', `/api/v1/workspaces/${doomed}/members`],
      ['PUT', `/api/v1/workspaces/${doomed}/members/${org.owner.userId}`],
      ['GET', `/api/v1/workspaces/${doomed}/api-keys`],
      ['POST', `/api/v1/workspaces/${doomed}/api-keys`],
    ] as const) {
      const body =
        method === 'PATCH'
          ? { name: 'x' }
          : method === 'PUT'
            ? { role: 'admin' }
            : method === 'POST'
              ? { name: 'k', scopes: ['start_call'] }
              : undefined;
      const response = await api(method, path, { token: org.owner.token, body });
      expect([method, path, response.status, response.body]).toEqual([
        method,
        path,
        404,
        { error: 'Workspace not found' },
      ]);
    }
    const list = await api('GET', `/api/v1/organisations/${org.organisationId}/workspaces`, {
      token: org.owner.token,
    });
    expect(list.body.items.map((w: { workspace_id: string }) => w.workspace_id)).toEqual([org.workspaceId]);
  });

  it('another tenant gets 404 on every workspace route and changes nothing; wrong-shaped ids are 404', async () => {
    const org = await organisation('ws-victim');
    const outsider = await organisation('ws-outsider');
    const t = outsider.owner.token;
    const w = `/api/v1/workspaces/${org.workspaceId}`;
    const before = (await api('GET', w, { token: org.owner.token })).body;
    const attempts = [
      await api('GET', w, { token: t }),
      await api('PATCH', w, { token: t, body: { name: 'Hijacked' } }),
      await api('DELETE', w, { token: t }),
      await api('GET', `${w}/members`, { token: t }),
      await api('PUT', `${w}/members/${outsider.owner.userId}`, { token: t, body: { role: 'admin' } }),
      await api('DELETE', `${w}/members/${org.owner.userId}`, { token: t }),
      await api('POST', `${w}/api-keys`, { token: t, body: { name: 'mine', scopes: ['start_call'] } }),
      await api('GET', `${w}/api-keys`, { token: t }),
      await api('DELETE', `${w}/api-keys/${UNKNOWN.apiKey}`, { token: t }),
      await api('POST', `${w}/api-keys/${UNKNOWN.apiKey}/rotate`, { token: t }),
    ];
    for (const response of attempts) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'Workspace not found' });
    }
    for (const id of [UNKNOWN.workspace, 'nope', 'ws_' + 'x'.repeat(3000)]) {
      const response = await api('GET', `/api/v1/workspaces/${id}`, { token: org.owner.token });
      expect(response.status).toBe(404);
    }
    expect((await api('GET', w, { token: org.owner.token })).body).toEqual(before);
    expect((await api('GET', `${w}/api-keys`, { token: org.owner.token })).body.items).toEqual([]);
  });
});
