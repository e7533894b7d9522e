import { sendMessage } from '../../../functions/platform/queue.js';
import { toEventMessage } from '../../../functions/platform/workspace-events.js';
import { WorkflowRunEntity } from '../../../functions/workflows/entities.js';
import { api, type Json } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { readyToCall, waitForCall } from '../calling/fixtures.js';
import { emailsTo, smsTo, startReceiver } from '../post-call/fixtures.js';
import {
  addMember,
  callsOf,
  createContact,
  createWorkflow,
  listRuns,
  newTenant,
  notesOf,
  review,
  TEST_NUMBERS,
  trigger,
  apiKey,
  waitForReview,
  waitForRun,
  workflowBody,
  workflowPath,
  ws,
  type Tenant,
} from './fixtures.js';

/**
 * Runs: one per (workflow, event); each stage runs alone only when it is yolo AND the run was
 * triggered with auto_mode on, otherwise it waits for review; a change of the workflow applies to new
 * runs only; a failing task is recorded; a retried run never places a second call.
 */

const completed = (run: Json) => run.status === 'completed';

describe('a call.ended workflow reviewed by hand', () => {
  let tenant: Tenant;
  let agent: Json;
  let contact: Json;
  let workflow: Json;

  beforeAll(async () => {
    ({ tenant, agent } = await readyToCall());
    contact = await createContact(tenant, { first_name: 'Alex', phone: TEST_NUMBERS.answered });
    workflow = await createWorkflow(
      tenant,
      workflowBody({
        name: 'After the call',
        trigger: { type: 'event', event: 'call.ended' },
        conditions: [
          { field: 'status', op: 'eq', value: 'completed' },
          { field: 'contact.first_name', op: 'eq', value: 'alex' },
          { field: 'duration_seconds', op: 'gt', value: 10 },
        ],
        action: { type: 'add_note', text: 'Call {{contact.first_name}} back about the call {{call_id}}' },
      }),
    );
  });

  it('the call makes one run; each stage waits for review; approvals take it through, once', async () => {
    const started = await api('POST', `${ws(tenant)}/agents/${agent.id}/start-call`, {
      token: tenant.owner.token,
      body: { to_phone: TEST_NUMBERS.answered },
    });
    expect(started.status).toBe(201);
    const callId = started.body.id as string;
    await waitForCall(tenant, callId, (call) => call.status === 'completed');

    const [run] = await waitFor(async () => {
      const runs = await listRuns(tenant, workflow.id);
      return runs.length > 0 ? runs : undefined;
    });
    expect(run.event).toMatchObject({ id: `evt_call_ended_${callId}`, type: 'call.ended' });
    const atSignal = await waitForReview(tenant, workflow.id, run.id, 'signal');
    expect(atSignal).toMatchObject({
      status: 'waiting_review',
      contact_id: contact.id,
      auto_mode: false,
      stages: {
        signal: { state: 'waiting_review', yolo: false, result: { matched: true } },
        task: { state: 'pending' },
        outcome: { state: 'pending' },
      },
    });

    // Out of order: the task has not been reached.
    const early = await review(tenant, workflow.id, run.id, 'task', 'approve');
    expect(early.status).toBe(409);
    expect((await review(tenant, workflow.id, run.id, 'nope', 'approve')).status).toBe(404);

    const approved = await review(tenant, workflow.id, run.id, 'signal', 'approve');
    expect(approved.status).toBe(200);
    expect(approved.body.stages.signal.state).toBe('approved');
    expect(approved.body.stages.signal.reviewed_by).toBe(tenant.owner.userId);
    // Twice: the stage no longer waits.
    expect((await review(tenant, workflow.id, run.id, 'signal', 'approve')).status).toBe(409);

    await waitForReview(tenant, workflow.id, run.id, 'task');
    expect(await notesOf(tenant, contact.id)).not.toContainEqual(
      expect.objectContaining({ text: `Call Alex back about the call ${callId}` }),
    );
    expect((await review(tenant, workflow.id, run.id, 'task', 'approve')).status).toBe(200);
    const atOutcome = await waitForReview(tenant, workflow.id, run.id, 'outcome');
    expect(atOutcome.stages.task).toMatchObject({ state: 'done', result: { action: 'add_note' } });
    expect((await review(tenant, workflow.id, run.id, 'outcome', 'approve')).status).toBe(200);
    const done = await waitForRun(tenant, workflow.id, run.id, completed);
    expect(done.stages).toMatchObject({
      signal: { state: 'done' },
      task: { state: 'done' },
      outcome: { state: 'done', result: { note_id: expect.stringMatching(/^note_/) } },
    });
    expect(done.completed_at).toEqual(expect.any(String));
    expect((await review(tenant, workflow.id, run.id, 'outcome', 'approve')).status).toBe(409);

    // The event delivered again (SQS is at-least-once): no second run, nothing done twice.
    await sendMessage(
      'workspaceEvents',
      toEventMessage({
        id: `evt_call_ended_${callId}`,
        type: 'call.ended',
        workspaceId: tenant.workspaceId,
        organisationId: tenant.organisationId,
        data: run.event.data,
      }),
    );
    await waitForQuiescence();
    expect((await listRuns(tenant, workflow.id)).map((r) => r.id)).toEqual([run.id]);
    const notes = await notesOf(tenant, contact.id);
    expect(notes.filter((n) => n.text === `Call Alex back about the call ${callId}`)).toHaveLength(1);
    expect(notes.filter((n) => n.text.startsWith('Workflow "After the call"'))).toHaveLength(1);
  });
});

describe('auto mode and yolo apply to runs triggered afterwards', () => {
  let tenant: Tenant;
  let key: string;
  let contact: Json;

  beforeAll(async () => {
    tenant = await newTenant({ paid: true });
    key = (await apiKey(tenant, ['workflows:trigger'])).key;
    contact = await createContact(tenant, { first_name: 'Jo', phone: '+61491570301' });
  });

  it('toggling auto_mode mid-way: the run before waits for review, the run after goes through alone', async () => {
    const workflow = await createWorkflow(
      tenant,
      workflowBody({
        name: 'Toggle',
        auto_mode: false,
        yolo: true,
        action: { type: 'add_note', text: 'toggle {{n}}' },
      }),
    );
    const before = await trigger(workflow.id, key, { contact_id: contact.id, n: 'before' });
    expect(before.status).toBe(202);
    await waitForReview(tenant, workflow.id, before.body.run_id, 'signal');

    const on = await api('PATCH', workflowPath(tenant, workflow.id), {
      token: tenant.owner.token,
      body: { auto_mode: true },
    });
    expect(on.status).toBe(200);
    const after = await trigger(workflow.id, key, { contact_id: contact.id, n: 'after' });
    const afterRun = await waitForRun(tenant, workflow.id, after.body.run_id, completed);
    expect(afterRun.auto_mode).toBe(true);

    // The earlier run kept auto_mode off: approving its signal brings the task to review, not to run.
    const earlier = await waitForRun(
      tenant,
      workflow.id,
      before.body.run_id,
      (r) => r.status === 'waiting_review',
    );
    expect(earlier.auto_mode).toBe(false);
    expect((await review(tenant, workflow.id, before.body.run_id, 'signal', 'approve')).status).toBe(200);
    await waitForReview(tenant, workflow.id, before.body.run_id, 'task');
    // Rejected: the run ends, the later stage is skipped, nothing was done.
    const rejected = await review(tenant, workflow.id, before.body.run_id, 'task', 'reject');
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({
      status: 'rejected',
      stages: { signal: { state: 'done' }, task: { state: 'rejected' }, outcome: { state: 'skipped' } },
    });
    expect((await review(tenant, workflow.id, before.body.run_id, 'task', 'approve')).status).toBe(409);
    await waitForQuiescence();
    const notes = (await notesOf(tenant, contact.id)).map((n) => n.text);
    expect(notes.filter((t) => t === 'toggle after')).toHaveLength(1);
    expect(notes.filter((t) => t === 'toggle before')).toHaveLength(0);
  });

  it('a stage made non-yolo: a new run stops there for review', async () => {
    const workflow = await createWorkflow(
      tenant,
      workflowBody({
        name: 'Yolo change',
        auto_mode: true,
        yolo: true,
        action: { type: 'add_note', text: 'yolo {{n}}' },
      }),
    );
    await api('PATCH', workflowPath(tenant, workflow.id), {
      token: tenant.owner.token,
      body: { stages: { task: { yolo: false, action: { type: 'add_note', text: 'yolo {{n}}' } } } },
    });
    const res = await trigger(workflow.id, key, { contact_id: contact.id, n: 'held' });
    const held = await waitForReview(tenant, workflow.id, res.body.run_id, 'task');
    expect(held.stages).toMatchObject({ signal: { state: 'done', yolo: true }, task: { yolo: false } });
  });
});

describe('tasks', () => {
  let tenant: Tenant;
  let key: string;

  beforeAll(async () => {
    tenant = await newTenant({ paid: true });
    key = (await apiKey(tenant, ['workflows:trigger'])).key;
  });

  it('a failing action is recorded on the run (failed, with the error); the outcome is skipped', async () => {
    const contact = await createContact(tenant, { first_name: 'Fay', email: 'fay@fail.test' });
    const workflow = await createWorkflow(
      tenant,
      workflowBody({
        name: 'Email',
        auto_mode: true,
        yolo: true,
        action: { type: 'email', subject: 'Hi {{contact.first_name}}', body: 'About {{topic}}' },
      }),
    );
    const res = await trigger(workflow.id, key, { contact_id: contact.id, topic: 'the listing' });
    const run = await waitForRun(tenant, workflow.id, res.body.run_id, (r) => r.status === 'failed');
    expect(run.stages).toMatchObject({
      signal: { state: 'done' },
      task: { state: 'failed', error: expect.stringContaining('email not sent') },
      outcome: { state: 'skipped' },
    });
    expect(run.completed_at).toEqual(expect.any(String));
    // A contact without an email address: failed too, said why.
    const noEmail = await createContact(tenant, { first_name: 'Ned', phone: '+61491570401' });
    const second = await trigger(workflow.id, key, { contact_id: noEmail.id });
    const failed = await waitForRun(tenant, workflow.id, second.body.run_id, (r) => r.status === 'failed');
    expect(failed.stages.task.error).toBe('No email address to write to');
  });

  it('an email goes out once through the email port', async () => {
    const email = `eve-${Date.now()}@example.com`;
    const contact = await createContact(tenant, { first_name: 'Eve', email });
    const workflow = await createWorkflow(
      tenant,
      workflowBody({
        name: 'Welcome',
        auto_mode: true,
        yolo: true,
        action: { type: 'email', subject: 'Hi {{contact.first_name}}', body: 'About {{topic}}' },
      }),
    );
    const res = await trigger(workflow.id, key, { contact_id: contact.id, topic: 'the listing' });
    const run = await waitForRun(tenant, workflow.id, res.body.run_id, completed);
    expect(run.stages.task.result).toMatchObject({ action: 'email', to: email });
    await waitForQuiescence();
    expect(emailsTo(email)).toEqual([
      expect.objectContaining({ subject: 'Hi Eve', text: 'About the listing' }),
    ]);
  });

  it('a contact.created workflow updates the new contact through the contacts service', async () => {
    const workflow = await createWorkflow(
      tenant,
      workflowBody({
        name: 'Tag new',
        trigger: { type: 'event', event: 'contact.created' },
        auto_mode: true,
        yolo: true,
        conditions: [{ field: 'contact.source', op: 'eq', value: 'manual' }],
        action: { type: 'update_contact', fields: { tags: ['new'], attributes: { welcomed: 'yes' } } },
      }),
    );
    const contact = await createContact(tenant, { first_name: 'Nia', phone: '+61491570402' });
    const [run] = await waitFor(async () => {
      const runs = await listRuns(tenant, workflow.id);
      return runs.length > 0 && runs.every(completed) ? runs : undefined;
    });
    expect(run.contact_id).toBe(contact.id);
    const got = await api('GET', `${ws(tenant)}/contacts/${contact.id}`, { token: tenant.owner.token });
    expect(got.body).toMatchObject({ tags: ['new'], attributes: { welcomed: 'yes' } });
  });
});

describe('workflow.completed', () => {
  it('reaches the workspace’s webhook endpoints once per completed run; emit_event: false sends none', async () => {
    const tenant = await newTenant({ paid: true });
    const key = (await apiKey(tenant, ['workflows:trigger'])).key;
    const receiver = await startReceiver();
    try {
      const endpoint = await api('POST', `${ws(tenant)}/webhook-endpoints`, {
        token: tenant.owner.token,
        body: { url: receiver.url, event_types: ['workflow.completed'] },
      });
      expect(endpoint.status).toBe(201);
      const contact = await createContact(tenant, { first_name: 'Wes', phone: '+61491570404' });
      const loud = await createWorkflow(
        tenant,
        workflowBody({
          name: 'Loud',
          auto_mode: true,
          yolo: true,
          action: { type: 'add_note', text: 'loud' },
        }),
      );
      const quiet = await createWorkflow(
        tenant,
        workflowBody({
          name: 'Quiet',
          auto_mode: true,
          stages: {
            signal: { yolo: true },
            task: { yolo: true, action: { type: 'add_note', text: 'quiet' } },
            outcome: { yolo: true, emit_event: false },
          },
        }),
      );
      const loudRun = (await trigger(loud.id, key, { contact_id: contact.id })).body.run_id as string;
      const quietRun = (await trigger(quiet.id, key, { contact_id: contact.id })).body.run_id as string;
      await waitForRun(tenant, loud.id, loudRun, completed);
      await waitForRun(tenant, quiet.id, quietRun, completed);
      await waitFor(() => receiver.requests.length > 0, { what: 'the workflow.completed delivery' });
      await waitForQuiescence();
      expect(receiver.requests).toHaveLength(1);
      const [request] = receiver.requests;
      expect(request.headers['webhook-id']).toBe(`evt_workflow_completed_${loudRun}`);
      expect(JSON.parse(request.body)).toMatchObject({
        type: 'workflow.completed',
        data: {
          workflow_id: loud.id,
          workflow_name: 'Loud',
          run_id: loudRun,
          event_type: 'external',
          contact_id: contact.id,
          task: { action: 'add_note', result: { note_id: expect.stringMatching(/^note_/) } },
          outcome: { note_id: expect.stringMatching(/^note_/) },
        },
      });
    } finally {
      await receiver.stop();
    }
  });
});

describe('a call task', () => {
  it('places one call, even when the run is retried after the call went out; its end triggers no workflow', async () => {
    const { tenant, agent } = await readyToCall();
    const key = (await apiKey(tenant, ['workflows:trigger'])).key;
    const contact = await createContact(tenant, { first_name: 'Cal', phone: TEST_NUMBERS.answered });
    const caller = await createWorkflow(
      tenant,
      workflowBody({
        name: 'Call back',
        auto_mode: true,
        yolo: true,
        action: { type: 'call', agent_id: agent.id, parameters: { name: '{{contact.first_name}}' } },
      }),
    );
    const onEnded = await createWorkflow(
      tenant,
      workflowBody({ name: 'On ended', trigger: { type: 'event', event: 'call.ended' } }),
    );
    const res = await trigger(caller.id, key, { contact_id: contact.id });
    const run = await waitForRun(tenant, caller.id, res.body.run_id, completed);
    const callId = run.stages.task.result.call_id as string;
    expect(callId).toMatch(/^call_/);
    const call = await waitForCall(tenant, callId, (c) => c.status === 'completed');
    expect(call).toMatchObject({ to_phone: TEST_NUMBERS.answered, created_by: caller.id });

    // As if the advance had crashed after placing the call and before recording it: the task back to
    // its state before the call (its input recorded), the message delivered again.
    const stored = (
      await WorkflowRunEntity.get({ workflowId: caller.id, runId: run.id }).go({ consistent: true })
    ).data!;
    const states = stored.stageStates as Record<string, Record<string, unknown>>;
    await WorkflowRunEntity.patch({ workflowId: caller.id, runId: run.id })
      .set({
        status: 'running',
        version: stored.version + 1,
        stageStates: {
          ...states,
          task: { state: 'pending', prepared: states.task.prepared, updated_at: null },
          outcome: { state: 'pending', updated_at: null },
        },
      })
      .go();
    await sendMessage('workflowRuns', {
      type: 'workflow.run.advance',
      workspace_id: tenant.workspaceId,
      workflow_id: caller.id,
      run_id: run.id,
    });
    const again = await waitForRun(
      tenant,
      caller.id,
      run.id,
      (r) => completed(r) && r.updated_at > stored.updatedAt,
    );
    expect(again.stages.task.result.call_id).toBe(callId);
    await waitForQuiescence();
    expect((await callsOf(tenant)).map((c) => c.id)).toEqual([callId]);
    // The call a workflow placed triggers no call.ended workflow (no loops).
    expect(await listRuns(tenant, onEnded.id)).toEqual([]);
  });

  it('an SMS task sends one SMS, even when the run is retried after it went out', async () => {
    const { tenant } = await readyToCall();
    const key = (await apiKey(tenant, ['workflows:trigger'])).key;
    const phone = '+61491570405';
    const contact = await createContact(tenant, { first_name: 'Tex', phone });
    const workflow = await createWorkflow(
      tenant,
      workflowBody({
        name: 'Text back',
        auto_mode: true,
        yolo: true,
        action: { type: 'sms', body: 'Hi {{contact.first_name}}, about {{topic}}' },
      }),
    );
    const res = await trigger(workflow.id, key, { contact_id: contact.id, topic: 'your offer' });
    const run = await waitForRun(tenant, workflow.id, res.body.run_id, completed);
    const smsId = run.stages.task.result.sms_id as string;
    expect(run.stages.task.result).toMatchObject({
      action: 'sms',
      sms_id: expect.stringMatching(/^sms_/),
      to_phone: phone,
    });

    // The task back to its state before the send (its input recorded), the message delivered again.
    const stored = (
      await WorkflowRunEntity.get({ workflowId: workflow.id, runId: run.id }).go({ consistent: true })
    ).data!;
    const states = stored.stageStates as Record<string, Record<string, unknown>>;
    await WorkflowRunEntity.patch({ workflowId: workflow.id, runId: run.id })
      .set({
        status: 'running',
        version: stored.version + 1,
        stageStates: {
          ...states,
          task: { state: 'pending', prepared: states.task.prepared, updated_at: null },
          outcome: { state: 'pending', updated_at: null },
        },
      })
      .go();
    await sendMessage('workflowRuns', {
      type: 'workflow.run.advance',
      workspace_id: tenant.workspaceId,
      workflow_id: workflow.id,
      run_id: run.id,
    });
    const again = await waitForRun(
      tenant,
      workflow.id,
      run.id,
      (r) => completed(r) && r.updated_at > stored.updatedAt,
    );
    expect(again.stages.task.result.sms_id).toBe(smsId);
    await waitForQuiescence();
    expect(smsTo(phone).map((sms) => sms.text)).toEqual(['Hi Tex, about your offer']);
  });

  it('a refused call (agent without a number is 404 at start-call) fails the task', async () => {
    const tenant = await newTenant({ paid: true });
    const member = await addMember(tenant, 'member');
    const key = (await apiKey(tenant, ['workflows:trigger'])).key;
    const agentRes = await api('POST', `${ws(tenant)}/agents`, {
      token: member.token,
      body: { name: 'No number', prompt: 'Hi', greeting: 'Hi' },
    });
    const contact = await createContact(tenant, { first_name: 'Lou', phone: '+61491570403' });
    const workflow = await createWorkflow(
      tenant,
      workflowBody({ auto_mode: true, yolo: true, action: { type: 'call', agent_id: agentRes.body.id } }),
    );
    const res = await trigger(workflow.id, key, { contact_id: contact.id });
    const run = await waitForRun(tenant, workflow.id, res.body.run_id, (r) => r.status === 'failed');
    expect(run.stages.task).toMatchObject({ state: 'failed', error: expect.stringContaining('404') });
    expect(await callsOf(tenant)).toEqual([]);
  });
});
