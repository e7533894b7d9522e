import { api, type Json } from '../../helpers/http.js';
import { waitFor } from '../../helpers/wait.js';
import {
  addMember,
  apiKey,
  createWorkflow,
  newTenant,
  workflowBody,
  workflowPath,
  workflowsPath,
  type Tenant,
  type User,
} from './fixtures.js';

/**
 * Workflows: create, read, change (enable/disable), delete; the plan gate (402 on writes), viewers
 * read only (403), another tenant's workflow is unknown (404), bad bodies are 422 and change nothing.
 */

let tenant: Tenant;
let member: User;
let viewer: User;

beforeAll(async () => {
  tenant = await newTenant({ paid: true });
  member = await addMember(tenant, 'member');
  viewer = await addMember(tenant, 'viewer');
});

describe('workflows', () => {
  it('create, read, list, disable and enable, change, delete', async () => {
    const body = workflowBody({
      name: 'Hot replies',
      trigger: { type: 'event', event: 'sms.received' },
      conditions: [{ field: 'hot', op: 'eq', value: true }],
      action: { type: 'update_contact', fields: { tags: ['hot'] } },
    });
    const created = await api('POST', workflowsPath(tenant), { token: member.token, body });
    expect(created.status).toBe(201);
    const workflow = created.body as Json;
    expect(workflow).toMatchObject({
      id: expect.stringMatching(/^wf_/),
      workspace_id: tenant.workspaceId,
      name: 'Hot replies',
      trigger: { type: 'event', event: 'sms.received' },
      auto_mode: false,
      enabled: true,
      trigger_url: null,
      stages: {
        signal: { yolo: false, conditions: [{ field: 'hot', op: 'eq', value: true }] },
        task: { yolo: false, action: { type: 'update_contact', fields: { tags: ['hot'] } } },
        outcome: { yolo: false, emit_event: true },
      },
    });

    const got = await api('GET', workflowPath(tenant, workflow.id), { token: viewer.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(workflow);
    const listed = await api('GET', workflowsPath(tenant), { token: viewer.token });
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((w: Json) => w.id)).toContain(workflow.id);

    const disabled = await api('PATCH', workflowPath(tenant, workflow.id), {
      token: member.token,
      body: { enabled: false },
    });
    expect(disabled.status).toBe(200);
    expect(disabled.body.enabled).toBe(false);
    const enabled = await api('PATCH', workflowPath(tenant, workflow.id), {
      token: member.token,
      body: {
        enabled: true,
        auto_mode: true,
        trigger: { type: 'external' },
        stages: { outcome: { yolo: true, emit_event: false } },
      },
    });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({
      enabled: true,
      auto_mode: true,
      trigger: { type: 'external' },
      trigger_url: expect.stringContaining(`/api/v1/triggers/${workflow.id}`),
      stages: { signal: { yolo: false }, outcome: { yolo: true, emit_event: false } },
    });

    const deleted = await api('DELETE', workflowPath(tenant, workflow.id), { token: member.token });
    expect(deleted.status).toBe(204);
    expect((await api('GET', workflowPath(tenant, workflow.id), { token: member.token })).status).toBe(404);
    expect((await api('DELETE', workflowPath(tenant, workflow.id), { token: member.token })).status).toBe(
      404,
    );
  });

  it('bad bodies are 422 and change nothing', async () => {
    const before = await api('GET', workflowsPath(tenant), { token: member.token });
    const bad: Json[] = [
      { ...workflowBody({}), trigger: { type: 'event', event: 'campaign.completed' } },
      workflowBody({ conditions: [{ field: 'x', op: 'like', value: 'y' }] }),
      workflowBody({ action: { type: 'fax' } }),
      workflowBody({ action: { type: 'sms' } }),
      { ...workflowBody({}), extra: true },
      { ...workflowBody({}), name: '' },
      workflowBody({ action: { type: 'call', agent_id: 'ag_01J00000000000000000000000' } }),
    ];
    for (const body of bad) {
      const res = await api('POST', workflowsPath(tenant), { token: member.token, body });
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
      expect(res.body.detail.length).toBeGreaterThan(0);
    }
    const after = await api('GET', workflowsPath(tenant), { token: member.token });
    expect(after.body.items).toEqual(before.body.items);
  });

  it('viewers read only: every write is 403 and changes nothing', async () => {
    const workflow = await createWorkflow(tenant, workflowBody({}));
    const create = await api('POST', workflowsPath(tenant), { token: viewer.token, body: workflowBody({}) });
    expect(create.status).toBe(403);
    expect(create.body).toEqual({ error: 'Viewers have read-only access' });
    const patch = await api('PATCH', workflowPath(tenant, workflow.id), {
      token: viewer.token,
      body: { enabled: false },
    });
    expect(patch.status).toBe(403);
    expect((await api('DELETE', workflowPath(tenant, workflow.id), { token: viewer.token })).status).toBe(
      403,
    );
    const runReview = await api(
      'POST',
      `${workflowPath(tenant, workflow.id)}/runs/wfr_01J00000000000000000000000/stages/signal/approve`,
      { token: viewer.token },
    );
    expect(runReview.status).toBe(403);
    const got = await api('GET', workflowPath(tenant, workflow.id), { token: viewer.token });
    expect(got.body).toEqual(workflow);
  });

  it('another tenant’s workflow is 404 everywhere; an API key is refused on the management routes', async () => {
    const workflow = await createWorkflow(tenant, workflowBody({}));
    const other = await newTenant({ paid: true });
    // The other tenant's owner, on their own workspace path with this workflow's id: not found.
    const otherPath = `/api/v1/workspaces/${other.workspaceId}/workflows/${workflow.id}`;
    expect((await api('GET', otherPath, { token: other.owner.token })).status).toBe(404);
    expect(
      (await api('PATCH', otherPath, { token: other.owner.token, body: { enabled: false } })).status,
    ).toBe(404);
    expect((await api('DELETE', otherPath, { token: other.owner.token })).status).toBe(404);
    expect((await api('GET', `${otherPath}/runs`, { token: other.owner.token })).status).toBe(404);
    // And on this tenant's path: not a member.
    expect((await api('GET', workflowPath(tenant, workflow.id), { token: other.owner.token })).status).toBe(
      404,
    );
    expect((await api('GET', workflowsPath(tenant), { token: other.owner.token })).status).toBe(404);
    // Unknown ids of the right and the wrong shape.
    expect(
      (await api('GET', workflowPath(tenant, 'wf_01J00000000000000000000000'), { token: member.token }))
        .status,
    ).toBe(404);
    expect((await api('GET', workflowPath(tenant, 'nope'), { token: member.token })).status).toBe(404);
    const key = (await apiKey(tenant, ['workflows:trigger'])).key;
    expect((await api('GET', workflowsPath(tenant), { token: key })).status).toBe(403);
    // A run waiting for review: the other tenant can neither see nor approve it.
    const triggered = await api('POST', `/api/v1/triggers/${workflow.id}`, { token: key, body: {} });
    expect(triggered.status).toBe(202);
    const runId = triggered.body.run_id as string;
    const run = await waitFor(async () => {
      const res = await api('GET', `${workflowPath(tenant, workflow.id)}/runs/${runId}`, {
        token: member.token,
      });
      return res.body.status === 'waiting_review' ? res.body : undefined;
    });
    for (const path of [`${otherPath}/runs/${runId}`, `${workflowPath(tenant, workflow.id)}/runs/${runId}`]) {
      expect((await api('GET', path, { token: other.owner.token })).status).toBe(404);
      expect((await api('POST', `${path}/stages/signal/approve`, { token: other.owner.token })).status).toBe(
        404,
      );
      expect((await api('POST', `${path}/stages/signal/reject`, { token: other.owner.token })).status).toBe(
        404,
      );
    }
    expect(
      (
        await api('GET', `${workflowPath(tenant, workflow.id)}/runs/wfr_01J00000000000000000000000`, {
          token: member.token,
        })
      ).status,
    ).toBe(404);
    const unchanged = await api('GET', `${workflowPath(tenant, workflow.id)}/runs/${runId}`, {
      token: viewer.token,
    });
    expect(unchanged.body).toEqual(run);
    // Still there, unchanged.
    const got = await api('GET', workflowPath(tenant, workflow.id), { token: member.token });
    expect(got.body).toEqual(workflow);
  });

  it('plan gate: writes are 402 without the plan feature; reads stay open', async () => {
    const free = await newTenant();
    const res = await api('POST', workflowsPath(free), { token: free.owner.token, body: workflowBody({}) });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ error: 'Your plan does not include workflows' });
    const list = await api('GET', workflowsPath(free), { token: free.owner.token });
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([]);
  });
});
