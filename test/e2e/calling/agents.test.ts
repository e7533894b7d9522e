import { BillingAccountEntity } from '../../../functions/billing/entities.js';
import { newId } from '../../../functions/platform/ids.js';
import { api, type Json } from '../../helpers/http.js';
import { addMember, apiKey, newTenant, ws, type Tenant, type User } from './fixtures.js';

/** Agents: create, read, list, update, delete; settings defaults; post-call actions; roles; tenants. */

let tenant: Tenant;
let other: Tenant;
let member: User;
let viewer: User;

beforeAll(async () => {
  tenant = await newTenant();
  other = await newTenant();
  member = await addMember(tenant, 'member');
  viewer = await addMember(tenant, 'viewer');
});

const agentsPath = () => `${ws(tenant)}/agents`;

describe('create and read', () => {
  it("creates an agent with the runtime settings' defaults (docs/api.md) and reads it back", async () => {
    const res = await api('POST', agentsPath(), {
      token: member.token,
      body: { name: '  Ava  ', prompt: 'Help {{name}} book an inspection.', greeting: 'Hi {{name}}!' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      workspace_id: tenant.workspaceId,
      name: 'Ava',
      prompt: 'Help {{name}} book an inspection.',
      greeting: 'Hi {{name}}!',
      answering_calls: true,
      suspended_by_billing: false,
      phone_number: null,
      phone_number_id: null,
      settings: {
        speech_speed: 'medium',
        expressiveness: 'natural',
        ambient_noise: 'none',
        call_recording: true,
        interruptible: true,
        caller_growth_loop: false,
        timezone: 'UTC',
        specialised_terms: [],
        max_duration_seconds: 3600,
      },
      post_call_actions: [],
      created_by: member.userId,
    });
    expect(res.body.id).toMatch(/^ag_[0-9A-HJKMNP-TV-Z]{26}$/);
    const read = await api('GET', `${agentsPath()}/${res.body.id}`, { token: viewer.token });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
  });

  it('takes every setting and up to 10 post-call actions, assigning act_ ids', async () => {
    const actions = [
      { type: 'webhook', config: { url: 'https://example.com/hook' } },
      { type: 'sms_owner', enabled: false },
      ...Array.from({ length: 8 }, () => ({ type: 'email_summary', config: { to: ['team@example.com'] } })),
    ];
    const res = await api('POST', agentsPath(), {
      token: tenant.owner.token,
      body: {
        name: 'Full',
        answering_calls: false,
        settings: {
          speech_speed: 'fast',
          expressiveness: 'expressive',
          ambient_noise: 'office',
          call_recording: false,
          interruptible: false,
          caller_growth_loop: true,
          timezone: 'Australia/Sydney',
          specialised_terms: ['strata', 'auction'],
          max_duration_seconds: 600,
        },
        post_call_actions: actions,
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.settings).toEqual({
      speech_speed: 'fast',
      expressiveness: 'expressive',
      ambient_noise: 'office',
      call_recording: false,
      interruptible: false,
      caller_growth_loop: true,
      timezone: 'Australia/Sydney',
      specialised_terms: ['strata', 'auction'],
      max_duration_seconds: 600,
      conversation_memories: false,
    });
    expect(res.body.answering_calls).toBe(false);
    expect(res.body.post_call_actions).toHaveLength(10);
    expect(res.body.post_call_actions[0]).toEqual({
      id: expect.stringMatching(/^act_/),
      type: 'webhook',
      enabled: true,
      config: { url: 'https://example.com/hook' },
    });
    expect(res.body.post_call_actions[1]).toMatchObject({ type: 'sms_owner', enabled: false, config: {} });
    expect(new Set(res.body.post_call_actions.map((a: Json) => a.id)).size).toBe(10);
  });

  it('rejects bad input with 422 and creates nothing', async () => {
    const before = (await api('GET', `${agentsPath()}?limit=100`, { token: tenant.owner.token })).body.items
      .length;
    const eleven = Array.from({ length: 11 }, () => ({ type: 'sms_owner' }));
    const cases: [Json, (string | number)[]][] = [
      [{ name: 'X', post_call_actions: eleven }, ['body', 'post_call_actions']],
      [{}, ['body', 'name']],
      [{ name: '' }, ['body', 'name']],
      [{ name: 'X', settings: { speech_speed: 'warp' } }, ['body', 'settings', 'speech_speed']],
      [{ name: 'X', settings: { timezone: 'Mars/Olympus' } }, ['body', 'settings', 'timezone']],
      [{ name: 'X', settings: { max_duration_seconds: 5 } }, ['body', 'settings', 'max_duration_seconds']],
      [{ name: 'X', settings: { volume: 11 } }, ['body', 'settings', 'volume']],
      [{ name: 'X', post_call_actions: [{ type: 'fax' }] }, ['body', 'post_call_actions', 0, 'type']],
      [
        { name: 'X', post_call_actions: [{ type: 'webhook', config: {} }] },
        ['body', 'post_call_actions', 0, 'config', 'url'],
      ],
      [
        { name: 'X', post_call_actions: [{ type: 'webhook', config: { url: 'ftp://x' } }] },
        ['body', 'post_call_actions', 0, 'config', 'url'],
      ],
      [
        {
          name: 'X',
          post_call_actions: [{ type: 'webhook', config: { url: 'https://x.test', secret: 's' } }],
        },
        ['body', 'post_call_actions', 0, 'config', 'secret'],
      ],
      [
        { name: 'X', post_call_actions: [{ id: 'nope', type: 'sms_owner' }] },
        ['body', 'post_call_actions', 0, 'id'],
      ],
      [{ name: 'X', workspace_id: 'ws_x' }, ['body', 'workspace_id']],
    ];
    for (const [body, loc] of cases) {
      const res = await api('POST', agentsPath(), { token: tenant.owner.token, body });
      expect([JSON.stringify(body).slice(0, 60), res.status]).toEqual([
        JSON.stringify(body).slice(0, 60),
        422,
      ]);
      expect(res.body.detail.map((d: Json) => d.loc)).toContainEqual(loc);
    }
    const eleventh = await api('POST', agentsPath(), {
      token: tenant.owner.token,
      body: { name: 'X', post_call_actions: eleven },
    });
    expect(eleventh.body.detail).toEqual([
      {
        type: 'too_long',
        loc: ['body', 'post_call_actions'],
        msg: 'List should have at most 10 items',
        input: eleven,
      },
    ]);
    expect(
      (await api('GET', `${agentsPath()}?limit=100`, { token: tenant.owner.token })).body.items.length,
    ).toBe(before);
  });
});

describe('list, update, delete', () => {
  it('lists with cursor pages', async () => {
    const t = await newTenant();
    const made: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      made.push(
        (await api('POST', `${ws(t)}/agents`, { token: t.owner.token, body: { name: `A${i}` } })).body.id,
      );
    }
    const first = await api('GET', `${ws(t)}/agents?limit=2`, { token: t.owner.token });
    expect(first.body.items.map((a: Json) => a.id)).toEqual(made.slice(0, 2));
    const second = await api(
      'GET',
      `${ws(t)}/agents?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`,
      { token: t.owner.token },
    );
    expect(second.body.items.map((a: Json) => a.id)).toEqual(made.slice(2));
    // Another tenant's cursor is no key to this list.
    const res = await api('GET', `${agentsPath()}?cursor=${encodeURIComponent(first.body.next_cursor)}`, {
      token: tenant.owner.token,
    });
    expect(res.status).toBe(422);
  });

  it('hands out opaque cursors: no table key inside, and a changed or forged one is 422', async () => {
    const t = await newTenant();
    for (let i = 0; i < 2; i += 1)
      await api('POST', `${ws(t)}/agents`, { token: t.owner.token, body: { name: `C${i}` } });
    const first = await api('GET', `${ws(t)}/agents?limit=1`, { token: t.owner.token });
    const cursor = first.body.next_cursor as string;
    const inside = Buffer.from(cursor, 'base64url').toString('latin1');
    expect(inside).not.toMatch(/workspace|agent|pk|sk/i);
    expect(inside).not.toContain(t.workspaceId);

    const changed = Buffer.from(cursor, 'base64url');
    changed[changed.length - 1] ^= 1;
    // The start key DynamoDB would take, as an encoded ElectroDB cursor used to be.
    const forged = Buffer.from(
      JSON.stringify({ pk: `$voice#workspaceid_${t.workspaceId}`, sk: '$agent_1#agentid_' }),
    ).toString('base64url');
    for (const bad of [changed.toString('base64url'), forged, cursor.slice(0, -2)]) {
      const res = await api('GET', `${ws(t)}/agents?limit=1&cursor=${encodeURIComponent(bad)}`, {
        token: t.owner.token,
      });
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['query', 'cursor'] })]);
    }
    const next = await api('GET', `${ws(t)}/agents?limit=1&cursor=${encodeURIComponent(cursor)}`, {
      token: t.owner.token,
    });
    expect(next.status).toBe(200);
    expect(next.body.items).toHaveLength(1);
  });

  it('updates fields, merges settings, replaces post-call actions keeping their ids', async () => {
    const created = (
      await api('POST', agentsPath(), {
        token: tenant.owner.token,
        body: {
          name: 'Edit me',
          settings: { speech_speed: 'slow', specialised_terms: ['a'] },
          post_call_actions: [{ type: 'sms_caller' }],
        },
      })
    ).body;
    const kept = created.post_call_actions[0];
    const res = await api('PATCH', `${agentsPath()}/${created.id}`, {
      token: member.token,
      body: {
        greeting: 'Hello!',
        answering_calls: false,
        settings: { interruptible: false },
        post_call_actions: [kept, { type: 'webhook', config: { url: 'http://127.0.0.1:9/x' } }],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Edit me', greeting: 'Hello!', answering_calls: false });
    expect(res.body.settings).toMatchObject({
      speech_speed: 'slow',
      interruptible: false,
      specialised_terms: ['a'],
      max_duration_seconds: 3600,
    });
    expect(res.body.post_call_actions[0]).toEqual(kept);
    expect(res.body.post_call_actions[1].id).toMatch(/^act_/);
    expect(res.body.updated_at).toEqual(expect.any(String));
    const bad = await api('PATCH', `${agentsPath()}/${created.id}`, {
      token: member.token,
      body: { post_call_actions: Array(11).fill({ type: 'sms_owner' }) },
    });
    expect(bad.status).toBe(422);
    expect(
      (await api('GET', `${agentsPath()}/${created.id}`, { token: member.token })).body.post_call_actions,
    ).toHaveLength(2);
  });

  it('deletes an agent (204), then it is 404', async () => {
    const created = (await api('POST', agentsPath(), { token: member.token, body: { name: 'Bye' } })).body;
    const del = await api('DELETE', `${agentsPath()}/${created.id}`, { token: member.token });
    expect(del.status).toBe(204);
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await api(method, `${agentsPath()}/${created.id}`, { token: member.token, body });
      expect([method, res.status, res.body]).toEqual([method, 404, { error: 'Agent not found' }]);
    }
  });
});

describe('roles and tenants', () => {
  it('viewers may read but not write', async () => {
    const created = (await api('POST', agentsPath(), { token: member.token, body: { name: 'Read only' } }))
      .body;
    expect((await api('GET', agentsPath(), { token: viewer.token })).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', agentsPath(), { name: 'v' }],
      ['PATCH', `${agentsPath()}/${created.id}`, { name: 'v' }],
      ['DELETE', `${agentsPath()}/${created.id}`, undefined],
    ] as const) {
      const res = await api(method, path, { token: viewer.token, body });
      expect([method, res.status, res.body]).toEqual([
        method,
        403,
        { error: 'Viewers have read-only access' },
      ]);
    }
    expect((await api('GET', `${agentsPath()}/${created.id}`, { token: viewer.token })).body.name).toBe(
      'Read only',
    );
  });

  it('another tenant gets 404 on every agent route; its agents are not found here', async () => {
    const mine = (await api('POST', agentsPath(), { token: member.token, body: { name: 'Mine' } })).body;
    const theirs = (
      await api('POST', `${ws(other)}/agents`, { token: other.owner.token, body: { name: 'Theirs' } })
    ).body;
    for (const [method, path, body] of [
      ['GET', agentsPath(), undefined],
      ['POST', agentsPath(), { name: 'x' }],
      ['GET', `${agentsPath()}/${mine.id}`, undefined],
      ['PATCH', `${agentsPath()}/${mine.id}`, { name: 'x' }],
      ['DELETE', `${agentsPath()}/${mine.id}`, undefined],
    ] as const) {
      const res = await api(method, path, { token: other.owner.token, body });
      expect([method, path, res.status, res.body]).toEqual([
        method,
        path,
        404,
        { error: 'Workspace not found' },
      ]);
    }
    for (const agentId of [theirs.id, newId('agent'), 'garbage']) {
      const res = await api('GET', `${agentsPath()}/${agentId}`, { token: member.token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Agent not found' });
    }
    expect((await api('GET', `${agentsPath()}/${mine.id}`, { token: member.token })).body.name).toBe('Mine');
  });

  it('API keys: agents:read reads, agents:write writes, keys of other workspaces are refused', async () => {
    const { key: reader } = await apiKey(tenant, ['agents:read']);
    const { key: writer } = await apiKey(tenant, ['agents:write']);
    const { key: theirs } = await apiKey(other, ['agents:read', 'agents:write']);
    expect((await api('GET', agentsPath(), { token: reader })).status).toBe(200);
    expect((await api('POST', agentsPath(), { token: reader, body: { name: 'k' } })).body).toEqual({
      error: 'API key lacks required scope: agents:write',
    });
    const made = await api('POST', agentsPath(), { token: writer, body: { name: 'k' } });
    expect(made.status).toBe(201);
    expect(made.body.created_by).toMatch(/^key_/);
    expect((await api('GET', agentsPath(), { token: theirs })).body).toEqual({
      error: 'API key not authorized for this workspace',
    });
  });
});

describe("billing's suspension (a Free plan out of credits switches agents off and on)", () => {
  /** Billing's one record of the suspension; agents read it when they show an agent. */
  const suspend = (tn: Tenant, on: boolean) =>
    BillingAccountEntity.patch({ organisationId: tn.organisationId }).set({ agentsSuspended: on }).go();

  it('turns every agent of the organisation off, and back on only those the user left on', async () => {
    const t = await newTenant();
    const on = (await api('POST', `${ws(t)}/agents`, { token: t.owner.token, body: { name: 'On' } })).body;
    const off = (
      await api('POST', `${ws(t)}/agents`, {
        token: t.owner.token,
        body: { name: 'Off', answering_calls: false },
      })
    ).body;
    const untouched = (
      await api('POST', `${ws(other)}/agents`, { token: other.owner.token, body: { name: 'Elsewhere' } })
    ).body;
    await suspend(t, true);
    const read = async (tn: Tenant, id: string) =>
      (await api('GET', `${ws(tn)}/agents/${id}`, { token: tn.owner.token })).body;
    expect(await read(t, on.id)).toMatchObject({ answering_calls: false, suspended_by_billing: true });
    expect((await read(t, off.id)).answering_calls).toBe(false);
    expect(await read(other, untouched.id)).toMatchObject({
      answering_calls: true,
      suspended_by_billing: false,
    });
    await suspend(t, false);
    expect(await read(t, on.id)).toMatchObject({ answering_calls: true, suspended_by_billing: false });
    expect((await read(t, off.id)).answering_calls).toBe(false);
  });
});
