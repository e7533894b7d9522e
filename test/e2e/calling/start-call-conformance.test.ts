import { WorkspaceEntity } from '../../../functions/access/entities.js';
import { BillingAccountEntity } from '../../../functions/billing/entities.js';
import { workspaceCalls } from '../../../functions/calling/call-log-merge.js';
import { claimIdempotencyKey, requestHash } from '../../../functions/platform/idempotency.js';
import { idempotencyScope } from '../../../functions/platform/http/idempotency.js';
import { ApiKeyEntity } from '../../../functions/platform/auth/entities.js';
import { newId } from '../../../functions/platform/ids.js';
import { api, type ApiResponse, type Json } from '../../helpers/http.js';
import { badTokens } from '../../helpers/tokens.js';
import { waitFor } from '../../helpers/wait.js';
import {
  addMember,
  apiKey,
  createAgent,
  newTenant,
  numberFor,
  setBalance,
  setConcurrencyLimit,
  TEST_NUMBERS,
  workspaceRecord,
  ws,
  type Tenant,
  type User,
} from './fixtures.js';

/**
 * Start-call conformance (docs/api.md, docs/api.md's order of checks), through the gateway of
 * the local stack, with both credential kinds. Every refusal is checked to change nothing.
 */

const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

let a: Tenant; // paid, with everything
let b: Tenant; // another tenant
let agentA: Json; // has a number
let agentA2: Json; // no number
let agentB: Json;
let numberA: Json; // connected to agentA
let spareNumberA: Json; // in A's workspace, connected to no agent
let numberA3: Json; // connected to agentA3
let agentA3: Json;
let numberB: Json;
let keyA: string; // start_call
let keyAId: string;
let keyANoScope: string;
let keyB: string;
let member: User;
let viewer: User;

const startPath = (tenant: Tenant, agentId: string) => `${ws(tenant)}/agents/${agentId}/start-call`;

/** Calls stored for the workspace (read from the table, so a deleted workspace counts too). */
async function callCount(tenant: Tenant): Promise<number> {
  return (await workspaceCalls(tenant.workspaceId)).length;
}

/** Waits until the workspace's short calls have ended (only deliberately long calls stay up). */
async function settle(tenant: Tenant): Promise<void> {
  await waitFor(
    async () => {
      const data = await workspaceCalls(tenant.workspaceId);
      return data.every(
        (c) => c.status === 'completed' || c.status === 'failed' || c.toPhone === TEST_NUMBERS.long,
      );
    },
    // A call converses with its agent for about 60 simulated seconds: a busy machine takes longer.
    { what: 'the calls to settle', timeoutMs: 60_000 },
  );
}

/** Runs a refused request and checks that neither the call log nor the concurrency counter moved. */
async function refused(run: () => Promise<ApiResponse>, tenant: Tenant = a): Promise<ApiResponse> {
  await settle(tenant);
  const callsBefore = await callCount(tenant);
  const activeBefore = (await workspaceRecord(tenant.workspaceId))?.activeCalls;
  const res = await run();
  expect(await callCount(tenant)).toBe(callsBefore);
  expect((await workspaceRecord(tenant.workspaceId))?.activeCalls).toBe(activeBefore);
  return res;
}

beforeAll(async () => {
  a = await newTenant({ paid: true });
  b = await newTenant({ paid: true });
  await setConcurrencyLimit(a.workspaceId, 1000);
  agentA = await createAgent(a);
  agentA2 = await createAgent(a, { name: 'No number' });
  agentA3 = await createAgent(a, { name: 'Other agent' });
  agentB = await createAgent(b);
  numberA = await numberFor(a, agentA.id);
  numberA3 = await numberFor(a, agentA3.id);
  numberB = await numberFor(b, agentB.id);
  const spare = await api('POST', `${ws(a)}/phone-numbers`, {
    token: a.owner.token,
    body: { country: 'AU', area_code: '03' },
  });
  expect(spare.status).toBe(201);
  spareNumberA = spare.body;
  ({ key: keyA, keyId: keyAId } = await apiKey(a, ['start_call']));
  ({ key: keyANoScope } = await apiKey(a, ['calls:read', 'agents:read']));
  ({ key: keyB } = await apiKey(b, ['start_call']));
  member = await addMember(a, 'member');
  viewer = await addMember(a, 'viewer');
});

describe('201: the documented CallCreateResponse plus id, agent_id and workspace_id', () => {
  it.each([
    ["a member's JWT", () => member.token, () => member.userId, /^usr_/],
    ['an API key with start_call', () => keyA, () => keyAId, /^key_/],
  ])('with %s', async (_label, token, creator, prefix) => {
    const res = await api('POST', startPath(a, agentA.id), {
      token: token(),
      body: { to_phone: TEST_NUMBERS.answered },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'agent_id',
        'agent_version',
        'created_at',
        'created_by',
        'from_phone',
        'id',
        'record',
        'status',
        'to_phone',
        'workspace_id',
      ].sort(),
    );
    expect(res.body).toMatchObject({
      agent_id: agentA.id,
      workspace_id: a.workspaceId,
      to_phone: TEST_NUMBERS.answered,
      from_phone: numberA.phone_number, // omitted: the agent's connected number
      record: true, // omitted: recorded
      status: 'created',
      created_by: creator(),
    });
    expect(res.body.id).toMatch(/^call_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(res.body.created_by).toMatch(prefix);
    expect(res.body.created_at).toMatch(ISO_WITH_OFFSET);
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it("uses the from_phone given (the agent's own number) and record: false", async () => {
    const res = await api('POST', startPath(a, agentA.id), {
      token: keyA,
      body: {
        to_phone: TEST_NUMBERS.answered,
        from_phone: numberA.phone_number,
        record: false,
        parameters: { name: 'Ada' },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ from_phone: numberA.phone_number, record: false });
  });

  it('accepts null for the optional fields (defaults apply)', async () => {
    const res = await api('POST', startPath(a, agentA.id), {
      token: keyA,
      body: { to_phone: TEST_NUMBERS.answered, from_phone: null, record: null, parameters: null },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ from_phone: numberA.phone_number, record: true });
  });

  it('an organisation admin who is not in the workspace rows may call (org role wins)', async () => {
    const admin = await addMember(a, 'viewer', 'admin');
    const res = await api('POST', startPath(a, agentA.id), {
      token: admin.token,
      body: { to_phone: TEST_NUMBERS.answered },
    });
    expect(res.status).toBe(201);
  });
});

describe('401 Unauthorized', () => {
  it('without a credential', async () => {
    const res = await refused(() =>
      api('POST', startPath(a, agentA.id), { body: { to_phone: TEST_NUMBERS.answered } }),
    );
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Unauthorized' });
  });

  it('for every kind of bad JWT', async () => {
    for (const [kind, token] of Object.entries(await badTokens(member.email))) {
      const res = await api('POST', startPath(a, agentA.id), {
        token,
        body: { to_phone: TEST_NUMBERS.answered },
      });
      expect([kind, res.status, res.body]).toEqual([kind, 401, { error: 'Unauthorized' }]);
    }
  });

  it('for an unknown, a mangled and a revoked API key (even with a bad body: 401 comes first)', async () => {
    const unknown = `vak_${newId('apiKey')}_${'A'.repeat(43)}`;
    const mangled = `${keyA.slice(0, -2)}xx`;
    const { key: revoked, keyId } = await apiKey(a, ['start_call']);
    await ApiKeyEntity.patch({ keyId }).set({ revokedAt: new Date().toISOString() }).go();
    for (const token of [unknown, mangled, revoked]) {
      const res = await refused(() => api('POST', startPath(a, agentA.id), { token, body: { nope: true } }));
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Unauthorized' });
    }
  });
});

describe('403 for API keys (before the body is looked at)', () => {
  it('API key not authorized for this workspace', async () => {
    const res = await refused(() =>
      api('POST', startPath(a, agentA.id), { token: keyB, body: { to_phone: 12 } }),
    );
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'API key not authorized for this workspace' });
  });

  it('API key lacks required scope: start_call', async () => {
    const res = await refused(() => api('POST', startPath(a, agentA.id), { token: keyANoScope, body: {} }));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'API key lacks required scope: start_call' });
  });

  it('a viewer is read-only', async () => {
    const res = await refused(() =>
      api('POST', startPath(a, agentA.id), {
        token: viewer.token,
        body: { to_phone: TEST_NUMBERS.answered },
      }),
    );
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'Viewers have read-only access' });
  });
});

describe('422 with the pydantic-style detail', () => {
  it.each([
    ['JWT', () => member.token],
    ['API key', () => keyA],
  ])('absent to_phone (%s) is exactly the documented entry', async (_label, token) => {
    const body = { record: true };
    const res = await refused(() => api('POST', startPath(a, agentA.id), { token: token(), body }));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [{ type: 'missing', loc: ['body', 'to_phone'], msg: 'Field required', input: body }],
    });
  });

  it('reports each problem as its own entry', async () => {
    const body = {
      to_phone: '0491 570 156',
      from_phone: '+1234',
      record: 'yes',
      parameters: { name: 7, ok: 'fine' },
      colour: 'blue',
    };
    const res = await refused(() => api('POST', startPath(a, agentA.id), { token: keyA, body }));
    expect(res.status).toBe(422);
    const byLoc = Object.fromEntries((res.body.detail as Json[]).map((d) => [d.loc.join('.'), d]));
    expect(Object.keys(byLoc).sort()).toEqual([
      'body.colour',
      'body.from_phone',
      'body.parameters.name',
      'body.record',
      'body.to_phone',
    ]);
    expect(byLoc['body.to_phone']).toEqual({
      type: 'value_error',
      loc: ['body', 'to_phone'],
      msg: 'Value error, value is not a valid phone number in E.164 format',
      input: '0491 570 156',
    });
    expect(byLoc['body.from_phone']).toMatchObject({ type: 'value_error', input: '+1234' });
    expect(byLoc['body.record']).toEqual({
      type: 'bool_type',
      loc: ['body', 'record'],
      msg: 'Input should be a valid boolean',
      input: 'yes',
    });
    expect(byLoc['body.parameters.name']).toEqual({
      type: 'string_type',
      loc: ['body', 'parameters', 'name'],
      msg: 'Input should be a valid string',
      input: 7,
    });
    expect(byLoc['body.colour']).toEqual({
      type: 'extra_forbidden',
      loc: ['body', 'colour'],
      msg: 'Extra inputs are not permitted',
      input: 'blue',
    });
  });

  it.each([
    ['a list', ['a']],
    ['a string', 'name=Sam'],
    ['a number', 3],
  ])('parameters that are %s: dict_type', async (_label, parameters) => {
    const res = await api('POST', startPath(a, agentA.id), {
      token: keyA,
      body: { to_phone: TEST_NUMBERS.answered, parameters },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      {
        type: 'dict_type',
        loc: ['body', 'parameters'],
        msg: 'Input should be a valid dictionary',
        input: parameters,
      },
    ]);
  });

  it('a parameter with an empty name is refused (422 on that parameter), never stored', async () => {
    const res = await api('POST', startPath(a, agentA.id), {
      token: keyA,
      body: { to_phone: TEST_NUMBERS.answered, parameters: { '': 'x' } },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toHaveLength(1);
    expect(res.body.detail[0].loc.slice(0, 2)).toEqual(['body', 'parameters']);
  });

  it('a to_phone that is not a string: string_type', async () => {
    const res = await api('POST', startPath(a, agentA.id), {
      token: member.token,
      body: { to_phone: 61491570156 },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      {
        type: 'string_type',
        loc: ['body', 'to_phone'],
        msg: 'Input should be a valid string',
        input: 61491570156,
      },
    ]);
  });

  it('a body that is not JSON: json_invalid, never 500', async () => {
    const res = await refused(() =>
      api('POST', startPath(a, agentA.id), {
        token: keyA,
        rawBody: '{"to_phone": ',
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ type: 'json_invalid', loc: ['body', 0] });
  });

  it('no body at all: the body is missing', async () => {
    const res = await api('POST', startPath(a, agentA.id), { token: keyA });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
  });

  it('the body is checked before the workspace (422 beats 404)', async () => {
    const res = await api('POST', startPath({ ...a, workspaceId: newId('workspace') }, agentA.id), {
      token: member.token,
      body: {},
    });
    expect(res.status).toBe(422);
  });
});

describe('404, in order: workspace, agent, number', () => {
  it('Workspace not found: unknown, malformed, not a member, deleted', async () => {
    const outsider = await addMember(b, 'member');
    const cases: [string, string][] = [
      [ws({ ...a, workspaceId: newId('workspace') }), member.token],
      ['/api/v1/workspaces/not-a-workspace', member.token],
      [ws(a), outsider.token],
      [ws(a), b.owner.token],
    ];
    for (const [base, token] of cases) {
      const res = await api('POST', `${base}/agents/${agentA.id}/start-call`, {
        token,
        body: { to_phone: TEST_NUMBERS.answered },
      });
      expect([base, res.status, res.body]).toEqual([base, 404, { error: 'Workspace not found' }]);
    }
    // A deleted workspace, with its own API key.
    const gone = await newTenant({ paid: true });
    const goneAgent = await createAgent(gone);
    await numberFor(gone, goneAgent.id);
    const { key } = await apiKey(gone);
    await WorkspaceEntity.patch({ workspaceId: gone.workspaceId })
      .set({ deletedAt: new Date().toISOString() })
      .go();
    const res = await refused(
      () =>
        api('POST', startPath(gone, goneAgent.id), { token: key, body: { to_phone: TEST_NUMBERS.answered } }),
      gone,
    );
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Workspace not found' });
  });

  it("Agent not found: unknown, malformed, another tenant's (even with a bad from_phone)", async () => {
    for (const agentId of [newId('agent'), 'nope', agentB.id]) {
      for (const token of [member.token, keyA]) {
        const res = await refused(() =>
          api('POST', startPath(a, agentId), {
            token,
            body: { to_phone: TEST_NUMBERS.answered, from_phone: '+61255500000' },
          }),
        );
        expect([agentId, res.status, res.body]).toEqual([agentId, 404, { error: 'Agent not found' }]);
      }
    }
  });

  it("Number not found in workspace: from_phone unknown, or another tenant's", async () => {
    for (const from of ['+61255500001', numberB.phone_number]) {
      for (const token of [member.token, keyA]) {
        const res = await refused(() =>
          api('POST', startPath(a, agentA.id), {
            token,
            body: { to_phone: TEST_NUMBERS.answered, from_phone: from },
          }),
        );
        expect([from, res.status, res.body]).toEqual([from, 404, { error: 'Number not found in workspace' }]);
      }
    }
  });

  it('Number not found in workspace: from_phone omitted and the agent has no connected number (docs/api.md rule 3)', async () => {
    for (const token of [member.token, keyA]) {
      const res = await refused(() =>
        api('POST', startPath(a, agentA2.id), { token, body: { to_phone: TEST_NUMBERS.answered } }),
      );
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Number not found in workspace' });
    }
  });

  it('Number not associated with an agent: a workspace number connected to no agent, or to another agent', async () => {
    for (const from of [spareNumberA.phone_number, numberA3.phone_number]) {
      for (const token of [member.token, keyA]) {
        const res = await refused(() =>
          api('POST', startPath(a, agentA.id), {
            token,
            body: { to_phone: TEST_NUMBERS.answered, from_phone: from },
          }),
        );
        expect([from, res.status, res.body]).toEqual([
          from,
          404,
          { error: 'Number not associated with an agent' },
        ]);
      }
    }
  });
});

describe('402 Insufficient credits, then 429 Too many concurrent calls', () => {
  it('402 when the organisation has no credits left (number checks come first)', async () => {
    const t = await newTenant({ paid: true });
    const agent = await createAgent(t);
    await numberFor(t, agent.id);
    const { key } = await apiKey(t);
    await setBalance(t.organisationId, 0);
    const unknownNumber = await api('POST', startPath(t, agent.id), {
      token: key,
      body: { to_phone: TEST_NUMBERS.answered, from_phone: '+61255500002' },
    });
    expect(unknownNumber.status).toBe(404);
    for (const token of [t.owner.token, key]) {
      const res = await refused(
        () => api('POST', startPath(t, agent.id), { token, body: { to_phone: TEST_NUMBERS.answered } }),
        t,
      );
      expect(res.status).toBe(402);
      expect(res.body).toEqual({ error: 'Insufficient credits' });
    }
    // Agents suspended by billing (Free plan exhausted) is the same answer.
    await setBalance(t.organisationId, 600);
    await BillingAccountEntity.patch({ organisationId: t.organisationId })
      .set({ agentsSuspended: true })
      .go();
    const suspended = await api('POST', startPath(t, agent.id), {
      token: key,
      body: { to_phone: TEST_NUMBERS.answered },
    });
    expect(suspended.status).toBe(402);
    expect(suspended.body).toEqual({ error: 'Insufficient credits' });
  });

  it("429 with Retry-After over the workspace's cap of calls not yet ended; 402 is checked before it", async () => {
    const t = await newTenant({ paid: true });
    const agent = await createAgent(t);
    await numberFor(t, agent.id);
    const { key } = await apiKey(t);
    await setConcurrencyLimit(t.workspaceId, 1);
    const first = await api('POST', startPath(t, agent.id), {
      token: key,
      body: { to_phone: TEST_NUMBERS.long },
    });
    expect(first.status).toBe(201);
    for (const token of [t.owner.token, key]) {
      const res = await refused(
        () => api('POST', startPath(t, agent.id), { token, body: { to_phone: TEST_NUMBERS.answered } }),
        t,
      );
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ error: 'Too many concurrent calls' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    await setBalance(t.organisationId, 0);
    const broke = await api('POST', startPath(t, agent.id), {
      token: key,
      body: { to_phone: TEST_NUMBERS.answered },
    });
    expect(broke.status).toBe(402);
    await setBalance(t.organisationId, 60_000);
    // Ending the first call gives the slot back.
    const hung = await api('POST', `${ws(t)}/calls/${first.body.id}/hangup`, { token: t.owner.token });
    expect(hung.status).toBe(200);
    expect((await workspaceRecord(t.workspaceId))?.activeCalls).toBe(0);
    const next = await api('POST', startPath(t, agent.id), {
      token: key,
      body: { to_phone: TEST_NUMBERS.answered },
    });
    expect(next.status).toBe(201);
  });

  it('the workspace setting can be changed through the tenancy route and is honoured', async () => {
    const t = await newTenant({ paid: true });
    const agent = await createAgent(t);
    await numberFor(t, agent.id);
    const patched = await api('PATCH', ws(t), { token: t.owner.token, body: { concurrent_call_limit: 1 } });
    expect(patched.status).toBe(200);
    const first = await api('POST', startPath(t, agent.id), {
      token: t.owner.token,
      body: { to_phone: TEST_NUMBERS.long },
    });
    expect(first.status).toBe(201);
    expect(
      (
        await api('POST', startPath(t, agent.id), {
          token: t.owner.token,
          body: { to_phone: TEST_NUMBERS.long },
        })
      ).status,
    ).toBe(429);
    // Not left playing for half an hour (simulated): later tests wait for the stack to be quiescent.
    expect(
      (await api('POST', `${ws(t)}/calls/${first.body.id}/hangup`, { token: t.owner.token })).status,
    ).toBe(200);
  });
});

describe('Idempotency-Key', () => {
  it('a retry with the same key and body returns the first call; no second call', async () => {
    const key = `retry-${newId('event')}`;
    const before = await callCount(a);
    const body = { to_phone: TEST_NUMBERS.answered, parameters: { name: 'Kim', suburb: 'Carlton' } };
    const first = await api('POST', startPath(a, agentA.id), {
      token: keyA,
      body,
      headers: { 'idempotency-key': key },
    });
    expect(first.status).toBe(201);
    // Same body with its fields in another order is the same request.
    const again = await api('POST', startPath(a, agentA.id), {
      token: keyA,
      body: { parameters: { suburb: 'Carlton', name: 'Kim' }, to_phone: TEST_NUMBERS.answered },
      headers: { 'idempotency-key': key },
    });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await callCount(a)).toBe(before + 1);
  });

  it("a key is the caller's: the same key from another API key or a member is another call", async () => {
    const key = `per-caller-${newId('event')}`;
    const before = await callCount(a);
    const body = { to_phone: TEST_NUMBERS.answered };
    const { key: otherKey } = await apiKey(a, ['start_call']);
    const send = (token: string) =>
      api('POST', startPath(a, agentA.id), { token, body, headers: { 'idempotency-key': key } });
    const first = await send(keyA);
    const byOtherKey = await send(otherKey);
    const byMember = await send(member.token);
    for (const res of [first, byOtherKey, byMember]) expect(res.status).toBe(201);
    expect(new Set([first.body.id, byOtherKey.body.id, byMember.body.id]).size).toBe(3);
    expect(byOtherKey.headers['idempotent-replayed']).toBeUndefined();
    // Each caller's retry replays its own call.
    for (const [token, res] of [
      [keyA, first],
      [otherKey, byOtherKey],
      [member.token, byMember],
    ] as const)
      expect((await send(token)).body).toEqual(res.body);
    expect(await callCount(a)).toBe(before + 3);
  });

  it('the same key with another body is 409', async () => {
    const key = `mismatch-${newId('event')}`;
    const first = await api('POST', startPath(a, agentA.id), {
      token: keyA,
      body: { to_phone: TEST_NUMBERS.answered },
      headers: { 'idempotency-key': key },
    });
    expect(first.status).toBe(201);
    const other = await refused(() =>
      api('POST', startPath(a, agentA.id), {
        token: keyA,
        body: { to_phone: TEST_NUMBERS.busy },
        headers: { 'idempotency-key': key },
      }),
    );
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ error: 'Idempotency-Key was already used with a different request' });
    const otherAgent = await api('POST', startPath(a, agentA3.id), {
      token: keyA,
      body: { to_phone: TEST_NUMBERS.answered },
      headers: { 'idempotency-key': key },
    });
    expect(otherAgent.status).toBe(409);
  });

  it('a second request while the first is still in flight is 409', async () => {
    const key = `inflight-${newId('event')}`;
    const body = { to_phone: TEST_NUMBERS.answered };
    // The first request's claim, exactly as the service takes it (keyA's, in a's workspace).
    const scope = idempotencyScope(
      { workspace_id: a.workspaceId },
      {
        kind: 'api_key',
        keyId: keyAId,
        workspaceId: a.workspaceId,
        organisationId: a.organisationId,
        scopes: ['start_call'],
      },
    );
    const claim = await claimIdempotencyKey(scope, key, requestHash({ agent_id: agentA.id, body }));
    expect(claim.kind).toBe('claimed');
    const res = await refused(() =>
      api('POST', startPath(a, agentA.id), { token: keyA, body, headers: { 'idempotency-key': key } }),
    );
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'A request with this Idempotency-Key is still in progress' });
  });

  it('concurrent requests with one key create one call', async () => {
    const key = `race-${newId('event')}`;
    const before = await callCount(a);
    const body = { to_phone: TEST_NUMBERS.answered };
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        api('POST', startPath(a, agentA.id), { token: keyA, body, headers: { 'idempotency-key': key } }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    for (const r of results.filter((x) => x.status !== 201))
      expect(r.body).toEqual({ error: 'A request with this Idempotency-Key is still in progress' });
    expect(await callCount(a)).toBe(before + 1);
  });

  it('keys are per workspace, and a refused request gives its key back', async () => {
    const key = `shared-${newId('event')}`;
    const inA = await api('POST', startPath(a, agentA.id), {
      token: keyA,
      body: { to_phone: TEST_NUMBERS.answered },
      headers: { 'idempotency-key': key },
    });
    const inB = await api('POST', startPath(b, agentB.id), {
      token: keyB,
      body: { to_phone: TEST_NUMBERS.answered },
      headers: { 'idempotency-key': key },
    });
    expect(inA.status).toBe(201);
    expect(inB.status).toBe(201);
    expect(inB.body.id).not.toBe(inA.body.id);

    const retryKey = `after-404-${newId('event')}`;
    const body = { to_phone: TEST_NUMBERS.answered };
    const refusedFirst = await api('POST', startPath(a, agentA2.id), {
      token: keyA,
      body,
      headers: { 'idempotency-key': retryKey },
    });
    expect(refusedFirst.status).toBe(404);
    await numberFor(a, agentA2.id);
    const retried = await api('POST', startPath(a, agentA2.id), {
      token: keyA,
      body,
      headers: { 'idempotency-key': retryKey },
    });
    expect(retried.status).toBe(201);
  });

  it('a malformed key is 422', async () => {
    const res = await api('POST', startPath(a, agentA.id), {
      token: keyA,
      body: { to_phone: TEST_NUMBERS.answered },
      headers: { 'idempotency-key': 'x'.repeat(300) },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['header', 'idempotency-key']);
  });
});
