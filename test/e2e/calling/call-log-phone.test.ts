import { readStackState } from '../../../lib/local/state.js';
import { receiveCall } from '../../../lib/tools/cli/call.js';
import { api, type Json } from '../../helpers/http.js';
import { waitForQuiescence } from '../../helpers/wait.js';
import { addMember, apiKey, readyToCall, TEST_NUMBERS, waitForCall, ws, type Tenant } from './fixtures.js';

/**
 * The other party of a call (`remote_phone`: the caller of an inbound call, the called number of an
 * outbound one) in the call log's items and detail, and the `phone` filter on it (E.164, normalised),
 * which reads the calls of that number only (calls by the other party: an index, not a filtered page).
 */

const CALLER = '+61491570177';
const OTHER_CALLED = TEST_NUMBERS.answered; // +61491570156

let tenant: Tenant;
let other: Tenant;
let number: Json;
let agentId: string;
let otherNumber: Json;
const ids: { outToCaller?: string; outToOther?: string; inbound?: string; othersOut?: string } = {};

const list = (query: string, token = tenant.owner.token, t = tenant) =>
  api('GET', `${ws(t)}/calls${query}`, { token });
const idsOf = (res: Json): string[] => res.body.items.map((c: Json) => c.id);

async function startCall(t: Tenant, agentId: string, to: string): Promise<string> {
  const res = await api('POST', `${ws(t)}/agents/${agentId}/start-call`, {
    token: t.owner.token,
    body: { to_phone: to },
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

beforeAll(async () => {
  let agent: Json;
  ({ tenant, agent, number } = await readyToCall());
  agentId = agent.id;
  let otherAgent: Json;
  ({ tenant: other, agent: otherAgent, number: otherNumber } = await readyToCall());
  // Outbound to the number that later calls in, outbound to another number, and the caller's call in.
  ids.outToCaller = await startCall(tenant, agent.id, CALLER);
  ids.outToOther = await startCall(tenant, agent.id, OTHER_CALLED);
  const received = await receiveCall(readStackState()!, { from: CALLER, to: number.phone_number });
  expect(received.accepted).toBe(true);
  ids.inbound = received.call_id;
  // Another organisation calls the same number.
  ids.othersOut = await startCall(other, otherAgent.id, CALLER);
  for (const id of [ids.outToCaller, ids.outToOther, ids.inbound!]) await waitForCall(tenant, id);
  await waitForCall(other, ids.othersOut);
  await waitForQuiescence();
});

describe('remote_phone', () => {
  it('is the caller of an inbound call and the called number of an outbound one, in the list and the detail', async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    const byId = new Map(res.body.items.map((c: Json) => [c.id, c]));
    expect(byId.get(ids.inbound)).toMatchObject({
      direction: 'inbound',
      from_phone: CALLER,
      to_phone: number.phone_number,
      remote_phone: CALLER,
    });
    expect(byId.get(ids.outToOther)).toMatchObject({
      direction: 'outbound',
      to_phone: OTHER_CALLED,
      remote_phone: OTHER_CALLED,
    });
    for (const id of [ids.inbound, ids.outToCaller, ids.outToOther]) {
      const detail = await api('GET', `${ws(tenant)}/calls/${id}`, { token: tenant.owner.token });
      expect(detail.status).toBe(200);
      expect(detail.body.remote_phone).toBe((byId.get(id) as Json).remote_phone);
    }
    expect((byId.get(ids.outToCaller) as Json).remote_phone).toBe(CALLER);
  });
});

describe('GET /calls?phone=', () => {
  it("lists the calls with that number, in and out, newest first, and only this workspace's", async () => {
    const res = await list(`?phone=${encodeURIComponent(CALLER)}`);
    expect(res.status).toBe(200);
    expect(idsOf(res)).toEqual([ids.inbound, ids.outToCaller]);
    expect(idsOf(await list(`?phone=${encodeURIComponent(OTHER_CALLED)}`))).toEqual([ids.outToOther]);
    // The other organisation sees its own call to the number, never ours.
    expect(idsOf(await list(`?phone=${encodeURIComponent(CALLER)}`, other.owner.token, other))).toEqual([
      ids.othersOut,
    ]);
    expect(idsOf(await list(`?phone=${encodeURIComponent(otherNumber.phone_number)}`))).toEqual([]);
  });

  it('normalises the number (separators, a + sent unencoded) and combines with the other filters', async () => {
    expect(idsOf(await list(`?phone=${encodeURIComponent('+61 491 570 177')}`))).toEqual([
      ids.inbound,
      ids.outToCaller,
    ]);
    expect(idsOf(await list(`?phone=${encodeURIComponent('+61 (4) 9157-0177')}`))).toHaveLength(2);
    expect(idsOf(await list('?phone=+61491570177'))).toHaveLength(2);
    expect(idsOf(await list(`?phone=${encodeURIComponent(CALLER)}&direction=inbound`))).toEqual([
      ids.inbound,
    ]);
    expect(idsOf(await list(`?phone=${encodeURIComponent(CALLER)}&direction=outbound`))).toEqual([
      ids.outToCaller,
    ]);
    const byAgent = await list(`?phone=${encodeURIComponent(CALLER)}&agent_id=${agentId}`);
    expect(idsOf(byAgent)).toEqual([ids.inbound, ids.outToCaller]);
    expect(idsOf(await list(`?phone=${encodeURIComponent(CALLER)}&to=2000-01-01`))).toEqual([]);
    // Pages through the phone's calls with the sealed cursor.
    const first = await list(`?phone=${encodeURIComponent(CALLER)}&limit=1`);
    expect(idsOf(first)).toEqual([ids.inbound]);
    const second = await list(
      `?phone=${encodeURIComponent(CALLER)}&limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`,
    );
    expect(idsOf(second)).toEqual([ids.outToCaller]);
  });

  it('is 422 for a number that is not a phone number, and changes nothing', async () => {
    for (const bad of ['0491570177', 'not-a-phone', '+1', '', '+61491570177'.repeat(4), '+6149157O177']) {
      const res = await list(`?phone=${encodeURIComponent(bad)}`);
      expect([bad, res.status]).toEqual([bad, 422]);
      expect(res.body.detail[0].loc).toEqual(['query', 'phone']);
    }
  });

  it('viewers and read-scoped keys may filter; another tenant gets 404', async () => {
    const viewer = await addMember(tenant, 'viewer');
    expect(idsOf(await list(`?phone=${encodeURIComponent(CALLER)}`, viewer.token))).toHaveLength(2);
    const { key } = await apiKey(tenant, ['calls:read']);
    expect(idsOf(await list(`?phone=${encodeURIComponent(CALLER)}`, key))).toHaveLength(2);
    const foreign = await list(`?phone=${encodeURIComponent(CALLER)}`, other.owner.token);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: 'Workspace not found' });
  });
});
