import { AgentEntity } from '../../../functions/agents/entities.js';
import { api, type Json } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import {
  addMember,
  createAgent,
  newTenant,
  readyToCall,
  TEST_NUMBERS,
  waitForCall,
  ws,
  type Tenant,
} from '../calling/fixtures.js';
import { EXTERNAL_RELAY_NUMBER, openSession } from '../conversation/fixtures.js';

/**
 * Agent versions over the local stack: each change of an agent's own fields makes a version (create,
 * PATCH, restore; not `answering_calls`), concurrent PATCHes keep both, restore leaves the switch
 * alone; calls record the version they run and the conversation runs that version (pinned with
 * `agent_version`, or the one at the dial even when the agent changes before the session starts);
 * analytics group by version; 404s, a viewer's 403, another tenant's 404.
 */

const V1_PROMPT = 'You are Ava from Harbour Realty. Open homes are on Saturdays at 10am.';
const V2_PROMPT = 'You are Ava from Harbour Realty. Open homes are on Sundays at 2pm.';

const agentPath = (t: Tenant, agentId: string) => `${ws(t)}/agents/${agentId}`;
const versions = (t: Tenant, agentId: string, query = '') =>
  api('GET', `${agentPath(t, agentId)}/versions${query}`, { token: t.owner.token });
const patch = (t: Tenant, agentId: string, body: Json) =>
  api('PATCH', agentPath(t, agentId), { token: t.owner.token, body });

async function callsOf(t: Tenant): Promise<Json[]> {
  return (await api('GET', `${ws(t)}/calls?limit=100`, { token: t.owner.token })).body.items;
}

/** Starts a call to the scenario whose relay session the test opens; waits until it is answered. */
async function liveCall(t: Tenant, agentId: string, body: Json = {}) {
  const started = await api('POST', `${agentPath(t, agentId)}/start-call`, {
    token: t.owner.token,
    body: { to_phone: EXTERNAL_RELAY_NUMBER, ...body },
  });
  if (started.status !== 201) throw new Error(`start-call: ${started.status} ${started.text}`);
  const callId = started.body.id as string;
  const providerCallId = await waitFor(
    async () => {
      const call = (await api('GET', `${ws(t)}/calls/${callId}`, { token: t.owner.token })).body as Json;
      return call.provider_call_id && call.status === 'inprogress'
        ? (call.provider_call_id as string)
        : undefined;
    },
    { what: 'the call to be answered', timeoutMs: 20_000, intervalMs: 100 },
  );
  return { callId, providerCallId, workspaceId: t.workspaceId, created: started.body as Json };
}

describe('versions made by create and PATCH', () => {
  test('create is version 1; a PATCH of own fields is the next, with what changed; answering_calls or a no-op makes none', async () => {
    const tenant = await newTenant();
    const agent = await createAgent(tenant, { prompt: V1_PROMPT, greeting: 'Hi!' });
    expect(agent.version).toBe(1);

    const first = await versions(tenant, agent.id);
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(1);
    expect(first.body.items[0]).toMatchObject({
      agent_id: agent.id,
      version: 1,
      created_by: tenant.owner.userId,
      created_at: expect.any(String),
    });
    expect(first.body.items[0].changed).toEqual(
      expect.arrayContaining(['name', 'prompt', 'greeting', 'settings']),
    );
    expect(first.body.items[0].changed).not.toContain('answering_calls');

    const changed = await patch(tenant, agent.id, {
      prompt: V2_PROMPT,
      settings: { speech_speed: 'fast' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.version).toBe(2);

    // The switch alone, and a PATCH that changes nothing: no version.
    const off = await patch(tenant, agent.id, { answering_calls: false });
    expect(off.body).toMatchObject({ version: 2, answering_calls: false });
    const same = await patch(tenant, agent.id, { prompt: V2_PROMPT });
    expect(same.body.version).toBe(2);
    // The switch with a change: one version, the switch set too.
    const both = await patch(tenant, agent.id, { answering_calls: true, greeting: 'Hello!' });
    expect(both.body).toMatchObject({ version: 3, answering_calls: true, greeting: 'Hello!' });

    const list = await versions(tenant, agent.id);
    expect(list.body.items.map((v: Json) => [v.version, v.changed])).toEqual([
      [3, ['greeting']],
      [2, ['prompt', 'settings']],
      [1, expect.any(Array)],
    ]);
    // Paged, newest first.
    const page = await versions(tenant, agent.id, '?limit=2');
    expect(page.body.items.map((v: Json) => v.version)).toEqual([3, 2]);
    const rest = await versions(
      tenant,
      agent.id,
      `?limit=2&cursor=${encodeURIComponent(page.body.next_cursor)}`,
    );
    expect(rest.body.items.map((v: Json) => v.version)).toEqual([1]);

    // One version: the agent as it was.
    const one = await api('GET', `${agentPath(tenant, agent.id)}/versions/1`, { token: tenant.owner.token });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ agent_id: agent.id, version: 1 });
    expect(one.body.agent).toMatchObject({
      id: agent.id,
      prompt: V1_PROMPT,
      greeting: 'Hi!',
      version: 1,
      settings: expect.objectContaining({ speech_speed: 'medium' }),
    });
  });

  test('two concurrent PATCHes are versions 2 and 3, both kept', async () => {
    const tenant = await newTenant();
    const agent = await createAgent(tenant, { prompt: V1_PROMPT });
    const [a, b] = await Promise.all([
      patch(tenant, agent.id, { prompt: V2_PROMPT }),
      patch(tenant, agent.id, { greeting: 'Concurrent hello' }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.body.version, b.body.version].sort()).toEqual([2, 3]);
    const now = (await api('GET', agentPath(tenant, agent.id), { token: tenant.owner.token })).body;
    expect(now).toMatchObject({ version: 3, prompt: V2_PROMPT, greeting: 'Concurrent hello' });
    const list = (await versions(tenant, agent.id)).body.items as Json[];
    expect(list.map((v) => v.version)).toEqual([3, 2, 1]);
    expect(
      list
        .slice(0, 2)
        .flatMap((v) => v.changed)
        .sort(),
    ).toEqual(['greeting', 'prompt']);
    // Each version holds the other's change only if it came after it.
    const v3 = (await api('GET', `${agentPath(tenant, agent.id)}/versions/3`, { token: tenant.owner.token }))
      .body;
    expect(v3.agent).toMatchObject({ prompt: V2_PROMPT, greeting: 'Concurrent hello' });
  });

  test('restore makes a new version equal to the one named; answering_calls is left as it is', async () => {
    const tenant = await newTenant();
    const agent = await createAgent(tenant, { prompt: V1_PROMPT, greeting: 'Hi!' });
    await patch(tenant, agent.id, { prompt: V2_PROMPT, success_criteria: 'Booked a visit' });
    await patch(tenant, agent.id, { answering_calls: false });
    const restored = await api('POST', `${agentPath(tenant, agent.id)}/versions/1/restore`, {
      token: tenant.owner.token,
    });
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({
      version: 3,
      prompt: V1_PROMPT,
      greeting: 'Hi!',
      success_criteria: null,
      answering_calls: false,
    });
    const list = (await versions(tenant, agent.id)).body.items as Json[];
    expect(list[0]).toMatchObject({ version: 3, changed: ['prompt', 'success_criteria'], restored_from: 1 });
    // Only a restore's version names the version it restored.
    expect(list.slice(1).map((v) => v.restored_from)).toEqual([null, null]);
    expect(list).toHaveLength(3);
    const one = await api('GET', `${agentPath(tenant, agent.id)}/versions/3`, { token: tenant.owner.token });
    expect(one.body).toMatchObject({ version: 3, restored_from: 1 });
  });

  test('a PATCH that drops a tool header keeps the sealed value an earlier version refers to; restore brings it back', async () => {
    const tenant = await newTenant();
    const tool = {
      type: 'function',
      name: 'book_visit',
      description: 'Books a visit',
      parameters: { type: 'object', properties: {} },
      url: 'https://tools.example.com/book',
      headers: { authorization: 'Bearer secret-1234' },
    };
    const agent = await createAgent(tenant, { tools: [tool] });
    const stored = async () =>
      (await AgentEntity.get({ workspaceId: tenant.workspaceId, agentId: agent.id }).go({ consistent: true }))
        .data;
    const secretId = ((await stored())?.tools as Json[])[0].headers.authorization as string;
    expect(secretId).toMatch(/^tsec_/);

    const dropped = await patch(tenant, agent.id, { tools: [{ ...tool, headers: undefined }] });
    expect(dropped.status).toBe(200);
    expect(dropped.body.tools[0].headers).toBeUndefined();
    expect(Object.keys(((await stored())?.toolSecrets ?? {}) as Json)).toContain(secretId);
    // The version keeps the id, never the sealed value.
    const v1 = (await api('GET', `${agentPath(tenant, agent.id)}/versions/1`, { token: tenant.owner.token }))
      .body;
    expect(v1.agent.tools[0].headers).toEqual({ authorization: '••••1234' });

    const restored = await api('POST', `${agentPath(tenant, agent.id)}/versions/1/restore`, {
      token: tenant.owner.token,
    });
    expect(restored.body.tools[0].headers).toEqual({ authorization: '••••1234' });
    expect(((await stored())?.tools as Json[])[0].headers.authorization).toBe(secretId);
  });
});

describe('refusals', () => {
  let tenant: Tenant;
  let agent: Json;
  let other: Tenant;
  beforeAll(async () => {
    ({ tenant, agent } = await readyToCall({ prompt: V1_PROMPT }));
    other = await newTenant();
  });

  test('a version that does not exist is 404 Agent version not found; an unknown agent is Agent not found', async () => {
    for (const n of ['2', '0', 'abc', '99999999999']) {
      const res = await api('GET', `${agentPath(tenant, agent.id)}/versions/${n}`, {
        token: tenant.owner.token,
      });
      expect({ n, status: res.status, body: res.body }).toEqual({
        n,
        status: 404,
        body: { error: 'Agent version not found' },
      });
    }
    const restore = await api('POST', `${agentPath(tenant, agent.id)}/versions/7/restore`, {
      token: tenant.owner.token,
    });
    expect(restore.status).toBe(404);
    expect(restore.body.error).toBe('Agent version not found');
    const unknown = await api('GET', `${agentPath(tenant, 'ag_01ARZ3NDEKTSV4RRFFQ69G5FAV')}/versions/1`, {
      token: tenant.owner.token,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('Agent not found');
    expect((await versions(tenant, agent.id)).body.items).toHaveLength(1);
  });

  test('start-call with an agent_version that does not exist, or is another agent’s, is 404 and places nothing', async () => {
    const second = await createAgent(tenant, { name: 'Second' });
    await patch(tenant, second.id, { prompt: 'Second version' });
    await patch(tenant, second.id, { prompt: 'Third version' });
    const before = (await callsOf(tenant)).length;
    for (const n of [5, 3]) {
      const res = await api('POST', `${agentPath(tenant, agent.id)}/start-call`, {
        token: tenant.owner.token,
        body: { to_phone: TEST_NUMBERS.answered, agent_version: n },
      });
      expect({ n, status: res.status, body: res.body }).toEqual({
        n,
        status: 404,
        body: { error: 'Agent version not found' },
      });
    }
    // Checked after the agent.
    const unknownAgent = await api(
      'POST',
      `${agentPath(tenant, 'ag_01ARZ3NDEKTSV4RRFFQ69G5FAV')}/start-call`,
      {
        token: tenant.owner.token,
        body: { to_phone: TEST_NUMBERS.answered, agent_version: 1 },
      },
    );
    expect(unknownAgent.body.error).toBe('Agent not found');
    const bad = await api('POST', `${agentPath(tenant, agent.id)}/start-call`, {
      token: tenant.owner.token,
      body: { to_phone: TEST_NUMBERS.answered, agent_version: 'one' },
    });
    expect(bad.status).toBe(422);
    expect((await callsOf(tenant)).length).toBe(before);
    // Evaluations too: 404 before anything is charged or started.
    const evaluation = await api('POST', `${agentPath(tenant, agent.id)}/evaluations`, {
      token: tenant.owner.token,
      body: { agent_version: 9, scenarios: [{ name: 'x', caller_script: ['Hi'], expect: ['Hi'] }] },
    });
    expect(evaluation.status).toBe(404);
    expect(evaluation.body.error).toBe('Agent version not found');
    const runs = await api('GET', `${agentPath(tenant, agent.id)}/evaluations`, {
      token: tenant.owner.token,
    });
    expect(runs.body.items).toEqual([]);
  });

  test('a viewer reads versions but may not restore (403); another tenant gets 404 and changes nothing', async () => {
    const viewer = await addMember(tenant, 'viewer');
    const list = await api('GET', `${agentPath(tenant, agent.id)}/versions`, { token: viewer.token });
    expect(list.status).toBe(200);
    const one = await api('GET', `${agentPath(tenant, agent.id)}/versions/1`, { token: viewer.token });
    expect(one.status).toBe(200);
    const restore = await api('POST', `${agentPath(tenant, agent.id)}/versions/1/restore`, {
      token: viewer.token,
    });
    expect(restore.status).toBe(403);
    expect(restore.body.error).toBe('Viewers have read-only access');

    for (const [method, path] of [
      ['GET', `${agentPath(tenant, agent.id)}/versions`],
      ['GET', `${agentPath(tenant, agent.id)}/versions/1`],
      ['POST', `${agentPath(tenant, agent.id)}/versions/1/restore`],
    ] as const) {
      const res = await api(method, path, { token: other.owner.token });
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
    // Their own workspace's path with this agent's id: the agent is not theirs.
    const theirs = await api('GET', `${agentPath(other, agent.id)}/versions/1`, { token: other.owner.token });
    expect(theirs.status).toBe(404);
    expect(theirs.body.error).toBe('Agent not found');
    expect((await versions(tenant, agent.id)).body.items).toHaveLength(1);
  });
});

describe('calls run their version', () => {
  test('a call pinned to version 1 runs version 1’s prompt and tools, and says so', async () => {
    const { tenant, agent } = await readyToCall({ prompt: V1_PROMPT, greeting: 'Hi, this is Ava.' });
    await patch(tenant, agent.id, { prompt: V2_PROMPT, transfer_phone_number: '+61291234567' });
    const call = await liveCall(tenant, agent.id, { agent_version: 1 });
    expect(call.created.agent_version).toBe(1);
    await expectVersionOneConversation(tenant, call);
    const listed = (await callsOf(tenant)).find((c) => c.id === call.callId);
    expect(listed?.agent_version).toBe(1);
  }, 90_000);

  test('a PATCH between dialling and answering does not change the conversation', async () => {
    const { tenant, agent } = await readyToCall({ prompt: V1_PROMPT });
    const call = await liveCall(tenant, agent.id);
    expect(call.created.agent_version).toBe(1);
    // The agent changes before the relay session starts.
    const changed = await patch(tenant, agent.id, {
      prompt: V2_PROMPT,
      transfer_phone_number: '+61291234567',
    });
    expect(changed.body.version).toBe(2);
    await expectVersionOneConversation(tenant, call);
    // The next call runs version 2.
    const next = await liveCall(tenant, agent.id);
    expect(next.created.agent_version).toBe(2);
    const again = await openSession(next);
    expect((await again.say('When are the open homes?')).reply).toBe('Open homes are on Sundays at 2pm.');
    again.close();
    await waitForCall(tenant, next.callId, (c) => c.status === 'completed', 30_000);
  }, 120_000);

  test('analytics group_by=agent_version counts each call under the version it ran', async () => {
    const { tenant, agent } = await readyToCall({ prompt: V1_PROMPT });
    const place = async (body: Json = {}) => {
      const res = await api('POST', `${agentPath(tenant, agent.id)}/start-call`, {
        token: tenant.owner.token,
        body: { to_phone: TEST_NUMBERS.answered, ...body },
      });
      if (res.status !== 201) throw new Error(`start-call ${res.status} ${res.text}`);
      return res.body.id as string;
    };
    const ids = [await place()];
    await patch(tenant, agent.id, { prompt: V2_PROMPT });
    ids.push(await place(), await place(), await place({ agent_version: 1 }));
    await Promise.all(
      ids.map((id) => waitForCall(tenant, id, (c) => c.status === 'completed' && c.credits !== null, 30_000)),
    );
    await waitForQuiescence();
    const res = await api(
      'GET',
      `${ws(tenant)}/analytics/calls?group_by=agent_version&agent_id=${agent.id}`,
      {
        token: tenant.owner.token,
      },
    );
    expect(res.status).toBe(200);
    expect(
      res.body.items.map((i: Json) => [i.key, i.agent_id, i.agent_version, i.calls, i.completed]),
    ).toEqual([
      [`${agent.id}#1`, agent.id, 1, 2, 2],
      [`${agent.id}#2`, agent.id, 2, 2, 2],
    ]);
    // The agent's own totals are not counted twice.
    const byAgent = await api('GET', `${ws(tenant)}/analytics/calls?group_by=agent`, {
      token: tenant.owner.token,
    });
    expect(byAgent.body.items).toEqual([expect.objectContaining({ key: agent.id, calls: 4 })]);
  }, 90_000);

  test('an evaluation plays the version it names, else the current one, and says which', async () => {
    const { tenant, agent } = await readyToCall({ prompt: V1_PROMPT });
    await patch(tenant, agent.id, { prompt: V2_PROMPT });
    const scenario = (phrase: string) => ({
      name: 'open homes',
      caller_script: ['When are the open homes?'],
      expect: [phrase],
    });
    const run = async (body: Json) => {
      const started = await api('POST', `${agentPath(tenant, agent.id)}/evaluations`, {
        token: tenant.owner.token,
        body,
      });
      expect(started.status).toBe(201);
      return waitFor(
        async () => {
          const res = await api('GET', `${agentPath(tenant, agent.id)}/evaluations/${started.body.id}`, {
            token: tenant.owner.token,
          });
          return res.body.status !== 'running' ? (res.body as Json) : undefined;
        },
        { what: 'the evaluation to end', timeoutMs: 60_000 },
      );
    };
    const pinned = await run({ agent_version: 1, scenarios: [scenario('Saturdays at 10am')] });
    expect(pinned).toMatchObject({ status: 'completed', agent_version: 1 });
    expect(pinned.results[0].passed).toBe(true);
    const current = await run({ scenarios: [scenario('Sundays at 2pm')] });
    expect(current).toMatchObject({ status: 'completed', agent_version: 2 });
    expect(current.results[0].passed).toBe(true);
  }, 120_000);
});

/** The call runs version 1: its prompt answers, no transfer tool is offered (v1 has no number). */
async function expectVersionOneConversation(
  tenant: Tenant,
  call: Parameters<typeof openSession>[0],
): Promise<void> {
  const relay = await openSession(call);
  expect((await relay.say('When are the open homes?')).reply).toBe('Open homes are on Saturdays at 10am.');
  expect((await relay.say('Can I speak to a person?')).reply).not.toBe('Let me transfer you now.');
  relay.close();
  const ended = await waitForCall(
    tenant,
    call.callId,
    (c) => c.status === 'completed' && c.transcript?.length >= 3,
    30_000,
  );
  expect(ended.agent_version).toBe(1);
  expect(ended.tool_calls.filter((t: Json) => t.name === 'transfer_call')).toEqual([]);
}
