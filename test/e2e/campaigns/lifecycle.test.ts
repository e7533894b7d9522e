import { jest } from '@jest/globals';
import { api } from '../../helpers/http.js';
import { waitFor } from '../../helpers/wait.js';
import {
  batchContacts,
  campaign,
  campaignCalls,
  createCampaign,
  csvOf,
  patchCampaign,
  progress,
  readyToCall,
  TEST_NUMBERS,
  uniqueMobile,
  uploadAndWait,
  waitForStatus,
  ws,
  type Tenant,
} from './fixtures.js';

/**
 * A campaign from draft to completed: an upload (created, merged, rejected rows, a row without a
 * prompt parameter taken with a warning, the parameter left empty as start-call leaves it), the dialer placing each contact's call once with campaign_id, busy numbers retried
 * until max_attempts, outcomes as campaign notes, credits in the progress, and the call log filter.
 */

jest.setTimeout(240_000);

let tenant: Tenant;
let agentId: string;

beforeAll(async () => {
  ({
    tenant,
    agent: { id: agentId },
  } = (await readyToCall()) as unknown as {
    tenant: Tenant;
    agent: { id: string };
  });
});

test('a campaign runs to completed: each contact called once per attempt, busy retried, notes written', async () => {
  const created = await createCampaign(tenant, {
    agent_id: agentId,
    retry: { max_attempts: 2, delay_minutes: 5, on: ['busy'] },
    max_concurrency: 3,
  });
  expect(created).toMatchObject({ status: 'draft', max_concurrency: 3, progress: { total: 0 } });
  const answered = [uniqueMobile(), uniqueMobile(), uniqueMobile(), uniqueMobile()];
  const noAgency = uniqueMobile();
  const csv = csvOf([
    ['phone', 'name', 'agency'],
    ...answered.map((p, i) => [p, `Person ${i}`, 'Acme Realty']),
    [answered[0], 'Again', 'Acme Realty'], // merged: the number is in the campaign already
    ['not-a-number', 'Bad', 'Acme Realty'], // rejected
    [noAgency, 'No agency', ''], // taken, {{agency}} left empty: a warning
    [TEST_NUMBERS.busy, 'Busy', 'Acme Realty'],
  ]);
  const job = await uploadAndWait(tenant, created.id, csv);
  expect(job).toMatchObject({
    kind: 'upload',
    status: 'completed',
    progress: { done: 8, total: 8 },
    counts: { total: 8, created: 6, merged: 1, rejected: 1 },
  });
  expect(job.errors).toEqual([{ row: 6, reason: expect.stringContaining('not a valid phone number') }]);
  expect(job.warnings).toEqual([{ parameter: 'agency', rows: [7], count: 1 }]);
  expect((await campaign(tenant, created.id)).warnings).toEqual([
    { job_id: job.id, parameter: 'agency', rows: [7], count: 1 },
  ]);
  expect(await progress(tenant, created.id)).toMatchObject({ total: 6, pending: 6, calling: 0 });

  const started = await patchCampaign(tenant, created.id, { status: 'running' });
  expect(started.status).toBe(200);
  expect(started.body.status).toBe('running');
  // The busy number is retried after 5 minutes: the first pass leaves it retry_scheduled.
  const busy = await waitFor(async () => (await batchContacts(tenant, created.id, 'retry_scheduled'))[0], {
    what: 'the busy contact to be scheduled again',
    timeoutMs: 180_000,
  });
  expect(busy.attempts).toEqual([{ call_id: expect.any(String), at: expect.any(String), outcome: 'busy' }]);
  expect(Date.parse(busy.next_attempt_at)).toBeGreaterThan(Date.now() + 4 * 60_000);
  await waitFor(async () => (await progress(tenant, created.id)).completed === 5, {
    what: 'the answered contacts to be completed',
    timeoutMs: 180_000,
  });

  const calls = await campaignCalls(tenant, created.id);
  expect(calls).toHaveLength(6);
  expect(new Set(calls.map((c) => c.to_phone)).size).toBe(6);
  const withoutAgency = calls.find((c) => c.to_phone === noAgency)!;
  const detail = await api('GET', `${ws(tenant)}/calls/${withoutAgency.id}`, { token: tenant.owner.token });
  expect(detail.body.parameters).not.toHaveProperty('agency');
  for (const call of calls) expect(call).toMatchObject({ campaign_id: created.id, created_by: created.id });
  const single = await api('GET', `${ws(tenant)}/calls?limit=5`, { token: tenant.owner.token });
  expect(
    single.body.items.every(
      (c: { campaign_id: unknown }) => c.campaign_id === created.id || c.campaign_id === null,
    ),
  ).toBe(true);

  const completed = await batchContacts(tenant, created.id, 'completed');
  expect(completed).toHaveLength(5);
  const notes = await api('GET', `${ws(tenant)}/contacts/${completed[0].contact_id}/notes`, {
    token: tenant.owner.token,
  });
  expect(notes.body.items).toEqual([
    expect.objectContaining({ channel: 'campaign', text: expect.stringContaining('answered and completed') }),
  ]);
  const p = await progress(tenant, created.id);
  expect(p).toMatchObject({ total: 6, completed: 5, retry_scheduled: 1, calling: 0, pending: 0 });
  expect(p.credits_used).toBeGreaterThan(0);

  // The retry comes due (moved forward here instead of waiting 5 minutes): placed, busy again, failed.
  const { BatchContactEntity } = await import('../../../functions/campaigns/entities.js');
  await BatchContactEntity.patch({
    workspaceId: tenant.workspaceId,
    campaignId: created.id,
    batchContactId: busy.id,
  })
    .set({ dueAt: new Date(Date.now() - 1000).toISOString(), state: 'retry_scheduled' })
    .go();
  const done = await waitForStatus(tenant, created.id, 'completed');
  expect(done.progress).toMatchObject({ total: 6, completed: 5, failed: 1, retry_scheduled: 0, pending: 0 });
  const [failed] = await batchContacts(tenant, created.id, 'failed');
  expect(failed.attempts.map((a: { outcome: string }) => a.outcome)).toEqual(['busy', 'busy']);
  expect(await campaignCalls(tenant, created.id)).toHaveLength(7);
  const again = await patchCampaign(tenant, created.id, { status: 'running' });
  expect(again.status).toBe(409);
});
