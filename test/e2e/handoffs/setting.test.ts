import { AgentEntity } from '../../../functions/agents/entities.js';
import { api, type Json } from '../../helpers/http.js';
import { addMember, createAgent, newTenant, ws, type Tenant } from '../calling/fixtures.js';

/**
 * The agent setting `handoffs` over the local stack (docs/api.md "Agents that hand off"): targets of
 * the same workspace other than the agent, at most 10, each described in 1–500 characters, else 422
 * and nothing changed; PATCH replaces the list and a change makes a version (the version holds it, and
 * the item keeps it in the camelCase shape the conversation engine reads); deleting a target works;
 * a viewer's write is 403 and another organisation's 404.
 */

const agentPath = (t: Tenant, agentId: string) => `${ws(t)}/agents/${agentId}`;
const patch = (t: Tenant, agentId: string, body: Json, token = t.owner.token) =>
  api('PATCH', agentPath(t, agentId), { token, body });
const get = async (t: Tenant, agentId: string) =>
  (await api('GET', agentPath(t, agentId), { token: t.owner.token })).body as Json;
const versions = async (t: Tenant, agentId: string) =>
  (await api('GET', `${agentPath(t, agentId)}/versions`, { token: t.owner.token })).body.items as Json[];

const SALES = "The caller wants to buy, or asks about a listing's price or sale, or asks for sales";

let tenant: Tenant;
let reception: Json;
let sales: Json;
let lettings: Json;

beforeAll(async () => {
  tenant = await newTenant();
  [sales, lettings] = await Promise.all([
    createAgent(tenant, { name: 'Sales' }),
    createAgent(tenant, { name: 'Lettings' }),
  ]);
  reception = await createAgent(tenant, { name: 'Reception' });
});

describe('handoffs on an agent', () => {
  test('created with targets: shown with their context (default full), stored as the engine reads them', async () => {
    const made = await api('POST', `${ws(tenant)}/agents`, {
      token: tenant.owner.token,
      body: {
        name: 'Front desk',
        handoffs: [
          { agent_id: sales.id, description: SALES },
          { agent_id: lettings.id, description: 'The caller wants to rent', context: 'summary' },
        ],
      },
    });
    expect(made.status).toBe(201);
    expect(made.body.handoffs).toEqual([
      { agent_id: sales.id, description: SALES, context: 'full' },
      { agent_id: lettings.id, description: 'The caller wants to rent', context: 'summary' },
    ]);
    const { data } = await AgentEntity.get({ workspaceId: tenant.workspaceId, agentId: made.body.id }).go();
    expect(data?.handoffs).toEqual([
      { agentId: sales.id, description: SALES, context: 'full' },
      { agentId: lettings.id, description: 'The caller wants to rent', context: 'summary' },
    ]);
    // An agent without targets shows an empty list.
    expect((await get(tenant, sales.id)).handoffs).toEqual([]);
  });

  test('PATCH replaces the list and makes a version; the same list again makes none; [] removes it', async () => {
    const before = await get(tenant, reception.id);
    const set = await patch(tenant, reception.id, {
      handoffs: [{ agent_id: sales.id, description: SALES, context: 'none' }],
    });
    expect(set.status).toBe(200);
    expect(set.body.handoffs).toEqual([{ agent_id: sales.id, description: SALES, context: 'none' }]);
    expect(set.body.version).toBe(before.version + 1);
    const [latest] = await versions(tenant, reception.id);
    expect(latest).toMatchObject({ version: before.version + 1, changed: ['handoffs'] });
    const version = await api('GET', `${agentPath(tenant, reception.id)}/versions/${before.version + 1}`, {
      token: tenant.owner.token,
    });
    expect(version.body.agent.handoffs).toEqual([
      { agent_id: sales.id, description: SALES, context: 'none' },
    ]);

    const replaced = await patch(tenant, reception.id, {
      handoffs: [{ agent_id: lettings.id, description: 'The caller wants to rent' }],
    });
    expect(replaced.body.handoffs).toEqual([
      { agent_id: lettings.id, description: 'The caller wants to rent', context: 'full' },
    ]);
    expect(replaced.body.version).toBe(before.version + 2);

    const same = await patch(tenant, reception.id, {
      handoffs: [{ agent_id: lettings.id, description: 'The caller wants to rent', context: 'full' }],
    });
    expect(same.body.version).toBe(before.version + 2);
    expect((await versions(tenant, reception.id))[0].version).toBe(before.version + 2);

    const cleared = await patch(tenant, reception.id, { handoffs: [] });
    expect(cleared.body).toMatchObject({ handoffs: [], version: before.version + 3 });
    const { data } = await AgentEntity.get({ workspaceId: tenant.workspaceId, agentId: reception.id }).go();
    expect(data?.handoffs).toBeUndefined();
    // Restoring the version with targets brings them back, as any versioned field.
    const restored = await api(
      'POST',
      `${agentPath(tenant, reception.id)}/versions/${before.version + 1}/restore`,
      {
        token: tenant.owner.token,
      },
    );
    expect(restored.status).toBe(200);
    expect(restored.body.handoffs).toEqual([{ agent_id: sales.id, description: SALES, context: 'none' }]);
  });

  test('bad targets and bad lists are 422 on their field, and nothing changes', async () => {
    const other = await newTenant();
    const foreign = await createAgent(other, { name: 'Elsewhere' });
    const start = await patch(tenant, reception.id, {
      handoffs: [{ agent_id: sales.id, description: SALES }],
    });
    const unchanged = async () => {
      const now = await get(tenant, reception.id);
      expect(now.version).toBe(start.body.version);
      expect(now.handoffs).toEqual(start.body.handoffs);
    };
    const many = Array.from({ length: 11 }, (_, i) => ({ agent_id: `agent_${i}`, description: 'x' }));
    const cases: [string, Json, (string | number)[], RegExp][] = [
      [
        "another workspace's agent",
        [{ agent_id: foreign.id, description: SALES }],
        ['body', 'handoffs', 0, 'agent_id'],
        /not found in this workspace/,
      ],
      [
        'itself',
        [
          { agent_id: sales.id, description: SALES },
          { agent_id: reception.id, description: 'Myself' },
        ],
        ['body', 'handoffs', 1, 'agent_id'],
        /cannot hand over to itself/,
      ],
      ['11 targets', many, ['body', 'handoffs'], /10/],
      [
        'a description over 500',
        [{ agent_id: sales.id, description: 'x'.repeat(501) }],
        ['body', 'handoffs', 0, 'description'],
        /500/,
      ],
      [
        'an empty description',
        [{ agent_id: sales.id, description: '  ' }],
        ['body', 'handoffs', 0, 'description'],
        /./,
      ],
      [
        'a control character in the description',
        [{ agent_id: sales.id, description: 'sales\u0007' }],
        ['body', 'handoffs', 0, 'description'],
        /control characters/,
      ],
      [
        'an unknown context',
        [{ agent_id: sales.id, description: SALES, context: 'everything' }],
        ['body', 'handoffs', 0, 'context'],
        /./,
      ],
      [
        'the same target twice',
        [
          { agent_id: sales.id, description: SALES },
          { agent_id: sales.id, description: 'again' },
        ],
        ['body', 'handoffs'],
        /once/,
      ],
      [
        'an agent that does not exist',
        [{ agent_id: 'agent_nope', description: SALES }],
        ['body', 'handoffs', 0, 'agent_id'],
        /not found/,
      ],
    ];
    for (const [what, handoffs, loc, message] of cases) {
      const res = await patch(tenant, reception.id, { handoffs });
      expect([what, res.status]).toEqual([what, 422]);
      expect(res.body.detail).toEqual(
        expect.arrayContaining([expect.objectContaining({ loc, msg: expect.stringMatching(message) })]),
      );
      await unchanged();
    }
    // On create too: a foreign target makes no agent.
    const listBefore = (await api('GET', `${ws(tenant)}/agents?limit=100`, { token: tenant.owner.token }))
      .body.items;
    const refused = await api('POST', `${ws(tenant)}/agents`, {
      token: tenant.owner.token,
      body: { name: 'Refused', handoffs: [{ agent_id: foreign.id, description: SALES }] },
    });
    expect(refused.status).toBe(422);
    const listAfter = (await api('GET', `${ws(tenant)}/agents?limit=100`, { token: tenant.owner.token })).body
      .items;
    expect(listAfter).toHaveLength(listBefore.length);
  });

  test("a viewer's write is 403 and another organisation's is 404; nothing changes", async () => {
    const start = await get(tenant, reception.id);
    const viewer = await addMember(tenant, 'viewer');
    const asViewer = await patch(
      tenant,
      reception.id,
      { handoffs: [{ agent_id: lettings.id, description: 'rent' }] },
      viewer.token,
    );
    expect(asViewer.status).toBe(403);
    // The viewer reads the setting.
    const read = await api('GET', agentPath(tenant, reception.id), { token: viewer.token });
    expect(read.body.handoffs).toEqual(start.handoffs);

    const other = await newTenant();
    const cross = await patch(tenant, reception.id, { handoffs: [] }, other.owner.token);
    expect(cross.status).toBe(404);
    // Naming this workspace's agents from another organisation's workspace: not found there.
    const mine = await createAgent(other, { name: 'Mine' });
    const foreignTarget = await patch(other, mine.id, {
      handoffs: [{ agent_id: sales.id, description: SALES }],
    });
    expect(foreignTarget.status).toBe(422);

    const now = await get(tenant, reception.id);
    expect([now.version, now.handoffs]).toEqual([start.version, start.handoffs]);
  });

  test('deleting a target works; the agents that name it keep the entry (the engine refuses a handoff to it)', async () => {
    const gone = await createAgent(tenant, { name: 'Short-lived' });
    const front = await createAgent(tenant, {
      name: 'Front',
      handoffs: [{ agent_id: gone.id, description: 'Asks for the short-lived one' }],
    });
    const deleted = await api('DELETE', agentPath(tenant, gone.id), { token: tenant.owner.token });
    expect(deleted.status).toBe(204);
    expect((await get(tenant, front.id)).handoffs).toEqual([
      { agent_id: gone.id, description: 'Asks for the short-lived one', context: 'full' },
    ]);
    // Saving the list again with the deleted target is refused.
    const again = await patch(tenant, front.id, {
      handoffs: [{ agent_id: gone.id, description: 'Asks for the short-lived one, again' }],
    });
    expect(again.status).toBe(422);
  });
});
