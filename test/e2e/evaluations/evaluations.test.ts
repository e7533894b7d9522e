import { EvaluationDispatchEntity } from '../../../functions/evaluations/entities.js';
import { CreateEvaluationBody } from '../../../functions/evaluations/schemas.js';
import { MAX_RESENDS, SCENARIOS_LOST, startEvaluation } from '../../../functions/evaluations/service.js';
import { queueUrl, sendMessage, sqsClient } from '../../../functions/platform/queue.js';
import { api, type Json } from '../../helpers/http.js';
import { structuredRequests, textOf } from '../conversation/fixtures.js';
import { readQuiescence, waitFor, waitForConsumed, waitForQuiescence } from '../../helpers/wait.js';
import { addMember, createAgent, newTenant, setBalance, ws, type Tenant } from '../calling/fixtures.js';

/**
 * Agent evaluations over the local stack: scenarios played as scripted calls through the conversation
 * engine and the model simulator, and judged against the expected phrases; 20 credits charged at start in
 * the ledger (402 when short), never refunded, even on cancel; bounded input; tenancy.
 */
const PROMPT =
  'You are Ava from Harbour Realty. Our office opens at 9am on weekdays. ' +
  'Parking is free behind the building. The Bondi apartment is listed at $1.2 million.';

let tenant: Tenant;
let agent: Json;

const evaluations = (t: Tenant, agentId: string) => `${ws(t)}/agents/${agentId}/evaluations`;
const start = (body: unknown, token = tenant.owner.token, agentId = agent.id) =>
  api('POST', evaluations(tenant, agentId), { token, body });
const get = (id: string, token = tenant.owner.token) =>
  api('GET', `${evaluations(tenant, agent.id)}/${id}`, { token });
const balance = async (t: Tenant = tenant): Promise<number> =>
  (await api('GET', `/api/v1/organisations/${t.organisationId}/billing`, { token: t.owner.token })).body
    .balance_units;
const ledger = async (t: Tenant = tenant): Promise<Json[]> =>
  (
    await api('GET', `/api/v1/organisations/${t.organisationId}/billing/ledger?limit=100`, {
      token: t.owner.token,
    })
  ).body.items;

const SCENARIOS = [
  {
    name: 'Opening hours and parking',
    caller_script: ['When does your office open?', 'Is there parking nearby?'],
    expect: ['9AM', 'parking is   free'],
  },
  { name: 'Boats', caller_script: ['Do you sell boats?'], expect: ['we sell boats'] },
];

const markerOf = async (evaluationId: string) =>
  (await EvaluationDispatchEntity.query.byCreation({}).go({ pages: 'all' })).data.find(
    (m) => m.evaluationId === evaluationId,
  );

/** Drops what this process sends to the evaluations queue (the send "succeeds"; nothing arrives). */
async function loseEvaluationMessages(): Promise<{ count: () => number; restore: () => void }> {
  let count = 0;
  const client = await sqsClient();
  const target = queueUrl('evaluations');
  const name = 'testLosesEvaluationMessages';
  client.middlewareStack.add(
    <I extends object, O>(next: (args: { input: I }) => Promise<O>) =>
      async (args: { input: I }): Promise<O> => {
        const input = args.input as { QueueUrl?: string; Entries?: unknown[] };
        if (input.QueueUrl === target) {
          count += input.Entries?.length ?? 1;
          return { output: { $metadata: {}, Successful: [], Failed: [] }, response: {} } as O;
        }
        return next(args);
      },
    { step: 'initialize', name },
  );
  return { count: () => count, restore: () => client.middlewareStack.remove(name) };
}

async function finished(id: string): Promise<Json> {
  return waitFor(
    async () => {
      const res = await get(id);
      return res.body.status !== 'running' ? res.body : undefined;
    },
    { what: `evaluation ${id} to end`, timeoutMs: 60_000 },
  );
}

beforeAll(async () => {
  tenant = await newTenant({ paid: true });
  agent = await createAgent(tenant, {
    name: 'Ava',
    prompt: PROMPT,
    greeting: 'Harbour Realty, Ava speaking.',
  });
});

describe('agent evaluations', () => {
  it('plays each scenario as a scripted call, judges it, and charges 20 credits once at start', async () => {
    const before = await balance();
    const res = await start({ scenarios: SCENARIOS });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^evl_/),
      status: 'running',
      total: 2,
      credits: 20,
    });
    expect(await balance()).toBe(before - 20 * 60);
    const charge = (await ledger()).filter((e) => e.source === res.body.id);
    expect(charge).toEqual([
      expect.objectContaining({ kind: 'charge', credits: -20, usage_kind: 'evaluation', quantity: 1 }),
    ]);

    const done = await finished(res.body.id);
    expect(done).toMatchObject({ status: 'completed', total: 2, done: 2, failure_reason: null });
    expect(done.results.map((r: Json) => [r.scenario, r.passed, r.missing])).toEqual([
      ['Opening hours and parking', true, []],
      ['Boats', false, ['we sell boats']],
    ]);
    const [first] = done.results;
    expect(first.transcript[0]).toMatchObject({ role: 'agent', text: 'Harbour Realty, Ava speaking.' });
    expect(first.transcript.filter((t: Json) => t.role === 'user').map((t: Json) => t.text)).toEqual(
      SCENARIOS[0].caller_script,
    );
    expect(first.transcript.map((t: Json) => t.text)).toContain('Our office opens at 9am on weekdays.');

    // A redelivered scenario judges nothing twice; the charge stays one.
    const quiet = await readQuiescence();
    await sendMessage('evaluations', {
      type: 'evaluation.scenario',
      workspace_id: tenant.workspaceId,
      agent_id: agent.id,
      evaluation_id: res.body.id,
      index: 0,
    });
    await waitForConsumed(quiet, { RunEvaluationScenario: 1 });
    const again = await get(res.body.id);
    expect(again.body.done).toBe(2);
    expect(again.body.results).toEqual(done.results);
    expect(await balance()).toBe(before - 20 * 60);

    const list = await api('GET', `${evaluations(tenant, agent.id)}`, { token: tenant.owner.token });
    expect(list.status).toBe(200);
    expect(list.body.items[0]).toMatchObject({ id: res.body.id, status: 'completed' });
    // An ended run cannot be cancelled.
    const cancel = await api('POST', `${evaluations(tenant, agent.id)}/${res.body.id}/cancel`, {
      token: tenant.owner.token,
    });
    expect(cancel.status).toBe(409);
    expect(cancel.body).toEqual({ error: 'Evaluation has already ended' });
  });

  it('natural-language criteria: the model judges each, with a reason; a scenario passes when every phrase and criterion does', async () => {
    const res = await start({
      scenarios: [
        {
          name: 'Parking, judged',
          caller_script: ['Is there parking nearby?'],
          criteria: ['tells the caller that parking is free', 'offers an inspection time'],
        },
        {
          name: 'Opening hours, phrase and criterion',
          caller_script: ['When does your office open?'],
          expect: ['9am'],
          criteria: ['says when the office opens'],
        },
      ],
    });
    expect(res.status).toBe(201);
    const done = await finished(res.body.id);
    expect(done.status).toBe('completed');
    const [parking, hours] = done.results;
    expect(parking).toMatchObject({ scenario: 'Parking, judged', passed: false, missing: [] });
    expect(parking.criteria).toEqual([
      {
        criterion: 'tells the caller that parking is free',
        passed: true,
        reason: 'The agent said: "Parking is free behind the building.".',
      },
      {
        criterion: 'offers an inspection time',
        passed: false,
        reason: 'No line of the agent\'s covers "offers", "inspection", "time".',
      },
    ]);
    expect(hours).toMatchObject({
      scenario: 'Opening hours, phrase and criterion',
      passed: true,
      missing: [],
    });
    expect(hours.criteria).toEqual([
      {
        criterion: 'says when the office opens',
        passed: true,
        reason: 'The agent said: "Our office opens at 9am on weekdays.".',
      },
    ]);
    // What the judge was sent: the numbered criteria and the conversation as played (not an echo).
    const judged = await structuredRequests(
      'evaluation_judgement',
      '1. tells the caller that parking is free',
    );
    expect(judged).toHaveLength(1);
    const sent = textOf(judged[0].messages.find((m) => m.role === 'user')?.content);
    expect(sent).toContain(
      'Criteria:\n1. tells the caller that parking is free\n2. offers an inspection time\n\nThe conversation:\n',
    );
    expect(sent).toContain('Caller: Is there parking nearby?');
    expect(sent).toContain('Agent: Parking is free behind the building.');
    expect((judged[0].response_format?.json_schema?.schema as Json).properties.results.minItems).toBe(2);
    // Scenarios without criteria report none.
    expect(
      (await finished((await start({ scenarios: [SCENARIOS[1]] })).body.id)).results[0].criteria,
    ).toEqual([]);
  });

  it('the model failing during a scenario: the run fails naming that failure, and no scenario is judged on the apologies', async () => {
    const res = await start({
      scenarios: [
        { name: 'Broken model', caller_script: ['Please simulate a model error now.'], expect: ['sorry'] },
      ],
    });
    expect(res.status).toBe(201);
    const done = await finished(res.body.id);
    expect(done.status).toBe('failed');
    expect(done.failure_reason).toMatch(
      /language model failed during the scenario's conversation \(model_error: /,
    );
    expect(done.results).toEqual([]);
    expect(done.done).toBe(0);
  });

  it('a start that stopped between the charge and the scenario messages: the sweeper sends them; charged once', async () => {
    const before = await balance();
    // The start itself (the route's code), as if its process died on sending the scenario messages.
    const client = await sqsClient();
    const target = queueUrl('evaluations');
    const name = 'testStopsBeforeEvaluationMessages';
    client.middlewareStack.add(
      <I extends object, O>(next: (args: { input: I }) => Promise<O>) =>
        async (args: { input: I }): Promise<O> => {
          if ((args.input as { QueueUrl?: string }).QueueUrl === target)
            throw new Error('the process stopped');
          return next(args);
        },
      { step: 'initialize', name },
    );
    try {
      await expect(
        startEvaluation({
          workspaceId: tenant.workspaceId,
          organisationId: tenant.organisationId,
          agentId: agent.id,
          createdBy: tenant.owner.userId,
          body: CreateEvaluationBody.parse({ scenarios: SCENARIOS }),
        }),
      ).rejects.toThrow('the process stopped');
    } finally {
      client.middlewareStack.remove(name);
    }
    // Charged and running, with no scenario on its way.
    const [run] = (await api('GET', evaluations(tenant, agent.id), { token: tenant.owner.token })).body.items;
    expect(run).toMatchObject({ status: 'running', done: 0, total: 2 });
    expect(await balance()).toBe(before - 20 * 60);

    // The sweeper (SweepEvaluations) finds its dispatch marker and sends the scenarios.
    const done = await finished(run.id);
    expect(done).toMatchObject({ status: 'completed', done: 2 });
    expect(done.results.map((r: Json) => [r.scenario, r.passed])).toEqual([
      ['Opening hours and parking', true],
      ['Boats', false],
    ]);
    await waitForQuiescence({ timeoutMs: 60_000 });
    expect(await balance()).toBe(before - 20 * 60);
    expect((await ledger()).filter((e) => e.source.startsWith(run.id)).map((e) => e.kind)).toEqual([
      'charge',
    ]);
    // Its marker is dropped by the sweeper once the run ended.
    await waitFor(async () => (await markerOf(run.id)) === undefined, { what: 'the marker to be dropped' });
  }, 180_000);

  it('scenario messages lost after they went out: the sweeper sends them again; given up after 3 times', async () => {
    const before = await balance();
    const lost = await loseEvaluationMessages();
    let started: Json;
    try {
      started = await startEvaluation({
        workspaceId: tenant.workspaceId,
        organisationId: tenant.organisationId,
        agentId: agent.id,
        createdBy: tenant.owner.userId,
        body: CreateEvaluationBody.parse({ scenarios: SCENARIOS }),
      });
    } finally {
      lost.restore();
    }
    expect(lost.count()).toBe(2);
    expect((await markerOf(started.id))?.sentAt).toEqual(expect.any(String));
    // No scenario judged for EVALUATION_STALL_SECONDS (30 s locally): sent again, and the run completes.
    const done = await waitFor(
      async () => {
        const res = await get(started.id);
        return res.body.status !== 'running' ? res.body : undefined;
      },
      { what: `evaluation ${started.id} to end`, timeoutMs: 120_000 },
    );
    expect(done).toMatchObject({ status: 'completed', done: 2 });
    expect(await balance()).toBe(before - 20 * 60);

    // Lost every time: after MAX_RESENDS the run fails (no refund).
    const lostAgain = await loseEvaluationMessages();
    let stuck: Json;
    try {
      stuck = await startEvaluation({
        workspaceId: tenant.workspaceId,
        organisationId: tenant.organisationId,
        agentId: agent.id,
        createdBy: tenant.owner.userId,
        body: CreateEvaluationBody.parse({ scenarios: SCENARIOS }),
      });
    } finally {
      lostAgain.restore();
    }
    const marker = (await markerOf(stuck.id))!;
    await EvaluationDispatchEntity.patch({ createdAt: marker.createdAt, evaluationId: marker.evaluationId })
      .set({ resends: MAX_RESENDS, sentAt: new Date(Date.now() - 3_600_000).toISOString() })
      .go();
    const failed = await finished(stuck.id);
    expect(failed).toMatchObject({ status: 'failed', done: 0, failure_reason: SCENARIOS_LOST });
    expect(await balance()).toBe(before - 2 * 20 * 60);
    expect((await ledger()).filter((e) => e.source.startsWith(stuck.id)).map((e) => e.kind)).toEqual([
      'charge',
    ]);
  }, 240_000);

  it('cancel stops a running evaluation and refunds nothing', async () => {
    const before = await balance();
    const many = Array.from({ length: 20 }, (_, i) => ({
      name: `Scenario ${i + 1}`,
      caller_script: ['When does your office open?'],
      expect: ['9am'],
    }));
    const res = await start({ scenarios: many });
    expect(res.status).toBe(201);
    const cancel = await api('POST', `${evaluations(tenant, agent.id)}/${res.body.id}/cancel`, {
      token: tenant.owner.token,
    });
    expect(cancel.status).toBe(200);
    expect(cancel.body.status).toBe('cancelled');
    await waitForQuiescence({ timeoutMs: 60_000 });
    const after = await get(res.body.id);
    expect(after.body.status).toBe('cancelled');
    expect(after.body.done).toBeLessThan(20);
    expect(after.body.results).toHaveLength(after.body.done);
    expect(await balance()).toBe(before - 20 * 60);
    const entries = (await ledger()).filter((e) => e.source.startsWith(res.body.id));
    expect(entries.map((e) => e.kind)).toEqual(['charge']);
  });

  it('402 when the balance does not cover 20 credits: no run, no charge', async () => {
    const poor = await newTenant({ paid: true });
    const poorAgent = await createAgent(poor, { prompt: PROMPT });
    await setBalance(poor.organisationId, 19 * 60);
    const res = await api('POST', evaluations(poor, poorAgent.id), {
      token: poor.owner.token,
      body: { scenarios: SCENARIOS },
    });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ error: 'Insufficient credits' });
    expect(await balance(poor)).toBe(19 * 60);
    const list = await api('GET', evaluations(poor, poorAgent.id), { token: poor.owner.token });
    expect(list.body.items).toEqual([]);
    expect((await ledger(poor)).filter((e) => e.usage_kind === 'evaluation')).toEqual([]);
  });

  const scenario = SCENARIOS[0];
  it.each([
    ['no scenarios', { scenarios: [] }],
    ['21 scenarios', { scenarios: Array.from({ length: 21 }, () => scenario) }],
    ['an empty caller script', { scenarios: [{ ...scenario, caller_script: [] }] }],
    [
      '21 caller lines',
      { scenarios: [{ ...scenario, caller_script: Array.from({ length: 21 }, () => 'Hi') }] },
    ],
    ['no expectations', { scenarios: [{ ...scenario, expect: [] }] }],
    ['neither expect nor criteria', { scenarios: [{ name: 'x', caller_script: ['Hi'] }] }],
    ['an empty criteria list', { scenarios: [{ ...scenario, criteria: [] }] }],
    ['a 301-character criterion', { scenarios: [{ ...scenario, criteria: ['x'.repeat(301)] }] }],
    ['a 501-character line', { scenarios: [{ ...scenario, caller_script: ['x'.repeat(501)] }] }],
    ['a blank name', { scenarios: [{ ...scenario, name: '  ' }] }],
    ['an unknown field', { scenarios: [{ ...scenario, judge: 'lenient' }] }],
  ])('%s is 422 and charges nothing', async (_what, body) => {
    const before = await balance();
    const res = await start(body);
    expect(res.status).toBe(422);
    expect(res.body.detail.length).toBeGreaterThan(0);
    expect(await balance()).toBe(before);
  });

  it('viewers read but cannot start or cancel; another tenant sees nothing', async () => {
    const viewer = await addMember(tenant, 'viewer');
    const denied = await start({ scenarios: SCENARIOS }, viewer.token);
    expect(denied.status).toBe(403);
    const list = await api('GET', evaluations(tenant, agent.id), { token: viewer.token });
    expect(list.status).toBe(200);
    const some = list.body.items[0];
    expect((await get(some.id, viewer.token)).status).toBe(200);
    const cancel = await api('POST', `${evaluations(tenant, agent.id)}/${some.id}/cancel`, {
      token: viewer.token,
    });
    expect(cancel.status).toBe(403);

    const other = await newTenant({ paid: true });
    expect((await get(some.id, other.owner.token)).status).toBe(404);
    expect((await start({ scenarios: SCENARIOS }, other.owner.token)).status).toBe(404);
    expect((await get('evl_01ARZ3NDEKTSV4RRFFQ69G5FAV')).status).toBe(404);
    expect((await get('nope')).status).toBe(404);
    expect(
      (await start({ scenarios: SCENARIOS }, tenant.owner.token, 'ag_01ARZ3NDEKTSV4RRFFQ69G5FAV')).status,
    ).toBe(404);
  });
});
