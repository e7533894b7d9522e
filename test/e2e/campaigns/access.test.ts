import { api } from '../../helpers/http.js';
import {
  addMember,
  ALWAYS_OPEN,
  apiKey,
  campaignPath,
  campaignsPath,
  createAgent,
  createCampaign,
  csvOf,
  newTenant,
  patchCampaign,
  progress,
  readyToCall,
  setConcurrencyLimit,
  setPlan,
  uniqueMobile,
  upload,
  uploadAndWait,
  type Tenant,
  type User,
} from './fixtures.js';

/**
 * Who may do what with campaigns, the plan gate, and bad input: clear 4xx and nothing changed.
 */

let tenant: Tenant;
let agentId: string;
let other: Tenant;
let viewer: User;

beforeAll(async () => {
  const ready = await readyToCall();
  tenant = ready.tenant;
  agentId = ready.agent.id as string;
  other = (await readyToCall()).tenant;
  viewer = await addMember(tenant, 'viewer');
});

const count = async (t: Tenant) =>
  ((await api('GET', campaignsPath(t), { token: t.owner.token })).body.items as unknown[]).length;

describe('the plan gate', () => {
  test('the Free plan is refused with 402, and nothing is created', async () => {
    const free = await newTenant();
    const agent = await createAgent(free);
    const res = await api('POST', campaignsPath(free), {
      token: free.owner.token,
      body: { name: 'x', agent_id: agent.id, calling_window: ALWAYS_OPEN },
    });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ error: 'Your plan does not include batch outbound' });
    expect(await count(free)).toBe(0);
  });

  test('a downgraded organisation cannot start or upload, but still reads', async () => {
    const t = (await readyToCall()).tenant;
    const agents = await api('GET', `/api/v1/workspaces/${t.workspaceId}/agents`, { token: t.owner.token });
    const made = await createCampaign(t, { agent_id: agents.body.items[0].id });
    await setPlan(t.organisationId, 'free', 'none');
    expect((await upload(t, made.id, csvOf([['phone'], [uniqueMobile()]]))).status).toBe(402);
    expect((await patchCampaign(t, made.id, { status: 'running' })).status).toBe(402);
    expect((await api('GET', campaignPath(t, made.id), { token: t.owner.token })).status).toBe(200);
  });
});

describe('bad input: 422/409 with a clear message, nothing changed', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    [
      'a window ending before it starts',
      { calling_window: { ...ALWAYS_OPEN, start: '18:00', end: '09:00' } },
      'end',
    ],
    ['an unknown timezone', { calling_window: { ...ALWAYS_OPEN, timezone: 'Mars/Olympus' } }, 'timezone'],
    ['max_concurrency 0', { max_concurrency: 0 }, 'max_concurrency'],
    ['max_concurrency above 100', { max_concurrency: 101 }, 'max_concurrency'],
    ['max_attempts 0', { retry: { max_attempts: 0 } }, 'max_attempts'],
    ['max_attempts 6', { retry: { max_attempts: 6 } }, 'max_attempts'],
    ['delay_minutes 4', { retry: { delay_minutes: 4 } }, 'delay_minutes'],
    ['delay_minutes 1441', { retry: { delay_minutes: 1441 } }, 'delay_minutes'],
    ['retry on an unknown outcome', { retry: { on: ['voicemail'] } }, 'on'],
    ['an unknown field', { colour: 'red' }, 'colour'],
  ];
  test.each(cases)('%s', async (_, body, field) => {
    const before = await count(tenant);
    const res = await api('POST', campaignsPath(tenant), {
      token: tenant.owner.token,
      body: { name: 'Bad', agent_id: agentId, calling_window: ALWAYS_OPEN, ...body },
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body.detail)).toContain(field);
    expect(await count(tenant)).toBe(before);
  });

  test('max_concurrency above the workspace concurrent_call_limit', async () => {
    await setConcurrencyLimit(tenant.workspaceId, 4);
    try {
      const res = await api('POST', campaignsPath(tenant), {
        token: tenant.owner.token,
        body: { name: 'Too many', agent_id: agentId, max_concurrency: 5 },
      });
      expect(res.status).toBe(422);
      expect(JSON.stringify(res.body.detail)).toContain('concurrent_call_limit (4)');
    } finally {
      await setConcurrencyLimit(tenant.workspaceId, 10);
    }
  });

  test('an agent without a number and no from_phone; a from_phone that is not the agent’s', async () => {
    const bare = await createAgent(tenant, { name: 'No number' });
    const res = await api('POST', campaignsPath(tenant), {
      token: tenant.owner.token,
      body: { name: 'x', agent_id: bare.id },
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body.detail)).toContain('the agent has no phone number');
    const wrong = await api('POST', campaignsPath(tenant), {
      token: tenant.owner.token,
      body: { name: 'x', agent_id: bare.id, from_phone: '+61491570199' },
    });
    expect(wrong.status).toBe(422);
    expect(JSON.stringify(wrong.body.detail)).toContain('from_phone is not a number of this agent');
  });

  test('starting a campaign with no contacts; PATCHing a cancelled campaign; a transition that does not exist', async () => {
    const made = await createCampaign(tenant, { agent_id: agentId });
    const start = await patchCampaign(tenant, made.id, { status: 'running' });
    expect(start.status).toBe(409);
    expect(start.body.error).toBe('The campaign has no contacts to call: upload some first');
    const pause = await patchCampaign(tenant, made.id, { status: 'paused' });
    expect(pause.status).toBe(409);
    expect((await patchCampaign(tenant, made.id, { status: 'cancelled' })).body.status).toBe('cancelled');
    for (const body of [{ status: 'running' }, { name: 'renamed' }, { status: 'cancelled' }]) {
      const res = await patchCampaign(tenant, made.id, body);
      expect(res.status).toBe(409);
      expect(res.body.error).toBe('The campaign is cancelled: it can no longer change');
    }
    expect((await upload(tenant, made.id, csvOf([['phone'], [uniqueMobile()]]))).status).toBe(409);
    expect((await api('GET', campaignPath(tenant, made.id), { token: tenant.owner.token })).body.name).toBe(
      'Spring appraisals',
    );
  });

  test('an upload without a phone or contact_id column fails its job; unknown contact ids are rejected rows', async () => {
    const made = await createCampaign(tenant, { agent_id: agentId });
    const noPhone = await uploadAndWait(
      tenant,
      made.id,
      csvOf([
        ['name', 'agency'],
        ['Jo', 'Acme'],
      ]),
    );
    expect(noPhone).toMatchObject({ status: 'failed', counts: { total: 0, created: 0 } });
    expect(noPhone.failure_reason).toContain('no phone or contact_id column');
    const byId = await uploadAndWait(
      tenant,
      made.id,
      csvOf([
        ['contact_id', 'name', 'agency'],
        ['ct_01JZZZZZZZZZZZZZZZZZZZZZZZ', 'Jo', 'Acme'],
      ]),
    );
    expect(byId).toMatchObject({ status: 'completed', counts: { total: 1, rejected: 1 } });
    expect(byId.errors[0].reason).toContain('is not a contact of this workspace');
    expect(await progress(tenant, made.id)).toMatchObject({ total: 0 });
  });
});

describe('tenancy and roles', () => {
  test('another workspace’s campaign is 404 on every route; viewers read but may not write (403)', async () => {
    const made = await createCampaign(tenant, { agent_id: agentId });
    const path = campaignPath(tenant, made.id);
    const otherPath = `/api/v1/workspaces/${other.workspaceId}/campaigns/${made.id}`;
    for (const [method, suffix] of [
      ['GET', ''],
      ['PATCH', ''],
      ['DELETE', ''],
      ['GET', '/contacts'],
      ['GET', '/jobs'],
      ['GET', '/progress'],
    ] as const) {
      const res = await api(method, `${otherPath}${suffix}`, {
        token: other.owner.token,
        body: method === 'PATCH' ? { name: 'mine' } : undefined,
      });
      expect([method, suffix, res.status]).toEqual([method, suffix, 404]);
    }
    const crossUpload = await api('POST', `${otherPath}/uploads`, {
      token: other.owner.token,
      rawBody: 'phone\n+61491570156\n',
      headers: { 'content-type': 'text/csv' },
    });
    expect(crossUpload.status).toBe(404);
    // A user of the other organisation on this workspace's path: 404 (not a member).
    expect((await api('GET', path, { token: other.owner.token })).status).toBe(404);

    expect((await api('GET', path, { token: viewer.token })).status).toBe(200);
    expect((await api('GET', `${path}/progress`, { token: viewer.token })).status).toBe(200);
    for (const [method, p, body] of [
      ['POST', campaignsPath(tenant), { name: 'v', agent_id: agentId }],
      ['PATCH', path, { name: 'v' }],
      ['DELETE', path, undefined],
    ] as const) {
      const res = await api(method, p, { token: viewer.token, body });
      expect(res.status).toBe(403);
    }
    const viewerUpload = await api('POST', `${path}/uploads`, {
      token: viewer.token,
      rawBody: 'phone\n+61491570156\n',
      headers: { 'content-type': 'text/csv' },
    });
    expect(viewerUpload.status).toBe(403);
    expect((await api('GET', path, { token: tenant.owner.token })).body.name).toBe('Spring appraisals');
  });

  test('API keys need campaigns:read / campaigns:write', async () => {
    const reader = await apiKey(tenant, ['campaigns:read']);
    const writer = await apiKey(tenant, ['campaigns:write', 'campaigns:read']);
    const none = await apiKey(tenant, ['contacts:read']);
    expect((await api('GET', campaignsPath(tenant), { token: reader.key })).status).toBe(200);
    expect((await api('GET', campaignsPath(tenant), { token: none.key })).status).toBe(403);
    const refused = await api('POST', campaignsPath(tenant), {
      token: reader.key,
      body: { name: 'k', agent_id: agentId, calling_window: ALWAYS_OPEN },
    });
    expect(refused.status).toBe(403);
    const made = await createCampaign(tenant, { agent_id: agentId }, writer.key);
    expect(made.created_by).toBe(writer.keyId);
    // Another workspace's key: refused on this workspace's path, 404 for this campaign in its own.
    const otherKey = await apiKey(other, ['campaigns:read']);
    expect((await api('GET', campaignPath(tenant, made.id), { token: otherKey.key })).status).toBe(403);
    expect((await api('GET', campaignPath(other, made.id), { token: otherKey.key })).status).toBe(404);
  });
});
