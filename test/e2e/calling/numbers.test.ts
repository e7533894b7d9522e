import { PhoneClaimEntity } from '../../../functions/numbers/entities.js';
import { connectNumber, provisionNumber } from '../../../functions/numbers/service.js';
import { newId } from '../../../functions/platform/ids.js';
import { api, type Json } from '../../helpers/http.js';
import { addMember, apiKey, createAgent, newTenant, setPlan, ws, type Tenant } from './fixtures.js';

/** Phone numbers: buy (owner/admin, paid subscription), connect to at most one agent, release. */

let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  tenant = await newTenant({ paid: true });
  other = await newTenant({ paid: true });
});

const numbersPath = (t: Tenant = tenant) => `${ws(t)}/phone-numbers`;
const DRAMA = /^\+61[23]5550\d{4}$/;

describe('buying', () => {
  it('the owner buys an Australian number in the drama range, stored in E.164', async () => {
    const res = await api('POST', numbersPath(), {
      token: tenant.owner.token,
      body: { country: 'AU', area_code: '02' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      workspace_id: tenant.workspaceId,
      country: 'AU',
      agent_id: null,
      provider: 'simulator',
      created_by: tenant.owner.userId,
    });
    expect(res.body.phone_number).toMatch(/^\+6125550\d{4}$/);
    expect(res.body.id).toMatch(/^pn_/);
    const listed = await api('GET', numbersPath(), { token: tenant.owner.token });
    expect(listed.body.items.map((n: Json) => n.id)).toContain(res.body.id);
  });

  it('an organisation admin may buy; a workspace member, a viewer and an API key may not', async () => {
    const admin = await addMember(tenant, 'member', 'admin');
    const member = await addMember(tenant, 'member');
    const viewer = await addMember(tenant, 'viewer');
    const { key } = await apiKey(tenant, ['agents:write', 'start_call']);
    expect((await api('POST', numbersPath(), { token: admin.token, body: { country: 'AU' } })).status).toBe(
      201,
    );
    const before = (await api('GET', numbersPath(), { token: tenant.owner.token })).body.items.length;
    expect((await api('POST', numbersPath(), { token: member.token, body: { country: 'AU' } })).body).toEqual(
      { error: 'Only organisation owners and admins can buy phone numbers' },
    );
    expect((await api('POST', numbersPath(), { token: viewer.token, body: { country: 'AU' } })).body).toEqual(
      { error: 'Viewers have read-only access' },
    );
    expect((await api('POST', numbersPath(), { token: key, body: { country: 'AU' } })).status).toBe(403);
    expect((await api('GET', numbersPath(), { token: tenant.owner.token })).body.items.length).toBe(before);
  });

  it('needs an active paid subscription: 402 Active subscription required', async () => {
    const free = await newTenant();
    const res = await api('POST', numbersPath(free), { token: free.owner.token, body: { country: 'AU' } });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ error: 'Active subscription required' });
    await setPlan(free.organisationId, 'growth', 'past_due');
    expect(
      (await api('POST', numbersPath(free), { token: free.owner.token, body: { country: 'AU' } })).status,
    ).toBe(402);
    await setPlan(free.organisationId, 'free', 'active');
    expect(
      (await api('POST', numbersPath(free), { token: free.owner.token, body: { country: 'AU' } })).status,
    ).toBe(402);
    // The seed's entry point checks it too.
    await expect(
      provisionNumber({ workspaceId: free.workspaceId, organisationId: free.organisationId }),
    ).rejects.toThrow('Active subscription required');
    expect((await api('GET', numbersPath(free), { token: free.owner.token })).body.items).toEqual([]);
  });

  it('a number is unique across the service: buying one already held is 409', async () => {
    // The simulator offers 20,000 numbers and every test buys some: a random one may be held already
    // (409, as the rest of this test expects), so the first that is free is the one bought.
    let wanted = '';
    let first = { status: 0, body: {} as Record<string, unknown> };
    for (let tries = 0; tries < 10 && first.status !== 201; tries += 1) {
      wanted = `+6135550${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`;
      first = await api('POST', numbersPath(), {
        token: tenant.owner.token,
        body: { phone_number: wanted },
      });
      expect([201, 409]).toContain(first.status);
    }
    expect(first.status).toBe(201);
    expect(first.body.phone_number).toBe(wanted);
    for (const [t, status] of [
      [other, 409],
      [tenant, 409],
    ] as const) {
      const again = await api('POST', numbersPath(t), {
        token: t.owner.token,
        body: { phone_number: wanted },
      });
      expect(again.status).toBe(status);
      expect(again.body).toEqual({ error: 'Phone number is already in use' });
    }
    const claim = await PhoneClaimEntity.get({ phoneNumber: wanted }).go();
    expect(claim.data?.workspaceId).toBe(tenant.workspaceId);
  });

  it('rejects bad bodies with 422', async () => {
    for (const body of [
      {},
      { country: 'NZ' },
      { country: 'AU', phone_number: '+61255500001' },
      { phone_number: '12345' },
      { area_code: '2' },
      { country: 'AU', area_code: 'abc' },
      { country: 'AU', colour: 'red' },
    ]) {
      const res = await api('POST', numbersPath(), { token: tenant.owner.token, body });
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 422]);
    }
  });

  it('a number the provider cannot offer is 409', async () => {
    const res = await api('POST', numbersPath(), {
      token: tenant.owner.token,
      body: { country: 'AU', area_code: '7' },
    });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'No phone number is available for that request' });
  });
});

describe('connecting', () => {
  it('connects a number to at most one agent, moves it, disconnects it; the agent shows its number', async () => {
    const one = await createAgent(tenant, { name: 'One' });
    const two = await createAgent(tenant, { name: 'Two' });
    const bought = (await api('POST', numbersPath(), { token: tenant.owner.token, body: { country: 'AU' } }))
      .body;
    expect(bought.phone_number).toMatch(DRAMA);
    const member = await addMember(tenant, 'member');
    const connect = (agentId: string | null) =>
      api('PATCH', `${numbersPath()}/${bought.id}`, { token: member.token, body: { agent_id: agentId } });
    const agentOf = async (id: string) =>
      (await api('GET', `${ws(tenant)}/agents/${id}`, { token: member.token })).body;

    expect((await connect(one.id)).body.agent_id).toBe(one.id);
    expect((await agentOf(one.id)).phone_number).toBe(bought.phone_number);
    // Moving it to another agent disconnects the first.
    expect((await connect(two.id)).body.agent_id).toBe(two.id);
    expect((await agentOf(one.id)).phone_number).toBeNull();
    expect((await agentOf(two.id)).phone_number).toBe(bought.phone_number);
    // An agent has at most one number.
    const second = (await api('POST', numbersPath(), { token: tenant.owner.token, body: { country: 'AU' } }))
      .body;
    const clash = await api('PATCH', `${numbersPath()}/${second.id}`, {
      token: member.token,
      body: { agent_id: two.id },
    });
    expect(clash.status).toBe(409);
    expect(clash.body).toEqual({ error: 'Agent already has a phone number connected' });
    expect((await connect(null)).body.agent_id).toBeNull();
    expect((await agentOf(two.id)).phone_number).toBeNull();
    // The CLI's entry point does the same.
    await connectNumber(tenant.workspaceId, bought.id, one.id);
    expect((await agentOf(one.id)).phone_number_id).toBe(bought.id);
  });

  it('concurrent connections of one number to two agents leave it on exactly one', async () => {
    const x = await createAgent(tenant, { name: 'X' });
    const y = await createAgent(tenant, { name: 'Y' });
    const n = (await api('POST', numbersPath(), { token: tenant.owner.token, body: { country: 'AU' } })).body;
    await Promise.all([
      api('PATCH', `${numbersPath()}/${n.id}`, { token: tenant.owner.token, body: { agent_id: x.id } }),
      api('PATCH', `${numbersPath()}/${n.id}`, { token: tenant.owner.token, body: { agent_id: y.id } }),
    ]);
    const final = (await api('GET', numbersPath(), { token: tenant.owner.token })).body.items.find(
      (i: Json) => i.id === n.id,
    );
    const holders = [];
    for (const agent of [x, y]) {
      const read = (await api('GET', `${ws(tenant)}/agents/${agent.id}`, { token: tenant.owner.token })).body;
      if (read.phone_number_id === n.id) holders.push(agent.id);
    }
    expect(holders).toEqual([final.agent_id]);
  });

  it('deleting an agent leaves its number in the workspace, disconnected', async () => {
    const agent = await createAgent(tenant, { name: 'Temp' });
    const n = (await api('POST', numbersPath(), { token: tenant.owner.token, body: { country: 'AU' } })).body;
    await api('PATCH', `${numbersPath()}/${n.id}`, {
      token: tenant.owner.token,
      body: { agent_id: agent.id },
    });
    expect(
      (await api('DELETE', `${ws(tenant)}/agents/${agent.id}`, { token: tenant.owner.token })).status,
    ).toBe(204);
    const after = (await api('GET', numbersPath(), { token: tenant.owner.token })).body.items.find(
      (i: Json) => i.id === n.id,
    );
    expect(after.agent_id).toBeNull();
    expect((await PhoneClaimEntity.get({ phoneNumber: n.phone_number }).go()).data?.agentId).toBeUndefined();
  });

  it('404 for unknown numbers and agents, and across tenants; viewers are read-only', async () => {
    const mine = (await api('POST', numbersPath(), { token: tenant.owner.token, body: { country: 'AU' } }))
      .body;
    const theirAgent = await createAgent(other, { name: 'Theirs' });
    const theirNumber = (
      await api('POST', numbersPath(other), { token: other.owner.token, body: { country: 'AU' } })
    ).body;
    const patch = (numberId: string, agentId: string | null, token = tenant.owner.token) =>
      api('PATCH', `${numbersPath()}/${numberId}`, { token, body: { agent_id: agentId } });
    expect((await patch(newId('phoneNumber'), null)).body).toEqual({ error: 'Phone number not found' });
    expect((await patch('bogus', null)).body).toEqual({ error: 'Phone number not found' });
    expect((await patch(theirNumber.id, null)).body).toEqual({ error: 'Phone number not found' });
    expect((await patch(mine.id, theirAgent.id)).body).toEqual({ error: 'Agent not found' });
    expect(
      (await api('DELETE', `${numbersPath()}/${theirNumber.id}`, { token: tenant.owner.token })).body,
    ).toEqual({ error: 'Phone number not found' });
    for (const [method, body] of [
      ['GET', undefined],
      ['POST', { country: 'AU' }],
    ] as const) {
      const res = await api(method, numbersPath(), { token: other.owner.token, body });
      expect(res.body).toEqual({ error: 'Workspace not found' });
    }
    expect((await patch(mine.id, null, other.owner.token)).body).toEqual({ error: 'Workspace not found' });
    const viewer = await addMember(tenant, 'viewer');
    expect((await api('GET', numbersPath(), { token: viewer.token })).status).toBe(200);
    expect((await patch(mine.id, null, viewer.token)).body).toEqual({
      error: 'Viewers have read-only access',
    });
    // Their number is still theirs.
    expect(
      (await PhoneClaimEntity.get({ phoneNumber: theirNumber.phone_number }).go()).data?.workspaceId,
    ).toBe(other.workspaceId);
  });
});

describe('releasing', () => {
  it('releases through the provider; the number and its agent link are gone; members may not release', async () => {
    const agent = await createAgent(tenant, { name: 'Loses number' });
    const n = (await api('POST', numbersPath(), { token: tenant.owner.token, body: { country: 'AU' } })).body;
    await api('PATCH', `${numbersPath()}/${n.id}`, {
      token: tenant.owner.token,
      body: { agent_id: agent.id },
    });
    const member = await addMember(tenant, 'member');
    expect((await api('DELETE', `${numbersPath()}/${n.id}`, { token: member.token })).body).toEqual({
      error: 'Only organisation owners and admins can release phone numbers',
    });
    const res = await api('DELETE', `${numbersPath()}/${n.id}`, { token: tenant.owner.token });
    expect(res.status).toBe(204);
    expect(
      (await api('GET', numbersPath(), { token: tenant.owner.token })).body.items.map((i: Json) => i.id),
    ).not.toContain(n.id);
    expect(
      (await api('GET', `${ws(tenant)}/agents/${agent.id}`, { token: tenant.owner.token })).body.phone_number,
    ).toBeNull();
    expect((await PhoneClaimEntity.get({ phoneNumber: n.phone_number }).go()).data).toBeNull();
    expect((await api('DELETE', `${numbersPath()}/${n.id}`, { token: tenant.owner.token })).status).toBe(404);
    // The start-call of that agent now has no number to call from.
    const call = await api('POST', `${ws(tenant)}/agents/${agent.id}/start-call`, {
      token: tenant.owner.token,
      body: { to_phone: '+61491570156' },
    });
    expect(call.body).toEqual({ error: 'Number not found in workspace' });
  });
});
