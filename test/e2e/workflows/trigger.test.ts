import { recordCallOnContact } from '../../../functions/contacts/post-call-changes.js';
import { newId } from '../../../functions/platform/ids.js';
import { api, type Json } from '../../helpers/http.js';
import { waitForQuiescence } from '../../helpers/wait.js';
import {
  apiKey,
  createContact,
  createWorkflow,
  listRuns,
  newTenant,
  notesOf,
  setPlan,
  trigger,
  triggerPath,
  waitForRun,
  workflowBody,
  workflowPath,
  type Tenant,
} from './fixtures.js';

/**
 * The external trigger, POST /api/v1/triggers/{workflow_id}: an API key of the workflow's workspace
 * with scope workflows:trigger; the body is the event (a JSON object ≤ 64 KB); Idempotency-Key
 * answers the first run again; 60 triggers a minute per workflow, then 429 with Retry-After.
 */

let tenant: Tenant;
let key: string;
let contact: Json;
let workflow: Json;

beforeAll(async () => {
  tenant = await newTenant({ paid: true });
  key = (await apiKey(tenant, ['workflows:trigger'])).key;
  contact = await createContact(tenant, { first_name: 'Sam', phone: '+61491570201' });
  workflow = await createWorkflow(
    tenant,
    workflowBody({
      name: 'Inbound lead',
      auto_mode: true,
      yolo: true,
      conditions: [{ field: 'budget', op: 'gt', value: 500000 }],
      action: { type: 'add_note', text: 'Lead from {{source}} for {{contact.first_name}}' },
    }),
  );
});

describe('external trigger', () => {
  it('202 {run_id}; the run goes through alone (auto mode, all yolo) and records its note', async () => {
    const res = await trigger(workflow.id, key, {
      contact_id: contact.id,
      budget: 750000,
      source: 'web form',
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: res.body.run_id, run_id: expect.stringMatching(/^wfr_/) });
    const run = await waitForRun(tenant, workflow.id, res.body.run_id, (r) => r.status === 'completed');
    expect(run).toMatchObject({
      workflow_id: workflow.id,
      event: { type: 'external', data: { contact_id: contact.id, budget: 750000 } },
      contact_id: contact.id,
      auto_mode: true,
      stages: {
        signal: { state: 'done', yolo: true, result: { matched: true } },
        task: { state: 'done', result: { action: 'add_note', note_id: expect.stringMatching(/^note_/) } },
        outcome: { state: 'done', result: { note_id: expect.stringMatching(/^note_/) } },
      },
    });
    const notes = await notesOf(tenant, contact.id);
    expect(notes.filter((n) => n.text === 'Lead from web form for Sam')).toHaveLength(1);
    expect(notes.filter((n) => n.text.startsWith('Workflow "Inbound lead": added a note'))).toHaveLength(1);
  });

  it("reads the contact's last call from its call summary (a call's post-call change)", async () => {
    const called = await createContact(tenant, { first_name: 'Alex', phone: '+61491570202' });
    const callId = newId('call');
    await recordCallOnContact(tenant.workspaceId, called.id as string, {
      callId,
      at: '2026-11-22T01:30:00.000Z',
      sentiment: 'positive',
      summary: 'Wants a viewing on Saturday',
    });
    const lastCall = await createWorkflow(
      tenant,
      workflowBody({
        name: 'After a good call',
        auto_mode: true,
        yolo: true,
        conditions: [{ field: 'contact.last_call.sentiment', op: 'eq', value: 'positive' }],
        action: {
          type: 'add_note',
          text: '{{contact.last_call.summary}} (called {{contact.last_contacted_at}})',
        },
      }),
    );
    const res = await trigger(lastCall.id, key, { contact_id: called.id });
    expect(res.status).toBe(202);
    const run = await waitForRun(tenant, lastCall.id, res.body.run_id, (r) => r.status === 'completed');
    expect(run.stages).toMatchObject({ signal: { result: { matched: true } }, task: { state: 'done' } });
    const notes = await notesOf(tenant, called.id);
    expect(
      notes.filter((n) => n.text === 'Wants a viewing on Saturday (called 2026-11-22T01:30:00.000Z)'),
    ).toHaveLength(1);
  });

  it('a payload that does not match the signal completes the run with the later stages skipped', async () => {
    const res = await trigger(workflow.id, key, { contact_id: contact.id, budget: 100 });
    expect(res.status).toBe(202);
    const run = await waitForRun(tenant, workflow.id, res.body.run_id, (r) => r.status === 'completed');
    expect(run.stages).toMatchObject({
      signal: { state: 'done', result: { matched: false } },
      task: { state: 'skipped' },
      outcome: { state: 'skipped' },
    });
  });

  it('Idempotency-Key: the same key and body answer the first run again; another body is 409', async () => {
    const headers = { 'idempotency-key': `wf-${Date.now()}` };
    const body = { contact_id: contact.id, budget: 600000, source: 'retry' };
    const first = await trigger(workflow.id, key, body, headers);
    expect(first.status).toBe(202);
    const second = await trigger(workflow.id, key, body, headers);
    expect(second.status).toBe(202);
    expect(second.body).toEqual(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    const other = await trigger(workflow.id, key, { ...body, budget: 1 }, headers);
    expect(other.status).toBe(409);
    await waitForRun(tenant, workflow.id, first.body.run_id, (r) => r.status === 'completed');
    await waitForQuiescence();
    const runs = (await listRuns(tenant, workflow.id)).filter((r) => r.event.data.source === 'retry');
    expect(runs.map((r) => r.id)).toEqual([first.body.run_id]);
    const notes = await notesOf(tenant, contact.id);
    expect(notes.filter((n) => n.text === 'Lead from retry for Sam')).toHaveLength(1);
  });

  it('credentials: none 401; a user 403; a key without the scope 403; another workspace’s key 403', async () => {
    const before = (await listRuns(tenant, workflow.id)).length;
    expect((await api('POST', triggerPath(workflow.id), { body: {} })).status).toBe(401);
    const user = await trigger(workflow.id, tenant.owner.token, {});
    expect(user.status).toBe(403);
    expect(user.body).toEqual({
      error: "This route takes an API key with scope workflows:trigger, not a user's token",
    });
    const noScope = await trigger(workflow.id, (await apiKey(tenant, ['contacts:write'])).key, {});
    expect(noScope.status).toBe(403);
    expect(noScope.body).toEqual({ error: 'API key lacks required scope: workflows:trigger' });
    const other = await newTenant({ paid: true });
    const otherKey = (await apiKey(other, ['workflows:trigger'])).key;
    const foreign = await trigger(workflow.id, otherKey, {});
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: 'API key not authorized for this workspace' });
    expect((await listRuns(tenant, workflow.id)).length).toBe(before);
  });

  it('bad payloads: not an object or not JSON 422, over 64 KB 413; nothing runs', async () => {
    const before = (await listRuns(tenant, workflow.id)).length;
    for (const body of [[1, 2], 'text', 42, null]) {
      const res = await trigger(workflow.id, key, body);
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
    }
    const notJson = await api('POST', triggerPath(workflow.id), {
      token: key,
      rawBody: '{"a":',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(422);
    const big = await trigger(workflow.id, key, { blob: 'x'.repeat(65 * 1024) });
    expect(big.status).toBe(413);
    expect((await listRuns(tenant, workflow.id)).length).toBe(before);
  });

  it('unknown or deleted workflow 404; disabled or event-triggered 409; without the plan 402', async () => {
    expect((await trigger('wf_01J00000000000000000000000', key, {})).status).toBe(404);
    expect((await trigger('nope', key, {})).status).toBe(404);
    const other = await createWorkflow(tenant, workflowBody({ name: 'Short-lived' }));
    await api('PATCH', workflowPath(tenant, other.id), {
      token: tenant.owner.token,
      body: { enabled: false },
    });
    const disabled = await trigger(other.id, key, {});
    expect(disabled.status).toBe(409);
    expect(disabled.body).toEqual({ error: 'Workflow is disabled' });
    await api('DELETE', workflowPath(tenant, other.id), { token: tenant.owner.token });
    const deleted = await trigger(other.id, key, {});
    expect(deleted.status).toBe(404);
    expect(deleted.body).toEqual({ error: 'Workflow not found' });
    const onEvent = await createWorkflow(
      tenant,
      workflowBody({ trigger: { type: 'event', event: 'contact.created' } }),
    );
    expect((await trigger(onEvent.id, key, {})).status).toBe(409);

    const lapsed = await newTenant({ paid: true });
    const lapsedWorkflow = await createWorkflow(lapsed, workflowBody({}));
    const lapsedKey = (await apiKey(lapsed, ['workflows:trigger'])).key;
    await setPlan(lapsed.organisationId, 'starter', 'active');
    const gated = await trigger(lapsedWorkflow.id, lapsedKey, {});
    expect(gated.status).toBe(402);
    expect(gated.body).toEqual({ error: 'Your plan does not include workflows' });
    expect(await listRuns(lapsed, lapsedWorkflow.id)).toEqual([]);
  });

  it('rate limit: past 60 triggers a minute per workflow, 429 with Retry-After; other workflows unaffected', async () => {
    const limited = await createWorkflow(
      tenant,
      workflowBody({
        name: 'Busy',
        auto_mode: true,
        yolo: true,
        conditions: [{ field: 'go', op: 'eq', value: 'yes' }],
      }),
    );
    let accepted = 0;
    let refused: Awaited<ReturnType<typeof trigger>> | undefined;
    // 60 a window; a window may turn over during the loop, so at most 120 before the first 429.
    for (let i = 0; i < 125 && !refused; i += 1) {
      const res = await trigger(limited.id, key, { n: i });
      if (res.status === 202) accepted += 1;
      else refused = res;
    }
    expect(refused?.status).toBe(429);
    expect(refused?.body).toEqual({ error: 'Too many requests' });
    const retryAfter = Number(refused?.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(accepted).toBeGreaterThanOrEqual(60);
    expect(accepted).toBeLessThanOrEqual(120);
    const runs = await listRuns(tenant, limited.id, 'limit=50');
    expect(runs.length).toBe(accepted);
    expect(new Set(runs.map((r) => r.id)).size).toBe(accepted);
    // Newest first, across pages.
    expect(runs.map((r) => r.event.data.n)).toEqual([...Array(accepted).keys()].reverse());
    const page = await api('GET', `${workflowPath(tenant, limited.id)}/runs?limit=51`, {
      token: tenant.owner.token,
    });
    expect(page.status).toBe(422);
    // Another workflow has its own counter.
    expect((await trigger(workflow.id, key, { contact_id: contact.id, budget: 1 })).status).toBe(202);
    await waitForQuiescence();
  });
});
