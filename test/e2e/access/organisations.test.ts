import { describe, expect, it } from '@jest/globals';
import { api } from '../../helpers/http.js';
import { member, organisation, user, UNKNOWN } from './fixtures.js';

describe('organisations (HTTP, local stack, real tokens)', () => {
  it('creating one makes the caller its single owner, with a Default workspace and the Free plan with 500 credits', async () => {
    const org = await organisation('creator', 'Acme Realty');
    expect(org.body).toMatchObject({
      name: 'Acme Realty',
      owner_user_id: org.owner.userId,
      role: 'owner',
      plan: 'free',
      credit_balance: 500,
    });
    expect(org.organisationId).toMatch(/^org_[0-9A-Z]{26}$/);
    expect(org.body.id).toBe(org.body.organisation_id);

    const members = await api('GET', `/api/v1/organisations/${org.organisationId}/members`, {
      token: org.owner.token,
    });
    expect(members.status).toBe(200);
    expect(members.body.items).toEqual([
      {
        user_id: org.owner.userId,
        email: org.owner.email,
        role: 'owner',
        status: 'accepted',
        invitation_id: null,
        joined_at: expect.any(String),
      },
    ]);

    const workspaces = await api('GET', `/api/v1/organisations/${org.organisationId}/workspaces`, {
      token: org.owner.token,
    });
    expect(workspaces.body.items).toEqual([
      expect.objectContaining({
        workspace_id: org.workspaceId,
        name: 'Default',
        role: 'admin',
        concurrent_call_limit: 10,
        timezone: 'UTC',
      }),
    ]);

    const got = await api('GET', `/api/v1/organisations/${org.organisationId}`, { token: org.owner.token });
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(org.organisationId);
    expect(got.body).toMatchObject({
      organisation_id: org.organisationId,
      plan: 'free',
      credit_balance: 500,
      role: 'owner',
    });
  });

  it('lists the caller’s organisations and shows them on /me', async () => {
    const first = await organisation('multi');
    const second = await api('POST', '/api/v1/organisations', {
      token: first.owner.token,
      body: { name: 'Second' },
    });
    expect(second.status).toBe(201);
    const mine = await api('GET', '/api/v1/organisations', { token: first.owner.token });
    expect(mine.status).toBe(200);
    expect(mine.body.items.map((o: { organisation_id: string }) => o.organisation_id).sort()).toEqual(
      [first.organisationId, second.body.organisation_id].sort(),
    );
    for (const item of mine.body.items) expect(item.id).toBe(item.organisation_id);
    const page = await api('GET', '/api/v1/organisations?limit=1', { token: first.owner.token });
    expect(page.body.items).toHaveLength(1);
    const rest = await api('GET', `/api/v1/organisations?limit=1&cursor=${page.body.next_cursor}`, {
      token: first.owner.token,
    });
    expect(rest.body.items).toHaveLength(1);
    expect(rest.body.next_cursor).toBeNull();
    expect(rest.body.items[0].organisation_id).not.toBe(page.body.items[0].organisation_id);

    const me = await api('GET', '/api/v1/me', { token: first.owner.token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ user_id: first.owner.userId, email: first.owner.email, name: null });
    expect(me.body.id).toBe(first.owner.userId);
    expect(me.body.organisations).toHaveLength(2);
    expect(me.body.organisations).toContainEqual({
      organisation_id: first.organisationId,
      name: 'Org multi',
      role: 'owner',
    });
  });

  it.each([
    ['limit=0', 'greater_than_equal', 'limit'],
    ['limit=101', 'less_than_equal', 'limit'],
    ['limit=ten', 'float_type', 'limit'],
    ['cursor=%40%40%40', 'value_error', 'cursor'],
  ])('a list query with %s is 422 on query.%s', async (query, type, field) => {
    const someone = await user('badquery');
    const response = await api('GET', `/api/v1/organisations?${query}`, { token: someone.token });
    expect(response.status).toBe(422);
    expect(response.body.detail[0]).toMatchObject({ type, loc: ['query', field] });
  });

  it('/me: the name can be changed, the email cannot (422, nothing changed)', async () => {
    const someone = await user('profile');
    const renamed = await api('PATCH', '/api/v1/me', { token: someone.token, body: { name: 'Dana Scully' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('Dana Scully');
    const refused = await api('PATCH', '/api/v1/me', {
      token: someone.token,
      body: { name: 'X', email: 'other@example.com' },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([
      {
        type: 'extra_forbidden',
        loc: ['body', 'email'],
        msg: 'Extra inputs are not permitted',
        input: 'other@example.com',
      },
    ]);
    const me = await api('GET', '/api/v1/me', { token: someone.token });
    expect(me.body).toMatchObject({ name: 'Dana Scully', email: someone.email });
  });

  it.each([
    ['organisation_id', 'org_01JZZZZZZZZZZZZZZZZZZZZZZZ'],
    ['owner', 'usr_01JZZZZZZZZZZZZZZZZZZZZZZZ'],
    ['plan', 'scale'],
    ['credits', 1000000],
    ['role', 'owner'],
  ])('a create body that sets %s is 422 extra_forbidden and creates nothing', async (field, value) => {
    const someone = await user(`strict-${field}`);
    const refused = await api('POST', '/api/v1/organisations', {
      token: someone.token,
      body: { name: 'Sneaky', [field]: value },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toContainEqual({
      type: 'extra_forbidden',
      loc: ['body', field],
      msg: 'Extra inputs are not permitted',
      input: value,
    });
    const mine = await api('GET', '/api/v1/organisations', { token: someone.token });
    expect(mine.body.items).toEqual([]);
  });

  it('bad create bodies: missing name, empty name, not JSON → 422', async () => {
    const someone = await user('badbody');
    const missing = await api('POST', '/api/v1/organisations', { token: someone.token, body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({
      type: 'missing',
      loc: ['body', 'name'],
      msg: 'Field required',
    });
    const empty = await api('POST', '/api/v1/organisations', { token: someone.token, body: { name: '  ' } });
    expect(empty.status).toBe(422);
    expect(empty.body.detail[0]).toMatchObject({ type: 'string_too_short', loc: ['body', 'name'] });
    const notJson = await api('POST', '/api/v1/organisations', {
      token: someone.token,
      rawBody: '{name:',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(422);
    expect(notJson.body.detail[0].type).toBe('json_invalid');
    expect((await api('GET', '/api/v1/organisations', { token: someone.token })).body.items).toEqual([]);
  });

  it('update: owner and admin rename; a regular member is 403; strict body; nothing changes when refused', async () => {
    const org = await organisation('rename');
    const admin = await member(org, 'rename-admin', 'admin');
    const regular = await member(org, 'rename-regular', 'regular', [
      { workspace_id: org.workspaceId, role: 'admin' },
    ]);
    const path = `/api/v1/organisations/${org.organisationId}`;

    expect((await api('PATCH', path, { token: org.owner.token, body: { name: 'By owner' } })).body.name).toBe(
      'By owner',
    );
    const byAdmin = await api('PATCH', path, { token: admin.token, body: { name: 'By admin' } });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body).toMatchObject({ name: 'By admin', role: 'admin' });

    const byRegular = await api('PATCH', path, { token: regular.token, body: { name: 'By regular' } });
    expect(byRegular.status).toBe(403);
    expect(byRegular.body).toEqual({
      error: 'Only organisation owners and admins can change the organisation',
    });
    const sneaky = await api('PATCH', path, {
      token: org.owner.token,
      body: { name: 'X', plan: 'scale', credits: 99999, owner: admin.userId },
    });
    expect(sneaky.status).toBe(422);
    expect(sneaky.body.detail.map((d: { loc: string[] }) => d.loc[1]).sort()).toEqual([
      'credits',
      'owner',
      'plan',
    ]);

    const got = await api('GET', path, { token: regular.token });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      name: 'By admin',
      plan: 'free',
      credit_balance: 500,
      owner_user_id: org.owner.userId,
      role: 'regular',
    });
  });

  it('another tenant sees 404 on every organisation route and changes nothing', async () => {
    const org = await organisation('victim', 'Victim Org');
    const outsider = await organisation('outsider');
    const t = outsider.owner.token;
    const base = `/api/v1/organisations/${org.organisationId}`;
    const attempts = [
      await api('GET', base, { token: t }),
      await api('PATCH', base, { token: t, body: { name: 'Hijacked' } }),
      await api('GET', `${base}/members`, { token: t }),
      await api('POST', `${base}/invitations`, { token: t, body: { email: 'x@example.com', role: 'admin' } }),
      await api('POST', `${base}/invitations/${UNKNOWN.invitation}/resend`, { token: t }),
      await api('PATCH', `${base}/members/${org.owner.userId}`, { token: t, body: { role: 'regular' } }),
      await api('DELETE', `${base}/members/${org.owner.userId}`, { token: t }),
      await api('POST', `${base}/workspaces`, { token: t, body: { name: 'Mine now' } }),
      await api('GET', `${base}/workspaces`, { token: t }),
    ];
    for (const response of attempts) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'Organisation not found' });
    }
    for (const id of [UNKNOWN.organisation, 'not-an-id', 'org_lowercase']) {
      expect((await api('GET', `/api/v1/organisations/${id}`, { token: t })).status).toBe(404);
    }
    const got = await api('GET', base, { token: org.owner.token });
    expect(got.body.name).toBe('Victim Org');
    const members = await api('GET', `${base}/members`, { token: org.owner.token });
    expect(members.body.items).toHaveLength(1);
    const workspaces = await api('GET', `${base}/workspaces`, { token: org.owner.token });
    expect(workspaces.body.items).toHaveLength(1);
  });
});
