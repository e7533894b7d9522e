import { type Json } from '../../helpers/http.js';
import { readyToCall, type Tenant } from '../calling/fixtures.js';
import {
  batchContacts,
  campaignCalls,
  createCampaign,
  csvOf,
  patchCampaign,
  progress,
  uniqueMobile,
  uploadAndWait,
  waitForStatus,
} from '../campaigns/fixtures.js';

/**
 * A campaign with a machine among its contacts (+61491570117): the attempt ends as `voicemail`, the
 * progress counts it, and the contact is final (not dialled again) unless `retry_on_voicemail`.
 */

const MACHINE = '+61491570117';

async function run(retryOnVoicemail: boolean) {
  const { tenant, agent } = (await readyToCall({
    name: 'VM campaign',
    voicemail: { action: 'leave_message', message: 'Hi {{name}}, please call us back.' },
  })) as unknown as { tenant: Tenant; agent: { id: string } };
  const made = await createCampaign(tenant, {
    agent_id: agent.id,
    max_concurrency: 2,
    retry: { max_attempts: 2, delay_minutes: 5, on: ['busy', 'no_answer', 'failed'] },
    ...(retryOnVoicemail ? { retry_on_voicemail: true } : {}),
  });
  expect(made.retry_on_voicemail).toBe(retryOnVoicemail);
  const person = uniqueMobile();
  const job = await uploadAndWait(
    tenant,
    made.id,
    csvOf([
      ['phone', 'name'],
      [MACHINE, 'Machine'],
      [person, 'Person'],
    ]),
  );
  expect(job).toMatchObject({ status: 'completed', counts: { created: 2 } });
  expect((await patchCampaign(tenant, made.id, { status: 'running' })).status).toBe(200);
  return { tenant, campaignId: made.id as string, person };
}

test('a machine contact: outcome voicemail, counted once, the contact final; the person completes', async () => {
  const { tenant, campaignId, person } = await run(false);
  const done = await waitForStatus(tenant, campaignId);
  expect(done.progress).toMatchObject({
    total: 2,
    completed: 2,
    failed: 0,
    voicemail: 1,
    retry_scheduled: 0,
  });
  expect(await progress(tenant, campaignId)).toMatchObject({ voicemail: 1 });
  const calls = await campaignCalls(tenant, campaignId);
  const machineCalls = calls.filter((c: Json) => c.to_phone === MACHINE);
  expect(machineCalls).toHaveLength(1); // dialled once
  expect(calls.filter((c: Json) => c.to_phone === person)).toHaveLength(1);
  expect(machineCalls[0]).toMatchObject({ status: 'completed', end_reason: 'voicemail' });
  const contacts = await batchContacts(tenant, campaignId);
  const machine = contacts.find((c: Json) => c.phone === MACHINE);
  expect(machine).toMatchObject({ state: 'completed' });
  expect(machine?.attempts).toEqual([expect.objectContaining({ outcome: 'voicemail' })]);
}, 240_000);

test('retry_on_voicemail: the machine contact is scheduled again', async () => {
  const { tenant, campaignId } = await run(true);
  const scheduled = await (async () => {
    const { waitFor } = await import('../../helpers/wait.js');
    return waitFor(
      async () => {
        const p = await progress(tenant, campaignId);
        return p.voicemail === 1 && p.retry_scheduled === 1 ? p : undefined;
      },
      { what: 'the voicemail retried', timeoutMs: 120_000 },
    );
  })();
  expect(scheduled).toMatchObject({ voicemail: 1, retry_scheduled: 1 });
  const contacts = await batchContacts(tenant, campaignId, 'retry_scheduled');
  expect(contacts.map((c: Json) => c.phone)).toEqual([MACHINE]);
  expect((await patchCampaign(tenant, campaignId, { status: 'cancelled' })).status).toBe(200);
}, 240_000);
