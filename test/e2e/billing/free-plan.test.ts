import { beforeAll, describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { getBillingAccount } from '../../../functions/billing/ledger.js';
import { chargeCallUsage } from '../../../functions/billing/metering.js';
import { api, type Json } from '../../helpers/http.js';
import { createAgent, newTenant, numberFor, TEST_NUMBERS, ws, type Tenant } from '../calling/fixtures.js';
import { billingPath, buyCredits, subscribe, waitForAccount } from './fixtures.js';

/**
 * The Free plan's promise: when its credits run out every agent of the organisation is turned off
 * (answering_calls false, start-call 402), and credits coming back turn them on again.
 */
let tenant: Tenant;
let agents: Json[];

const agentView = async (agentId: string) =>
  (await api('GET', `${ws(tenant)}/agents/${agentId}`, { token: tenant.owner.token })).body;
const startCall = (agentId: string) =>
  api('POST', `${ws(tenant)}/agents/${agentId}/start-call`, {
    token: tenant.owner.token,
    body: { to_phone: TEST_NUMBERS.answered },
  });

beforeAll(async () => {
  tenant = await newTenant();
  agents = [
    await createAgent(tenant, { name: 'Front desk' }),
    await createAgent(tenant, { name: 'After hours' }),
  ];
  // A number needs a paid subscription; then the organisation goes back to Free, keeping the number.
  await subscribe(tenant.organisationId, tenant.owner.token, 'starter');
  await numberFor(tenant, agents[0].id);
  expect(
    (await api('DELETE', billingPath(tenant.organisationId, '/subscription'), { token: tenant.owner.token }))
      .status,
  ).toBe(202);
  await waitForAccount(
    tenant.organisationId,
    (a) => a.plan === 'free' && a.subscriptionStatus === 'canceled',
  );
});

describe('a Free organisation that spends its last credit', () => {
  test('has every agent turned off, and start-call is 402', async () => {
    const account = await getBillingAccount(tenant.organisationId, { consistent: true });
    // The call that spends the last credit (charged in full when it ends).
    await chargeCallUsage({
      organisationId: tenant.organisationId,
      callId: `call_${randomUUID()}`,
      billableSeconds: Math.ceil(account!.balanceUnits / 20),
    });
    const after = await getBillingAccount(tenant.organisationId, { consistent: true });
    expect(after!.balanceUnits).toBeLessThanOrEqual(0);
    expect(after!.agentsSuspended).toBe(true);
    for (const agent of agents) {
      expect(await agentView(agent.id)).toMatchObject({ answering_calls: false });
    }
    const refused = await startCall(agents[0].id);
    expect(refused.status).toBe(402);
    expect(refused.body).toEqual({ error: 'Insufficient credits' });
    const view = await api('GET', billingPath(tenant.organisationId), { token: tenant.owner.token });
    expect(view.body).toMatchObject({ plan: 'free', agents_suspended: true });
  });

  test('a purchase of credits turns them back on and calls start again', async () => {
    await buyCredits(tenant.organisationId, tenant.owner.token, 1_000);
    await waitForAccount(tenant.organisationId, (a) => a.agentsSuspended === false);
    for (const agent of agents) {
      expect(await agentView(agent.id)).toMatchObject({ answering_calls: true });
    }
    const started = await startCall(agents[0].id);
    expect(started.status).toBe(201);
  });
});
