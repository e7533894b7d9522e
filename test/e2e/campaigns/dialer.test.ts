import { jest } from '@jest/globals';
import { api, type Json } from '../../helpers/http.js';
import { readQuiescence, waitFor, waitForConsumed } from '../../helpers/wait.js';
import { sendMessages } from '../../../functions/platform/queue.js';
import { startCall } from '../../../functions/calling/start-call.js';
import { dialPass } from '../../../functions/campaigns/dialer.js';
import { attemptKey } from '../../../functions/campaigns/dialer-claims.js';
import { NothingChanged } from '../../../functions/platform/queue-consumer.js';
import { BatchContactEntity, CampaignEntity } from '../../../functions/campaigns/entities.js';
import {
  batchContacts,
  campaign,
  campaignCalls,
  createCampaign,
  csvOf,
  patchCampaign,
  progress,
  readyToCall,
  setBalance,
  setConcurrencyLimit,
  TEST_NUMBERS,
  uniqueMobile,
  uploadAndWait,
  waitForStatus,
  ws,
  type Tenant,
} from './fixtures.js';

/**
 * The dialer on the local stack: caps (the campaign's and the workspace's, shared with single
 * calls) sampled while it runs; do-not-call at upload and at dial time; a closed window deferring;
 * pause, resume, cancel; credits running out; and faults — a provider error burst, duplicated
 * dialer messages, a crash between claim and dial — with no contact dialled twice for one attempt.
 */

// Calls play out in a few seconds each, and the machine may be shared: generous per-test budgets.
jest.setTimeout(240_000);

let tenant: Tenant;
let agentId: string;

beforeAll(async () => {
  const ready = await readyToCall();
  tenant = ready.tenant;
  agentId = ready.agent.id as string;
});

const rows = (phones: string[]) =>
  csvOf([['phone', 'name', 'agency'], ...phones.map((p, i) => [p, `Person ${i}`, 'Acme'])]);

async function readyCampaign(
  phones: string[],
  body: Record<string, unknown> = {},
  t = tenant,
  agent = agentId,
) {
  const made = await createCampaign(t, { agent_id: agent, ...body });
  const job = await uploadAndWait(t, made.id, rows(phones));
  expect(job.status).toBe('completed');
  return made;
}

/** Each (to_phone) dialled how many times. */
const dialsPerNumber = (calls: Json[]) => {
  const counts = new Map<string, number>();
  for (const call of calls) counts.set(call.to_phone, (counts.get(call.to_phone) ?? 0) + 1);
  return counts;
};

test('caps hold: never more live calls than max_concurrency, nor than the workspace limit shared with a single call', async () => {
  const { tenant: t, agent } = await readyToCall();
  await setConcurrencyLimit(t.workspaceId, 3);
  const phones = Array.from({ length: 9 }, () => uniqueMobile());
  const made = await readyCampaign(phones, { max_concurrency: 3 }, t, agent.id as string);
  // A single call takes one of the workspace's three slots for a while (30 simulated minutes).
  const single = await api('POST', `${ws(t)}/agents/${agent.id}/start-call`, {
    token: t.owner.token,
    body: { to_phone: TEST_NUMBERS.long },
  });
  expect(single.status).toBe(201);
  expect((await patchCampaign(t, made.id, { status: 'running' })).status).toBe(200);
  let maxLive = 0;
  let maxCampaignLive = 0;
  let maxCampaignLiveBesideSingle = 0;
  await waitFor(
    async () => {
      const all = await api('GET', `${ws(t)}/calls?limit=100`, { token: t.owner.token });
      const live = (all.body.items as Json[]).filter((c) => c.ended_at === null);
      const campaignLive = live.filter((c) => c.campaign_id === made.id).length;
      maxLive = Math.max(maxLive, live.length);
      maxCampaignLive = Math.max(maxCampaignLive, campaignLive);
      if (live.some((c) => c.id === single.body.id))
        maxCampaignLiveBesideSingle = Math.max(maxCampaignLiveBesideSingle, campaignLive);
      return (await campaign(t, made.id)).status === 'completed';
    },
    { what: 'the campaign to complete', timeoutMs: 180_000, intervalMs: 200 },
  );
  expect(maxLive).toBeLessThanOrEqual(3);
  expect(maxCampaignLive).toBeLessThanOrEqual(3);
  // While the single call held one of the workspace's three slots, the campaign had two at most.
  expect(maxCampaignLiveBesideSingle).toBeLessThanOrEqual(2);
  expect(maxCampaignLive).toBeGreaterThanOrEqual(1);
  const calls = await campaignCalls(t, made.id);
  expect(calls).toHaveLength(9);
  expect([...dialsPerNumber(calls).values()].every((n) => n === 1)).toBe(true);
  await api('POST', `${ws(t)}/calls/${single.body.id}/hangup`, { token: t.owner.token });
});

test('do-not-call: skipped at upload (suppressed, do_not_contact) and again just before the dial', async () => {
  const suppressed = uniqueMobile();
  const dnc = uniqueMobile();
  const laterSuppressed = uniqueMobile();
  const fine = uniqueMobile();
  expect(
    (
      await api(
        'PUT',
        `/api/v1/organisations/${tenant.organisationId}/suppression-list/${encodeURIComponent(suppressed)}`,
        {
          token: tenant.owner.token,
          body: { reason: 'asked' },
        },
      )
    ).status,
  ).toBe(200);
  const contact = await api('POST', `${ws(tenant)}/contacts`, {
    token: tenant.owner.token,
    body: { phone: dnc, first_name: 'Dee', contactability: 'do_not_contact' },
  });
  expect(contact.status).toBe(201);
  const made = await readyCampaign([suppressed, dnc, laterSuppressed, fine]);
  const skippedAtUpload = await batchContacts(tenant, made.id, 'skipped_dnc');
  expect(skippedAtUpload.map((b) => [b.phone, b.reason]).sort()).toEqual(
    [
      [suppressed, 'suppressed'],
      [dnc, 'do_not_contact'],
    ].sort(),
  );
  expect(skippedAtUpload.find((b) => b.phone === dnc)?.contact_id).toBe(contact.body.id);
  // Suppressed after the upload: the dialer's check just before the dial skips it.
  await api(
    'PUT',
    `/api/v1/organisations/${tenant.organisationId}/suppression-list/${encodeURIComponent(laterSuppressed)}`,
    {
      token: tenant.owner.token,
      body: {},
    },
  );
  await patchCampaign(tenant, made.id, { status: 'running' });
  const done = await waitForStatus(tenant, made.id);
  expect(done.progress).toMatchObject({ total: 4, skipped: 3, completed: 1 });
  const calls = await campaignCalls(tenant, made.id);
  expect(calls.map((c) => c.to_phone)).toEqual([fine]);
});

test('a closed window defers: next_attempt_at is the next opening, nothing is dialled', async () => {
  const tomorrow = new Date(Date.now() + 86_400_000);
  const day = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'][tomorrow.getUTCDay()];
  const made = await readyCampaign([uniqueMobile(), uniqueMobile()], {
    calling_window: { timezone: 'UTC', days: [day], start: '09:00', end: '17:00' },
  });
  await patchCampaign(tenant, made.id, { status: 'running' });
  const opening = `${tomorrow.toISOString().slice(0, 10)}T09:00:00.000Z`;
  const deferred = await waitFor(
    async () => {
      const items = await batchContacts(tenant, made.id, 'pending');
      return items.length === 2 && items.every((b) => b.next_attempt_at === opening) ? items : undefined;
    },
    { what: 'the contacts to wait for the opening' },
  );
  expect(deferred.every((b) => b.attempts.length === 0)).toBe(true);
  expect(await campaignCalls(tenant, made.id)).toHaveLength(0);
  expect((await campaign(tenant, made.id)).status).toBe('running');
  await patchCampaign(tenant, made.id, { status: 'cancelled' });
});

test('pause stops new dials, resume picks up, cancel cancels the rest; each contact dialled at most once', async () => {
  const phones = Array.from({ length: 6 }, () => uniqueMobile());
  const made = await readyCampaign(phones, { max_concurrency: 1 });
  await patchCampaign(tenant, made.id, { status: 'running' });
  await waitFor(async () => (await progress(tenant, made.id)).completed >= 1, {
    what: 'a first call to end',
  });
  const paused = await patchCampaign(tenant, made.id, { status: 'paused' });
  expect(paused.body.status).toBe('paused');
  await waitFor(async () => (await progress(tenant, made.id)).calling === 0, {
    what: 'calls under way to end',
  });
  const before = await readQuiescence();
  const callsAtPause = (await campaignCalls(tenant, made.id)).length;
  await sendMessages(
    'campaigns',
    [1, 2, 3].map(() => ({
      type: 'campaign.dial' as const,
      workspace_id: tenant.workspaceId,
      campaign_id: made.id,
    })),
  );
  await waitForConsumed(before, { ProcessCampaignMessages: 3 });
  expect((await campaignCalls(tenant, made.id)).length).toBe(callsAtPause);

  expect((await patchCampaign(tenant, made.id, { status: 'running' })).body.status).toBe('running');
  await waitFor(async () => (await campaignCalls(tenant, made.id)).length > callsAtPause, {
    what: 'a dial after resume',
  });
  const cancelled = await patchCampaign(tenant, made.id, { status: 'cancelled' });
  expect(cancelled.body.status).toBe('cancelled');
  const final = await waitFor(
    async () => {
      const p = await progress(tenant, made.id);
      return p.pending + p.calling + p.retry_scheduled === 0 ? p : undefined;
    },
    { what: 'the rest to be cancelled' },
  );
  expect(final.cancelled).toBeGreaterThanOrEqual(1);
  expect(final.completed + final.cancelled + final.failed).toBe(6);
  const calls = await campaignCalls(tenant, made.id);
  expect(calls.length).toBe(final.completed + final.failed);
  expect([...dialsPerNumber(calls).values()].every((n) => n === 1)).toBe(true);
  expect((await campaign(tenant, made.id)).status).toBe('cancelled');
});

test('credits run out: the campaign pauses with the reason, the contact goes back to pending', async () => {
  const { tenant: t, agent } = await readyToCall();
  const made = await readyCampaign([uniqueMobile(), uniqueMobile()], {}, t, agent.id as string);
  await setBalance(t.organisationId, 0);
  await patchCampaign(t, made.id, { status: 'running' });
  const paused = await waitForStatus(t, made.id, 'paused');
  expect(paused.paused_reason).toContain('insufficient_credits');
  expect(paused.progress).toMatchObject({ pending: 2, calling: 0 });
  expect(await campaignCalls(t, made.id)).toHaveLength(0);
});

test('a provider error burst (+61491570112) is retried per the policy, once per attempt, and nothing is left calling', async () => {
  const made = await readyCampaign([TEST_NUMBERS.failed, uniqueMobile(), TEST_NUMBERS.noAnswer], {
    retry: { max_attempts: 3, delay_minutes: 5, on: ['failed'] },
    max_concurrency: 3,
  });
  await patchCampaign(tenant, made.id, { status: 'running' });
  for (let attempt = 2; attempt <= 3; attempt += 1) {
    const waiting = await waitFor(
      async () =>
        (await batchContacts(tenant, made.id, 'retry_scheduled')).find(
          (b) => b.attempts.length === attempt - 1,
        ),
      { what: `the provider error to be scheduled for attempt ${attempt}`, timeoutMs: 180_000 },
    );
    // Its retry comes due now (instead of in 5 minutes).
    await BatchContactEntity.patch({
      workspaceId: tenant.workspaceId,
      campaignId: made.id,
      batchContactId: waiting.id,
    })
      .set({ state: 'retry_scheduled', dueAt: new Date(Date.now() - 1000).toISOString() })
      .go();
  }
  const done = await waitForStatus(tenant, made.id);
  expect(done.progress).toMatchObject({ completed: 1, failed: 2, calling: 0, retry_scheduled: 0 });
  const perNumber = dialsPerNumber(await campaignCalls(tenant, made.id));
  expect(perNumber.get(TEST_NUMBERS.failed)).toBe(3);
  expect(perNumber.get(TEST_NUMBERS.noAnswer)).toBe(1); // no_answer is not in retry.on
  const [failed] = (await batchContacts(tenant, made.id, 'failed')).filter(
    (b) => b.phone === TEST_NUMBERS.failed,
  );
  expect(failed.attempts.map((a: Json) => a.outcome)).toEqual(['failed', 'failed', 'failed']);
});

test('duplicated dialer messages and overlapping passes never dial one attempt twice', async () => {
  const phones = Array.from({ length: 8 }, () => uniqueMobile());
  const made = await readyCampaign(phones, { max_concurrency: 8 });
  // Running, but the marker's ticks race with 20 copies of the message and 3 passes run from here.
  await CampaignEntity.patch({ workspaceId: tenant.workspaceId, campaignId: made.id })
    .set({ status: 'running' })
    .go();
  const message = { type: 'campaign.dial' as const, workspace_id: tenant.workspaceId, campaign_id: made.id };
  await Promise.all([
    sendMessages(
      'campaigns',
      Array.from({ length: 20 }, () => message),
    ),
    dialPass(tenant.workspaceId, made.id),
    dialPass(tenant.workspaceId, made.id),
    dialPass(tenant.workspaceId, made.id),
  ]);
  await waitFor(async () => (await progress(tenant, made.id)).completed === 8, {
    what: 'every contact to be called',
    timeoutMs: 180_000,
  });
  const calls = await campaignCalls(tenant, made.id);
  expect(calls).toHaveLength(8);
  expect([...dialsPerNumber(calls).values()].every((n) => n === 1)).toBe(true);
  await patchCampaign(tenant, made.id, { status: 'cancelled' });
});

test('a crash between claim and dial: the sweeper finds the call made by the attempt’s key, or dials it once', async () => {
  const phones = [uniqueMobile(), uniqueMobile()];
  const made = await readyCampaign(phones, { max_concurrency: 2 });
  await CampaignEntity.patch({ workspaceId: tenant.workspaceId, campaignId: made.id })
    .set({ status: 'running' })
    .go();
  await expect(dialPass(tenant.workspaceId, made.id, { crashAfterClaims: true })).rejects.toThrow(
    'test hook',
  );
  const claimed = await batchContacts(tenant, made.id, 'calling');
  expect(claimed).toHaveLength(2);
  // For one of them the dial had reached start-call before the crash: its call exists, not recorded.
  const record = await campaign(tenant, made.id);
  const [first] = claimed;
  const stored = (
    await BatchContactEntity.get({
      workspaceId: tenant.workspaceId,
      campaignId: made.id,
      batchContactId: first.id,
    }).go()
  ).data!;
  const made1 = await startCall({
    principal: {
      kind: 'api_key',
      keyId: made.id,
      workspaceId: tenant.workspaceId,
      organisationId: tenant.organisationId,
      scopes: ['start_call'],
    },
    workspaceId: tenant.workspaceId,
    agentId: record.agent_id,
    body: {
      to_phone: stored.phone,
      from_phone: null,
      parameters: stored.parameters as Record<string, string>,
    },
    idempotencyKey: attemptKey(stored),
    campaignId: made.id,
  });
  // The active marker makes the ticks run passes; the sweeper frees the claims once they are stale.
  await patchCampaign(tenant, made.id, { name: 'after the crash' });
  const { ActiveCampaignEntity } = await import('../../../functions/campaigns/entities.js');
  await ActiveCampaignEntity.put({
    workspaceId: tenant.workspaceId,
    campaignId: made.id,
    since: new Date().toISOString(),
  }).go();
  await waitFor(async () => (await progress(tenant, made.id)).completed === 2, {
    what: 'both claims to be dialled and end',
    timeoutMs: 180_000,
  });
  const calls = await campaignCalls(tenant, made.id);
  expect(calls).toHaveLength(2);
  expect(calls.map((c) => c.id)).toContain(made1.id);
  expect([...dialsPerNumber(calls).values()].every((n) => n === 1)).toBe(true);
});

test('a pass with nothing due changes nothing and says so (its queue line is DEBUG, not one INFO line a second)', async () => {
  const made = await readyCampaign([uniqueMobile()]);
  const [waiting] = await batchContacts(tenant, made.id, 'pending');
  // Due in an hour: the ticker's passes until then find nothing to do.
  await BatchContactEntity.patch({
    workspaceId: tenant.workspaceId,
    campaignId: made.id,
    batchContactId: waiting.id,
  })
    .set({ dueAt: new Date(Date.now() + 3_600_000).toISOString() })
    .go();
  await CampaignEntity.patch({ workspaceId: tenant.workspaceId, campaignId: made.id })
    .set({ status: 'running' })
    .go();
  const pass = await dialPass(tenant.workspaceId, made.id);
  expect(pass).toBeInstanceOf(NothingChanged);
  expect(String(pass)).toMatch(/0 claimed, 0 dialled/);
  await patchCampaign(tenant, made.id, { status: 'cancelled' });
});
