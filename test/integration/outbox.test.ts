import { createContact } from '../../functions/contacts/creation.js';
import { getContact } from '../../functions/contacts/lookup.js';
import { resetClock, setClock } from '../../functions/platform/clock.js';
import { OUTBOX_SHARDS, OutboxEventEntity, sweepOutbox } from '../../functions/platform/outbox.js';
import { queueUrlEnv } from '../../functions/platform/resources.js';
import { receiveSms } from '../../functions/sms/inbound.js';
import { advanceRun, reviewStage } from '../../functions/workflows/runs.js';
import { api } from '../helpers/http.js';
import { waitFor, waitForQuiescence } from '../helpers/wait.js';
import { smsTenant, uniqueMobile } from '../e2e/sms/fixtures.js';
import { newTenant, startReceiver, ws, type Receiver, type Tenant } from '../e2e/post-call/fixtures.js';
import {
  apiKey,
  createWorkflow,
  getRun,
  trigger,
  waitForReview,
  workflowBody,
} from '../e2e/workflows/fixtures.js';

/**
 * A write and its event are never split (functions/platform/outbox.ts): with the events queue
 * refusing every send, a contact created (or an SMS received) is written and its event recorded in
 * the same transaction; the call succeeds; the event is sent by the outbox sweep, once.
 */

const EVENTS_QUEUE = queueUrlEnv('workspaceEvents');
const RUNS_QUEUE = queueUrlEnv('workflowRuns');
const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.stop()));
});
afterEach(() => resetClock());

async function hookFor(tenant: Tenant, eventTypes: string[]): Promise<Receiver> {
  const hook = await startReceiver();
  receivers.push(hook);
  const res = await api('POST', `${ws(tenant)}/webhook-endpoints`, {
    token: tenant.owner.token,
    body: { url: hook.url, event_types: eventTypes },
  });
  if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${res.text}`);
  return hook;
}

/** Runs `work` with the queues' URLs pointing at queues that do not exist (every send fails). */
async function withQueuesRefusing<T>(names: string[], work: () => Promise<T>): Promise<T> {
  const good = names.map((name) => process.env[name]);
  names.forEach((name, i) => (process.env[name] = `${good[i]}-does-not-exist`));
  try {
    return await work();
  } finally {
    names.forEach((name, i) => (process.env[name] = good[i]));
  }
}
const withEventsQueueRefusing = <T>(work: () => Promise<T>) => withQueuesRefusing([EVENTS_QUEUE], work);

async function outboxed(eventId: string) {
  for (let shard = 0; shard < OUTBOX_SHARDS; shard += 1) {
    const { data } = await OutboxEventEntity.get({ shard, eventId }).go({ consistent: true });
    if (data) return data;
  }
  return undefined;
}

/** The sweep as its schedule runs it, a minute later (the item is past SWEEP_AFTER_SECONDS). */
async function sweepLater(): Promise<void> {
  setClock(new Date(Date.now() + 60_000));
  const report = await sweepOutbox();
  resetClock();
  expect(report.failed).toBe(0);
}

it('createContact with the events queue refusing: the contact and its event are written, the sweep sends it once', async () => {
  const tenant = await newTenant();
  const hook = await hookFor(tenant, ['contact.created']);
  const created = await withEventsQueueRefusing(() =>
    createContact(tenant.workspaceId, { first_name: 'Zoë 🏡', phone: uniqueMobile() }, { country: 'AU' }),
  );
  const eventId = `evt_contact_created_${created.contactId}`;
  expect(await getContact(tenant.workspaceId, created.contactId)).toMatchObject({ firstName: 'Zoë 🏡' });
  expect(await outboxed(eventId)).toMatchObject({ eventId, workspaceId: tenant.workspaceId });
  await waitForQuiescence();
  expect(hook.requests).toHaveLength(0);

  await sweepLater();
  const request = await waitFor(() => hook.requests[0], { what: 'the swept contact.created' });
  expect(request.headers['webhook-id']).toBe(eventId);
  expect(await outboxed(eventId)).toBeUndefined();
  await waitForQuiescence();
  expect(hook.requests).toHaveLength(1);
  // A second sweep finds nothing to send.
  await sweepLater();
  await waitForQuiescence();
  expect(hook.requests).toHaveLength(1);
});

it('createContact with the queue working publishes at once and leaves nothing in the outbox', async () => {
  const tenant = await newTenant();
  const hook = await hookFor(tenant, ['contact.created']);
  const created = await createContact(
    tenant.workspaceId,
    { first_name: 'Ari', phone: uniqueMobile() },
    { country: 'AU' },
  );
  expect(await outboxed(`evt_contact_created_${created.contactId}`)).toBeUndefined();
  await waitFor(() => hook.requests[0], { what: 'the contact.created event' });
  await waitForQuiescence();
  expect(hook.requests).toHaveLength(1);
});

it('an inbound SMS with the events queue refusing is taken; sms.received is sent by the sweep, once', async () => {
  const tenant = await smsTenant();
  const hook = await hookFor(tenant, ['sms.received']);
  const providerMessageId = `SM${Date.now()}outbox`;
  const outcome = await withEventsQueueRefusing(() =>
    receiveSms({ providerMessageId, from: uniqueMobile(), to: tenant.number, body: 'Yes 👍 call me' }),
  );
  expect(outcome).toMatch(/^received /);
  const eventId = `evt_sms_received_${providerMessageId}`;
  expect(await outboxed(eventId)).toBeDefined();
  // The provider's redelivery of the same message changes nothing and sends nothing.
  await withEventsQueueRefusing(() =>
    receiveSms({ providerMessageId, from: uniqueMobile(), to: tenant.number, body: 'Yes 👍 call me' }),
  );
  await waitForQuiescence();
  expect(hook.requests).toHaveLength(0);

  await sweepLater();
  const request = await waitFor(() => hook.requests[0], { what: 'the swept sms.received' });
  expect(request.headers['webhook-id']).toBe(eventId);
  await waitForQuiescence();
  expect(hook.requests).toHaveLength(1);
  expect(await outboxed(eventId)).toBeUndefined();
});

it('a workflow run completing with the events queue refusing: completed, workflow.completed sent by the sweep, once', async () => {
  const tenant = await newTenant({ paid: true });
  const hook = await hookFor(tenant, ['workflow.completed']);
  const contact = await api('POST', `${ws(tenant)}/contacts`, {
    token: tenant.owner.token,
    body: { first_name: 'Robin', phone: uniqueMobile() },
  });
  const workflow = await createWorkflow(
    tenant,
    workflowBody({
      name: 'Outbox',
      auto_mode: true,
      stages: {
        signal: { yolo: true, conditions: [] },
        task: { yolo: true, action: { type: 'add_note', text: 'Follow up {{contact.first_name}}' } },
        outcome: { yolo: false },
      },
    }),
  );
  const { key } = await apiKey(tenant, ['workflows:trigger']);
  const started = await trigger(workflow.id, key, { contact_id: contact.body.id });
  expect(started.status).toBe(202);
  const runId = started.body.run_id as string;
  await waitForReview(tenant, workflow.id, runId, 'outcome');

  // Approved and advanced here, with both queues refusing: nothing reaches the stack's consumers.
  const outcome = await withQueuesRefusing([RUNS_QUEUE, EVENTS_QUEUE], async () => {
    await expect(
      reviewStage({
        workspaceId: tenant.workspaceId,
        workflowId: workflow.id,
        runId,
        stage: 'outcome',
        decision: 'approve',
        reviewer: tenant.owner.userId,
      }),
    ).rejects.toThrow(/queue does not exist/i);
    return advanceRun({
      type: 'workflow.run.advance',
      workspace_id: tenant.workspaceId,
      workflow_id: workflow.id,
      run_id: runId,
    });
  });
  expect(outcome).toBe('completed');
  expect((await getRun(tenant, workflow.id, runId)).status).toBe('completed');
  const eventId = `evt_workflow_completed_${runId}`;
  expect(await outboxed(eventId)).toBeDefined();
  await waitForQuiescence();
  expect(hook.requests).toHaveLength(0);

  await sweepLater();
  const request = await waitFor(() => hook.requests[0], { what: 'the swept workflow.completed' });
  expect(request.headers['webhook-id']).toBe(eventId);
  await waitForQuiescence();
  expect(hook.requests).toHaveLength(1);
  expect(await outboxed(eventId)).toBeUndefined();
});
