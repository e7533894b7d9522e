import { decodeTime } from 'ulid';
import { newId } from '../../../functions/platform/ids.js';
import { api, type Json } from '../../helpers/http.js';
import { waitFor } from '../../helpers/wait.js';
import {
  addMember,
  apiKey,
  createAgent,
  numberFor,
  readyToCall,
  TEST_NUMBERS,
  waitForCall,
  ws,
  type Tenant,
} from './fixtures.js';

/** The call log: newest first, cursor pages, filters, detail, tenant isolation. */

let tenant: Tenant;
let other: Tenant;
let agentOne: Json;
let agentTwo: Json;
const ids: { one: string[]; two: string[]; busy?: string } = { one: [], two: [] };
let startedBetween: { from: string; to: string };

/**
 * Waits until the clock (the stack's too: one machine) has moved past the millisecond `ms`, and
 * returns the time then: the from/to filter works on the calls' ids, whose ULIDs carry their
 * creation millisecond, so a bound must not share a millisecond with a call on the other side.
 */
const clockPast = (ms: number): Promise<string> =>
  waitFor(() => (Date.now() > ms ? new Date().toISOString() : undefined), {
    what: `the clock to pass ${new Date(ms).toISOString()}`,
    intervalMs: 1,
  });
const createdMs = (callId: string) => decodeTime(callId.slice(callId.indexOf('_') + 1));

const list = (query: string, token = tenant.owner.token) =>
  api('GET', `${ws(tenant)}/calls${query}`, { token });

beforeAll(async () => {
  ({ tenant, agent: agentOne } = await readyToCall());
  agentTwo = await createAgent(tenant, { name: 'Second' });
  await numberFor(tenant, agentTwo.id);
  ({ tenant: other } = await readyToCall());
  for (let i = 0; i < 3; i += 1) {
    const res = await api('POST', `${ws(tenant)}/agents/${agentOne.id}/start-call`, {
      token: tenant.owner.token,
      body: { to_phone: TEST_NUMBERS.answered },
    });
    ids.one.push(res.body.id);
  }
  const from = await clockPast(createdMs(ids.one[ids.one.length - 1]));
  for (let i = 0; i < 2; i += 1) {
    const res = await api('POST', `${ws(tenant)}/agents/${agentTwo.id}/start-call`, {
      token: tenant.owner.token,
      body: { to_phone: TEST_NUMBERS.answered },
    });
    ids.two.push(res.body.id);
  }
  const to = new Date().toISOString();
  await clockPast(Date.parse(to));
  startedBetween = { from, to };
  const busy = await api('POST', `${ws(tenant)}/agents/${agentOne.id}/start-call`, {
    token: tenant.owner.token,
    body: { to_phone: TEST_NUMBERS.busy },
  });
  ids.busy = busy.body.id;
  for (const id of [...ids.one, ...ids.two, ids.busy!]) await waitForCall(tenant, id);
});

describe('GET /calls', () => {
  it('lists newest first', async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    expect(res.body.items.map((c: Json) => c.id)).toEqual([
      ids.busy,
      ...ids.two.slice().reverse(),
      ...ids.one.slice().reverse(),
    ]);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.items[0]).toMatchObject({
      status: 'failed',
      end_reason: 'busy',
      agent_id: agentOne.id,
      direction: 'outbound',
    });
    expect(res.body.items[0].transcript).toBeUndefined(); // the list is a summary
  });

  it('pages with a cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: Json = await list(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.items.map((c: Json) => c.id));
      cursor = res.body.next_cursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(seen).toEqual([ids.busy, ...ids.two.slice().reverse(), ...ids.one.slice().reverse()]);
  });

  it('filters by status, agent, direction and dates', async () => {
    expect((await list('?status=failed')).body.items.map((c: Json) => c.id)).toEqual([ids.busy]);
    expect((await list('?status=completed')).body.items.length).toBe(5);
    expect((await list('?status=inprogress')).body.items).toEqual([]);
    expect((await list(`?agent_id=${agentTwo.id}`)).body.items.map((c: Json) => c.id).sort()).toEqual(
      ids.two.slice().sort(),
    );
    expect((await list(`?agent_id=${agentOne.id}&status=completed`)).body.items.length).toBe(3);
    expect((await list('?direction=inbound')).body.items).toEqual([]);
    expect((await list('?direction=outbound')).body.items.length).toBe(6);
    const between = await list(
      `?from=${encodeURIComponent(startedBetween.from)}&to=${encodeURIComponent(startedBetween.to)}`,
    );
    expect(between.body.items.map((c: Json) => c.id).sort()).toEqual(ids.two.slice().sort());
    const today = new Date().toISOString().slice(0, 10);
    expect((await list(`?from=${today}&to=${today}`)).body.items.length).toBe(6);
    expect((await list('?to=2000-01-01')).body.items).toEqual([]);
    expect((await list(`?agent_id=${newId('agent')}`)).body.items).toEqual([]);
  });

  it('rejects bad filters and cursors with 422', async () => {
    for (const query of [
      '?status=ringing',
      '?direction=sideways',
      '?from=yesterday',
      '?limit=0',
      '?limit=101',
      '?cursor=%%%',
      '?cursor=eyJwayI6Ik9USEVSIn0',
      '?colour=red',
    ]) {
      const res = await list(query);
      expect([query, res.status]).toEqual([query, 422]);
      expect(res.body.detail[0].loc[0]).toBe('query');
    }
  });

  it('viewers and read-scoped API keys may read; other tenants get 404', async () => {
    const viewer = await addMember(tenant, 'viewer');
    expect((await list('', viewer.token)).status).toBe(200);
    const { key } = await apiKey(tenant, ['calls:read']);
    expect((await list('', key)).body.items.length).toBe(6);
    const { key: noScope } = await apiKey(tenant, ['start_call']);
    expect((await list('', noScope)).status).toBe(403);
    const res = await list('', other.owner.token);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Workspace not found' });
    const { key: otherKey } = await apiKey(other, ['calls:read']);
    expect((await list('', otherKey)).status).toBe(403);
  });
});

describe('GET /calls/{call_id}', () => {
  it("is 404 for unknown, malformed and other tenants' calls (also their recording and hangup)", async () => {
    const otherCall = await api('POST', `${ws(other)}/agents/${(await createAgent(other)).id}/start-call`, {
      token: other.owner.token,
      body: { to_phone: TEST_NUMBERS.answered },
    });
    // The agent above has no number: use the other tenant's ready agent instead.
    expect(otherCall.status).toBe(404);
    const otherAgents = (await api('GET', `${ws(other)}/agents`, { token: other.owner.token })).body.items;
    const withNumber = otherAgents.find((a: Json) => a.phone_number);
    const theirs = await api('POST', `${ws(other)}/agents/${withNumber.id}/start-call`, {
      token: other.owner.token,
      body: { to_phone: TEST_NUMBERS.answered },
    });
    expect(theirs.status).toBe(201);
    for (const callId of [newId('call'), 'nope', theirs.body.id]) {
      const detail = await api('GET', `${ws(tenant)}/calls/${callId}`, { token: tenant.owner.token });
      expect([callId, detail.status, detail.body]).toEqual([callId, 404, { error: 'Call not found' }]);
      const recording = await api('GET', `${ws(tenant)}/calls/${callId}/recording`, {
        token: tenant.owner.token,
      });
      expect(recording.status).toBe(404);
      const hangup = await api('POST', `${ws(tenant)}/calls/${callId}/hangup`, { token: tenant.owner.token });
      expect(hangup.status).toBe(404);
    }
    // And the other tenant cannot reach this tenant's calls through its own workspace either.
    const cross = await api('GET', `${ws(tenant)}/calls/${ids.one[0]}`, { token: other.owner.token });
    expect(cross.status).toBe(404);
    expect(cross.body).toEqual({ error: 'Workspace not found' });
  });
});
