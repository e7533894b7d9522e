import { WorkspaceEntity } from '../../../functions/access/entities.js';
import { localDay } from '../../../functions/calling/call-stats.js';
import { setCallSentiment } from '../../../functions/calling/call-log.js';
import { countTurnLatencies } from '../../../functions/calling/call-stats.js';
import { finishCall, readCall } from '../../../functions/calling/lifecycle.js';
import { sendMessage } from '../../../functions/platform/queue.js';
import { api, type Json } from '../../helpers/http.js';
import { readQuiescence, waitForConsumed, waitForQuiescence } from '../../helpers/wait.js';
import {
  addMember,
  createAgent,
  numberFor,
  readyToCall,
  TEST_NUMBERS,
  waitForCall,
  ws,
  type Tenant,
} from '../calling/fixtures.js';

/**
 * Call analytics over the local stack: the counters kept on write give the same counts as the call
 * log for the same days (in the workspace's time zone), grouped by day, agent and status; a repeated
 * finish, a redelivered call.ended and a repeated sentiment count nothing twice; bad ranges are 422.
 */
const TZ = 'Australia/Sydney';
let tenant: Tenant;
let agentA: Json;
let agentB: Json;
let calls: Json[] = [];

const analytics = (query: string, token = tenant.owner.token) =>
  api('GET', `${ws(tenant)}/analytics/calls${query}`, { token });

async function place(agentId: string, to: string): Promise<string> {
  const res = await api('POST', `${ws(tenant)}/agents/${agentId}/start-call`, {
    token: tenant.owner.token,
    body: { to_phone: to },
  });
  if (res.status !== 201) throw new Error(`start-call ${res.status} ${res.text}`);
  return res.body.id;
}

/** What the call log says, bucketed as the analytics are (the call's creation day in the workspace's zone). */
function expectedBy(key: (call: Json) => string) {
  const out = new Map<string, Json>();
  for (const call of calls) {
    const k = key(call);
    const e = out.get(k) ?? { calls: 0, answered: 0, completed: 0, failed: 0, total_seconds: 0, credits: 0 };
    e.calls += 1;
    if (call.connected_at || call.inprogress_at) e.answered += 1;
    e[call.status] += 1;
    e.total_seconds += call.duration_seconds ?? 0;
    e.credits += call.credits ?? 0;
    out.set(k, e);
  }
  return out;
}

const sentimentOf = (list: Json[]) => ({
  positive: list.filter((c) => c.sentiment?.label === 'positive').length,
  neutral: list.filter((c) => c.sentiment?.label === 'neutral').length,
  negative: list.filter((c) => c.sentiment?.label === 'negative').length,
});

beforeAll(async () => {
  ({ tenant, agent: agentA } = await readyToCall());
  await WorkspaceEntity.patch({ workspaceId: tenant.workspaceId }).set({ timezone: TZ }).go();
  agentB = await createAgent(tenant, { name: 'Second' });
  await numberFor(tenant, agentB.id);
  const ids = [
    await place(agentA.id, TEST_NUMBERS.answered),
    await place(agentA.id, TEST_NUMBERS.answered),
    await place(agentA.id, TEST_NUMBERS.busy),
    await place(agentA.id, TEST_NUMBERS.failed),
    await place(agentB.id, TEST_NUMBERS.answered),
  ];
  // Ended, charged, and (answered ones) with the post-call pipeline's sentiment.
  calls = await Promise.all(
    ids.map((id) =>
      waitForCall(
        tenant,
        id,
        (c) =>
          (c.status === 'failed' && c.credits !== null) ||
          (c.status === 'completed' && c.credits !== null && c.sentiment !== null),
        120_000,
      ),
    ),
  );
  await waitForQuiescence({ timeoutMs: 60_000 });
  // Failed calls get their (neutral) sentiment from the pipeline too: read every call as it is now.
  calls = await Promise.all(
    calls.map(
      async (c) => (await api('GET', `${ws(tenant)}/calls/${c.id}`, { token: tenant.owner.token })).body,
    ),
  );
}, 240_000);

describe('call analytics', () => {
  it('by day: the same counts as the call log for the same days, in the workspace time zone', async () => {
    const days = [...new Set(calls.map((c) => localDay(c.created_at, TZ)))].sort();
    const res = await analytics(`?from=${days[0]}&to=${days[days.length - 1]}&group_by=day`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      group_by: 'day',
      from: days[0],
      to: days[days.length - 1],
      timezone: TZ,
    });
    const expected = expectedBy((c) => localDay(c.created_at, TZ));
    for (const item of res.body.items) {
      const e = expected.get(item.key) ?? {
        calls: 0,
        answered: 0,
        completed: 0,
        failed: 0,
        total_seconds: 0,
        credits: 0,
      };
      expect(item).toMatchObject(e);
      expect(item.credits).toBeCloseTo(e.credits, 5);
    }
    const total = res.body.items.reduce((sum: number, i: Json) => sum + i.calls, 0);
    expect(total).toBe(5);
    const sentiment = res.body.items.reduce(
      (sum: Json, i: Json) => ({
        positive: sum.positive + i.sentiment.positive,
        neutral: sum.neutral + i.sentiment.neutral,
        negative: sum.negative + i.sentiment.negative,
      }),
      { positive: 0, neutral: 0, negative: 0 },
    );
    expect(sentiment).toEqual(sentimentOf(calls));
    expect(sentiment.positive + sentiment.neutral + sentiment.negative).toBe(
      calls.filter((c) => c.sentiment !== null).length,
    );
    const answered = res.body.items.find((i: Json) => i.answered > 0);
    expect(answered.average_seconds).toBeCloseTo(answered.total_seconds / answered.answered, 1);

    // The call log agrees, listed for the same calls.
    const log = await api('GET', `${ws(tenant)}/calls?limit=100`, { token: tenant.owner.token });
    expect(log.body.items).toHaveLength(total);
  });

  it('totals: the headline figures over the range (answer and success rates, turn latency p50 from buckets)', async () => {
    const days = [...new Set(calls.map((c) => localDay(c.created_at, TZ)))].sort();
    const res = await analytics(`?from=${days[0]}&to=${days[days.length - 1]}`);
    expect(res.status).toBe(200);
    const { totals, items } = res.body;
    const sumOf = (field: string) => items.reduce((sum: number, i: Json) => sum + i[field], 0);
    expect(totals).toMatchObject({
      key: 'total',
      calls: 5,
      answered: sumOf('answered'),
      completed: calls.filter((c) => c.status === 'completed').length,
      failed: calls.filter((c) => c.status === 'failed').length,
      total_seconds: sumOf('total_seconds'),
    });
    const analysed = calls.filter((c) => c.analysis !== null);
    expect(totals.analysed).toBe(analysed.length);
    expect(totals.analysed).toBeGreaterThan(0);
    expect(totals.successful).toBe(analysed.filter((c) => c.analysis.call_successful === true).length);
    expect(totals.success_rate).toBeCloseTo(totals.successful / totals.analysed, 3);
    expect(totals.answer_rate).toBeCloseTo(totals.answered / 5, 3);
    // Every recorded turn is in the histogram once; the median lies between the calls' own medians.
    const turns = calls.reduce((sum, c) => sum + (c.latency?.turns ?? 0), 0);
    expect(turns).toBeGreaterThan(0);
    expect(totals.turn_latency.turns).toBe(turns);
    expect(sumOf('analysed')).toBe(totals.analysed);
    const medians = calls.filter((c) => c.latency?.turns > 0).map((c) => c.latency.total_ms.p50 as number);
    expect(totals.turn_latency.p50_ms).not.toBeNull();
    // To within a bucket (the buckets are 100 ms wide up to 1 s, 200 ms to 2 s, then wider).
    expect(totals.turn_latency.p50_ms).toBeGreaterThanOrEqual(Math.min(...medians) - 500);
    expect(totals.turn_latency.p50_ms).toBeLessThanOrEqual(Math.max(...medians) + 500);
    // One agent's totals are that agent's calls only.
    const one = await analytics(`?from=${days[0]}&to=${days[days.length - 1]}&agent_id=${agentB.id}`);
    expect(one.body.totals).toMatchObject({
      calls: 1,
      completed: calls.filter((c) => c.agent_id === agentB.id && c.status === 'completed').length,
    });
  });

  it('by agent and by status, and for one agent', async () => {
    const today = localDay(new Date(), TZ);
    const range = `from=${localDay(new Date(Date.now() - 2 * 86_400_000), TZ)}&to=${today}`;
    const byAgent = await analytics(`?${range}&group_by=agent`);
    expect(byAgent.status).toBe(200);
    const expectedAgents = expectedBy((c) => c.agent_id);
    expect(byAgent.body.items.map((i: Json) => i.key).sort()).toEqual([...expectedAgents.keys()].sort());
    for (const item of byAgent.body.items)
      expect(item).toMatchObject({ ...expectedAgents.get(item.key), credits: expect.any(Number) });
    expect(byAgent.body.items[0]).toMatchObject({ key: agentA.id, calls: 4, completed: 2, failed: 2 });

    const byStatus = await analytics(`?${range}&group_by=status`);
    expect(byStatus.body.items.map((i: Json) => [i.key, i.calls])).toEqual([
      ['completed', 3],
      ['failed', 2],
    ]);
    const completed = byStatus.body.items[0];
    expect(completed.sentiment).toEqual(sentimentOf(calls.filter((c) => c.status === 'completed')));

    const oneAgent = await analytics(`?${range}&group_by=status&agent_id=${agentB.id}`);
    expect(oneAgent.body.items.map((i: Json) => [i.key, i.calls])).toEqual([
      ['completed', 1],
      ['failed', 0],
    ]);
    const unknownAgent = await analytics(`?${range}&agent_id=ag_nope`);
    expect(unknownAgent.status).toBe(200);
    expect(unknownAgent.body.items.every((i: Json) => i.calls === 0)).toBe(true);
  });

  it('counts each call once: a repeated finish, a redelivered call.ended and a repeated sentiment change nothing', async () => {
    const before = await analytics('?group_by=status');
    const answered = calls.find((c) => c.status === 'completed');
    const stored = await readCall(tenant.workspaceId, answered.id);
    if (!stored) throw new Error('call missing');
    await finishCall(stored);
    await finishCall({ ...stored, statsDay: undefined, chargedUnits: undefined });
    await setCallSentiment(tenant.workspaceId, answered.id, { label: 'negative', score: -1, turns: [] });
    const totalsBefore = (await analytics('')).body.totals;
    expect(await countTurnLatencies(stored, [150, 250, 4000])).toBe(false);
    const quiet = await readQuiescence();
    await sendMessage('postCall', {
      type: 'call.ended',
      call_id: answered.id,
      workspace_id: tenant.workspaceId,
      organisation_id: tenant.organisationId,
    });
    await waitForConsumed(quiet, { ProcessCallEnded: 1 });
    const after = await analytics('?group_by=status');
    expect(after.body.items).toEqual(before.body.items);
    expect((await analytics('')).body.totals).toEqual(totalsBefore);
    const detail = await api('GET', `${ws(tenant)}/calls/${answered.id}`, { token: tenant.owner.token });
    expect(detail.body.credits).toBe(answered.credits);
    expect(detail.body.sentiment).toEqual(answered.sentiment);
  });

  it('defaults to the last 30 days up to today in the workspace time zone', async () => {
    const res = await analytics('');
    expect(res.status).toBe(200);
    expect(res.body.group_by).toBe('day');
    expect(res.body.items).toHaveLength(30);
    expect(res.body.to).toBe(localDay(new Date(), TZ));
    expect(res.body.items[29].key).toBe(res.body.to);
  });

  it.each([
    ['reversed', '?from=2026-03-02&to=2026-03-01', 'to'],
    ['over a year', '?from=2025-01-01&to=2026-01-02', 'to'],
    ['unknown group_by', '?group_by=hour', 'group_by'],
    ['a date that does not exist', '?from=2026-02-30&to=2026-03-01', 'from'],
    ['a time instead of a date', '?from=2026-02-01T00:00:00Z', 'from'],
  ])('%s is 422 with the field named', async (_what, query, field) => {
    const res = await analytics(query);
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['query', field]);
  });

  it('a year exactly is fine; viewers read; another tenant cannot', async () => {
    expect((await analytics('?from=2025-01-01&to=2026-01-01')).status).toBe(200);
    const viewer = await addMember(tenant, 'viewer');
    expect((await analytics('?group_by=agent', viewer.token)).status).toBe(200);
    const { tenant: other } = await readyToCall();
    const res = await api('GET', `${ws(tenant)}/analytics/calls`, { token: other.owner.token });
    expect(res.status).toBe(404);
  });
});
