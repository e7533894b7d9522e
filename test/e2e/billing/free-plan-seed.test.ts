import { beforeAll, describe, expect, test } from '@jest/globals';
import { seed, type SeedResult } from '../../../lib/tools/cli/seed.js';
import { readStackState } from '../../../lib/local/state.js';
import { api, type Json } from '../../helpers/http.js';
import { waitFor } from '../../helpers/wait.js';
import { TEST_NUMBERS } from '../calling/fixtures.js';
import { billingPath } from './fixtures.js';

/**
 * The Free demo organisation of `npm run cli -- seed --plan free`, end to end through the public API.
 * The seed subscribes to Growth to buy its numbers and then cancels: the Growth plan's included
 * credits expire with the subscription and the Free plan's 500 are granted (docs/billing.md, "Plan
 * changes"). A long call (+61491570113, 1,800 s: 600 credits) spends them; the next start-call is
 * 402 and the agents stop answering, until credits are bought.
 */
let demo: SeedResult;

const workspacePath = (rest: string) => `/api/v1/workspaces/${demo.workspace_id}${rest}`;
const getBilling = async () =>
  (await api('GET', billingPath(demo.organisation_id), { token: demo.owner_token })).body as Json;
const agentView = async () =>
  (await api('GET', workspacePath(`/agents/${demo.agent_id}`), { token: demo.owner_token })).body as Json;
/** Start-call as the demo's API key does it (the CLI's documented way to place a call). */
const startCall = (toPhone: string) =>
  api('POST', workspacePath(`/agents/${demo.agent_id}/start-call`), {
    token: demo.api_key,
    body: { to_phone: toPhone },
  });
/** Polls the call until `done` holds (never a fixed pause). */
async function waitForCall(callId: string, done: (call: Json) => boolean, timeoutMs: number) {
  let last: Json;
  return waitFor(
    async () => {
      const res = await api('GET', workspacePath(`/calls/${callId}`), { token: demo.owner_token });
      last = res.body;
      return res.status === 200 && done(res.body) ? (res.body as Json) : undefined;
    },
    { what: () => `call ${callId} to get there; last seen: ${JSON.stringify(last)}`, timeoutMs },
  );
}
const ended = (call: Json) => ['completed', 'failed'].includes(call.status as string);

beforeAll(async () => {
  const state = readStackState();
  if (!state) throw new Error('no local stack (LOCAL_STACK_STATE)');
  demo = await seed(state, { plan: 'free' }, () => undefined);
}, 90_000);

describe('the Free demo organisation made by the CLI seed', () => {
  test('is on the Free plan with the Free plan’s 500 credits, not the Growth plan’s', async () => {
    expect(await getBilling()).toMatchObject({
      plan: 'free',
      status: 'canceled',
      credit_balance: 500,
      included_credits_this_period: 500,
      agents_suspended: false,
    });
    expect(await agentView()).toMatchObject({ answering_calls: true, suspended_by_billing: false });
  });

  test('a long call spends them: the next start-call is 402 and the agents stop answering', async () => {
    const placed = await startCall(TEST_NUMBERS.long);
    expect(placed.status).toBe(201);
    // 1,800 simulated seconds of conversation (30 s of wall time in the tests), then the charge.
    const call = await waitForCall(
      placed.body.id as string,
      (c) => c.status === 'completed' && c.credits !== null,
      120_000,
    );
    expect(call).toMatchObject({ status: 'completed', duration_seconds: 1_800, credits: 600 });

    expect(await getBilling()).toMatchObject({ plan: 'free', credit_balance: -100, agents_suspended: true });
    const refused = await startCall(TEST_NUMBERS.answered);
    expect(refused.status).toBe(402);
    expect(refused.body).toEqual({ error: 'Insufficient credits' });
    expect(await agentView()).toMatchObject({ answering_calls: false, suspended_by_billing: true });
  }, 150_000);

  test('buying credits turns the agents back on and calls start again', async () => {
    const bought = await api('POST', billingPath(demo.organisation_id, '/credits'), {
      token: demo.owner_token,
      body: { quantity: 1_000 },
    });
    expect(bought.status).toBe(202);
    // The payments simulator pays at once and sends the signed event to the billing webhook.
    let last: Json;
    await waitFor(
      async () => {
        last = await getBilling();
        return last.credit_balance === 900 && last.agents_suspended === false;
      },
      { what: () => `the purchase to be granted; last seen: ${JSON.stringify(last)}` },
    );
    expect(await agentView()).toMatchObject({ answering_calls: true, suspended_by_billing: false });
    const started = await startCall(TEST_NUMBERS.answered);
    expect(started.status).toBe(201);
    // Leave nothing playing behind: the short call ends on its own.
    await waitForCall(started.body.id as string, ended, 30_000);
  });
});
