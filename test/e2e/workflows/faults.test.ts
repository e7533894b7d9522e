import { queueUrl, sendMessage, sqsClient } from '../../../functions/platform/queue.js';
import { WorkflowRunEntity, type WorkflowRun } from '../../../functions/workflows/entities.js';
import { reviewStage } from '../../../functions/workflows/runs.js';
import { MAX_SWEEPS, STALLED } from '../../../functions/workflows/sweeper.js';
import { type Json } from '../../helpers/http.js';
import { waitForQuiescence } from '../../helpers/wait.js';
import { readyToCall } from '../calling/fixtures.js';
import { smsTo } from '../post-call/fixtures.js';
import {
  apiKey,
  createContact,
  createWorkflow,
  newTenant,
  notesOf,
  review,
  trigger,
  waitForReview,
  waitForRun,
  workflowBody,
  type Tenant,
} from './fixtures.js';

/**
 * Faults of a run's advance: its message on the workflowRuns queue lost after an approval (or dead-
 * lettered) — the scheduled sweeper (SweepWorkflowRuns) puts a running run without a write for
 * WORKFLOW_RUN_STALL_SECONDS (10 s locally) back on the queue, and nothing that went out goes out
 * again; a run that never advances is given up after MAX_SWEEPS. And a crash between a note (the
 * Outcome's, an add_note task's) and the run's write: the message received again finds the note
 * (its id fixed before it was written) instead of adding a second one.
 */

const completed = (run: Json) => run.status === 'completed';
/** The stall (10 s locally) and a sweep (every 5 s), with room for a loaded machine. */
const SWEPT_WITHIN_MS = 90_000;

let tenant: Tenant;
let key: string;

beforeAll(async () => {
  tenant = await newTenant({ paid: true });
  key = (await apiKey(tenant, ['workflows:trigger'])).key;
});

const stored = async (workflowId: string, runId: string): Promise<WorkflowRun> =>
  (await WorkflowRunEntity.get({ workflowId, runId }).go({ consistent: true })).data!;

type States = Record<string, Record<string, unknown>>;

/**
 * Puts the stored run back to `stageStates` and `running`, as a crash would have left it: with
 * `silentFor` it is also back in the sweeper's list, silent that long (its message lost); without,
 * it is out of the list and only a message advances it.
 */
async function rewind(
  run: WorkflowRun,
  stageStates: States,
  options: { silentFor?: number; sweeps?: number },
) {
  const write = WorkflowRunEntity.patch({ workflowId: run.workflowId, runId: run.runId }).set({
    status: 'running',
    version: run.version + 1,
    stageStates,
    ...(options.sweeps !== undefined ? { sweeps: options.sweeps } : {}),
    ...(options.silentFor !== undefined
      ? {
          updatedAt: new Date(Date.now() - options.silentFor * 1000).toISOString(),
          openShard: run.openShard!,
        }
      : {}),
  });
  await write.go();
}

/** Drops what this process sends to the workflowRuns queue (the send "succeeds"; nothing arrives). */
async function loseAdvanceMessages(): Promise<{ dropped: Json[]; restore: () => void }> {
  const dropped: Json[] = [];
  const client = await sqsClient();
  const name = 'testLosesWorkflowRunMessages';
  const target = queueUrl('workflowRuns');
  client.middlewareStack.add(
    <I extends object, O>(next: (args: { input: I }) => Promise<O>) =>
      async (args: { input: I }): Promise<O> => {
        const input = args.input as { QueueUrl?: string; MessageBody?: string };
        if (input.QueueUrl === target && input.MessageBody) {
          dropped.push(JSON.parse(input.MessageBody) as Json);
          return { output: { $metadata: {}, MessageId: 'lost' }, response: {} } as O;
        }
        return next(args);
      },
    { step: 'initialize', name },
  );
  return { dropped, restore: () => client.middlewareStack.remove(name) };
}

describe('the sweeper', () => {
  it('an approval whose advance message was lost: the sweeper puts the run back on its queue; it goes on once', async () => {
    const contact = await createContact(tenant, { first_name: 'Lou', phone: '+61491570411' });
    const workflow = await createWorkflow(
      tenant,
      workflowBody({ name: 'Reviewed', action: { type: 'add_note', text: 'Call {{contact.first_name}}' } }),
    );
    const res = await trigger(workflow.id, key, { contact_id: contact.id });
    expect(res.status).toBe(202);
    const runId = res.body.run_id as string;
    await waitForReview(tenant, workflow.id, runId, 'signal');

    // The approval itself (the route's code), its message to the queue lost on the way.
    const lost = await loseAdvanceMessages();
    try {
      await reviewStage({
        workspaceId: tenant.workspaceId,
        workflowId: workflow.id,
        runId,
        stage: 'signal',
        decision: 'approve',
        reviewer: tenant.owner.userId,
      });
    } finally {
      lost.restore();
    }
    expect(lost.dropped).toEqual([expect.objectContaining({ type: 'workflow.run.advance', run_id: runId })]);
    expect((await stored(workflow.id, runId)).status).toBe('running');

    // Nothing else will advance it: the sweeper finds it silent and sends its message again.
    const atTask = await waitForRun(
      tenant,
      workflow.id,
      runId,
      (r) => r.stages.task.state === 'waiting_review',
      SWEPT_WITHIN_MS,
    );
    expect(atTask.stages.signal).toMatchObject({ state: 'done', reviewed_by: tenant.owner.userId });
    expect((await stored(workflow.id, runId)).sweeps).toBe(1);

    expect((await review(tenant, workflow.id, runId, 'task', 'approve')).status).toBe(200);
    await waitForReview(tenant, workflow.id, runId, 'outcome');
    expect((await review(tenant, workflow.id, runId, 'outcome', 'approve')).status).toBe(200);
    const done = await waitForRun(tenant, workflow.id, runId, completed);
    await waitForQuiescence();
    const notes = await notesOf(tenant, contact.id);
    expect(notes.map((n) => n.id).sort()).toEqual(
      [done.stages.task.result.note_id, done.stages.outcome.result.note_id].sort(),
    );
    expect((await stored(workflow.id, runId)).sweeps).toBe(1);
  }, 180_000);

  it('a run whose message was lost after its SMS went out: the sweeper finishes it; the SMS is not sent again', async () => {
    // A workspace with a number to send SMS from.
    const { tenant } = await readyToCall();
    const key = (await apiKey(tenant, ['workflows:trigger'])).key;
    const phone = '+61491570412';
    const contact = await createContact(tenant, { first_name: 'Max', phone });
    const workflow = await createWorkflow(
      tenant,
      workflowBody({
        name: 'Text',
        auto_mode: true,
        yolo: true,
        action: { type: 'sms', body: 'Hi {{contact.first_name}}' },
      }),
    );
    const res = await trigger(workflow.id, key, { contact_id: contact.id });
    const first = await waitForRun(tenant, workflow.id, res.body.run_id, completed);
    const smsId = first.stages.task.result.sms_id as string;
    await waitForQuiescence();

    // As if the advance had stopped after the send and before recording it, and its message then
    // dead-lettered: the task back to its recorded input, the run running and silent, no message.
    const run = await stored(workflow.id, first.id);
    const states = run.stageStates as States;
    await rewind(
      run,
      {
        ...states,
        task: { state: 'pending', prepared: states.task.prepared, updated_at: null },
        outcome: { state: 'pending', updated_at: null },
      },
      { silentFor: 60 },
    );
    const again = await waitForRun(
      tenant,
      workflow.id,
      first.id,
      (r) => completed(r) && r.updated_at > run.updatedAt,
      SWEPT_WITHIN_MS,
    );
    expect(again.stages.task.result.sms_id).toBe(smsId);
    expect((await stored(workflow.id, first.id)).sweeps).toBe(1);
    await waitForQuiescence();
    expect(smsTo(phone).map((sms) => sms.text)).toEqual(['Hi Max']);
  }, 180_000);

  it(`a run put back ${MAX_SWEEPS} times without ending is given up: failed at its stage, with the reason`, async () => {
    const workflow = await createWorkflow(tenant, workflowBody({ name: 'Stuck' }));
    const res = await trigger(workflow.id, key, { note: 'no contact' });
    const runId = res.body.run_id as string;
    await waitForReview(tenant, workflow.id, runId, 'signal');
    const run = await stored(workflow.id, runId);
    const states = run.stageStates as States;
    await rewind(
      run,
      { ...states, signal: { ...states.signal, state: 'approved' } },
      { silentFor: 60, sweeps: MAX_SWEEPS },
    );
    const failed = await waitForRun(
      tenant,
      workflow.id,
      runId,
      (r) => r.status === 'failed',
      SWEPT_WITHIN_MS,
    );
    expect(failed.stages).toMatchObject({
      signal: { state: 'failed', error: STALLED },
      task: { state: 'skipped' },
      outcome: { state: 'skipped' },
    });
    expect(failed.completed_at).toEqual(expect.any(String));
  }, 180_000);
});

describe('notes are written once', () => {
  it("the Outcome's note: a redelivery after a crash between the note and the run's write adds no second note", async () => {
    const contact = await createContact(tenant, { first_name: 'Ned', phone: '+61491570413' });
    const workflow = await createWorkflow(
      tenant,
      workflowBody({ name: 'Noted', auto_mode: true, yolo: true }),
    );
    const res = await trigger(workflow.id, key, { contact_id: contact.id });
    const first = await waitForRun(tenant, workflow.id, res.body.run_id, completed);
    const outcomeNote = first.stages.outcome.result.note_id as string;
    expect(outcomeNote).toMatch(/^note_/);
    expect(await notesOf(tenant, contact.id)).toHaveLength(2);

    // The outcome back to where it stood after its note (its note id and text recorded), received again.
    const run = await stored(workflow.id, first.id);
    const states = run.stageStates as States;
    expect(states.outcome.prepared).toEqual({ summary: expect.any(String), note_id: outcomeNote });
    await rewind(
      run,
      { ...states, outcome: { state: 'pending', prepared: states.outcome.prepared, updated_at: null } },
      {},
    );
    await sendMessage('workflowRuns', {
      type: 'workflow.run.advance',
      workspace_id: tenant.workspaceId,
      workflow_id: workflow.id,
      run_id: first.id,
    });
    const again = await waitForRun(
      tenant,
      workflow.id,
      first.id,
      (r) => completed(r) && r.updated_at > run.updatedAt,
    );
    expect(again.stages.outcome.result).toEqual(first.stages.outcome.result);
    await waitForQuiescence();
    const notes = await notesOf(tenant, contact.id);
    expect(notes.map((n) => n.id).sort()).toEqual([first.stages.task.result.note_id, outcomeNote].sort());
  }, 180_000);

  it("an add_note task: a redelivery after a crash between the note and the run's write adds no second note", async () => {
    const contact = await createContact(tenant, { first_name: 'Ola', phone: '+61491570414' });
    const workflow = await createWorkflow(
      tenant,
      workflowBody({
        name: 'Task note',
        auto_mode: true,
        stages: {
          signal: { yolo: true, conditions: [] },
          task: { yolo: true, action: { type: 'add_note', text: 'Ring {{contact.first_name}}' } },
          outcome: { yolo: false },
        },
      }),
    );
    const res = await trigger(workflow.id, key, { contact_id: contact.id });
    const atOutcome = await waitForReview(tenant, workflow.id, res.body.run_id, 'outcome');
    const taskNote = atOutcome.stages.task.result.note_id as string;
    expect((await notesOf(tenant, contact.id)).map((n) => n.id)).toEqual([taskNote]);

    const run = await stored(workflow.id, atOutcome.id);
    const states = run.stageStates as States;
    expect(states.task.prepared).toMatchObject({ note_id: taskNote });
    await rewind(
      run,
      {
        ...states,
        task: { state: 'pending', prepared: states.task.prepared, updated_at: null },
        outcome: { state: 'pending', updated_at: null },
      },
      { silentFor: 60 },
    );
    const again = await waitForRun(
      tenant,
      workflow.id,
      atOutcome.id,
      (r) => r.stages.outcome.state === 'waiting_review' && r.updated_at > run.updatedAt,
      SWEPT_WITHIN_MS,
    );
    expect(again.stages.task.result.note_id).toBe(taskNote);
    await waitForQuiescence();
    expect((await notesOf(tenant, contact.id)).map((n) => n.id)).toEqual([taskNote]);
  }, 180_000);
});
