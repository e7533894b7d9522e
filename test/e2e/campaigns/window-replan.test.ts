import { jest } from '@jest/globals';
import { waitFor } from '../../helpers/wait.js';
import {
  ALWAYS_OPEN,
  batchContacts,
  campaign,
  campaignCalls,
  createCampaign,
  csvOf,
  patchCampaign,
  readyToCall,
  uniqueMobile,
  uploadAndWait,
  waitForStatus,
  type Tenant,
} from './fixtures.js';

/**
 * A changed calling window re-plans the contacts the old one deferred: a PATCH of a running
 * campaign's `calling_window` moves their `next_attempt_at` to the new window's opening, and a
 * window opened while the campaign was paused lets them be dialled as soon as it resumes. The
 * campaign shows when it dials next and why (`next_dial_at`, `next_dial_reason`).
 */

jest.setTimeout(240_000);

let tenant: Tenant;
let agentId: string;

beforeAll(async () => {
  const ready = await readyToCall();
  tenant = ready.tenant;
  agentId = ready.agent.id as string;
});

const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const DAY_NAMES = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const PERTH_OFFSET_MS = 8 * 3_600_000; // Australia/Perth: UTC+8, no daylight saving

/** Tomorrow (UTC): a window open only then, 09:00–17:00 UTC, and its opening. */
function tomorrowUtc() {
  const day = new Date(Date.now() + 86_400_000);
  return {
    window: { timezone: 'UTC', days: [DAYS[day.getUTCDay()]], start: '09:00', end: '17:00' },
    opening: `${day.toISOString().slice(0, 10)}T09:00:00.000Z`,
    reason: `window opens ${DAY_NAMES[day.getUTCDay()]} 09:00 UTC`,
  };
}

/** In two days (Perth's calendar): a window open only then, 10:00–12:00 Perth time, and its opening. */
function inTwoDaysPerth() {
  const local = new Date(Date.now() + PERTH_OFFSET_MS + 2 * 86_400_000);
  const opening = new Date(
    Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate(), 10) - PERTH_OFFSET_MS,
  );
  return {
    window: { timezone: 'Australia/Perth', days: [DAYS[local.getUTCDay()]], start: '10:00', end: '12:00' },
    opening: opening.toISOString(),
    reason: `window opens ${DAY_NAMES[local.getUTCDay()]} 10:00 Australia/Perth`,
  };
}

async function waitForDeferred(campaignId: string, count: number, opening: string) {
  return waitFor(
    async () => {
      const items = await batchContacts(tenant, campaignId, 'pending');
      return items.length === count && items.every((b) => b.next_attempt_at === opening) ? items : undefined;
    },
    { what: `the contacts to wait for ${opening}` },
  );
}

test('a running campaign’s new window re-plans its deferred contacts; the campaign says when it dials next', async () => {
  const first = tomorrowUtc();
  const made = await createCampaign(tenant, { agent_id: agentId, calling_window: first.window });
  expect(made).toMatchObject({ next_dial_at: null, next_dial_reason: 'not started: set status running' });
  const phones = [uniqueMobile(), uniqueMobile()];
  const rows = [['phone', 'name', 'agency'], ...phones.map((p, i) => [p, `Person ${i}`, 'Acme'])];
  const job = await uploadAndWait(tenant, made.id, csvOf(rows));
  expect(job).toMatchObject({ status: 'completed', counts: { created: 2 } });
  await patchCampaign(tenant, made.id, { status: 'running' });
  await waitForDeferred(made.id, 2, first.opening);
  expect(await campaign(tenant, made.id)).toMatchObject({
    status: 'running',
    next_dial_at: first.opening,
    next_dial_reason: first.reason,
  });

  // The window moves to Perth, two days on: the deferred contacts follow it.
  const second = inTwoDaysPerth();
  const patched = await patchCampaign(tenant, made.id, { calling_window: second.window });
  expect(patched.status).toBe(200);
  expect(patched.body).toMatchObject({ next_dial_at: second.opening, next_dial_reason: second.reason });
  await waitForDeferred(made.id, 2, second.opening);
  expect(await campaign(tenant, made.id)).toMatchObject({
    next_dial_at: second.opening,
    next_dial_reason: second.reason,
  });

  // Paused, the window opens; on resume the contacts are dialled at once, each once.
  expect((await patchCampaign(tenant, made.id, { status: 'paused' })).body).toMatchObject({
    status: 'paused',
    next_dial_at: null,
    next_dial_reason: 'paused',
  });
  expect((await patchCampaign(tenant, made.id, { calling_window: ALWAYS_OPEN })).status).toBe(200);
  expect(await campaignCalls(tenant, made.id)).toHaveLength(0);
  const resumed = await patchCampaign(tenant, made.id, { status: 'running' });
  expect(resumed.body).toMatchObject({
    status: 'running',
    next_dial_reason: expect.stringMatching(/^due now/),
  });
  const done = await waitForStatus(tenant, made.id);
  expect(done.progress).toMatchObject({ total: 2, completed: 2 });
  expect(done).toMatchObject({ next_dial_at: null, next_dial_reason: null });
  const calls = await campaignCalls(tenant, made.id);
  expect(calls.map((c) => c.to_phone).sort()).toEqual([...phones].sort());
});
