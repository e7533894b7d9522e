import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isInGoodStanding } from '../../../functions/billing/standing.js';
import { waitForSubscriptionActive } from '../../../functions/billing/subscriptions.js';
import { findContactByPhone } from '../../../functions/contacts/lookup.js';
import { countHeldActions, releaseHeldActions } from '../../../functions/post-call/held-actions.js';
import { readSmsOutbox } from '../../../functions/providers/sms/local-outbox.js';
import { api } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { readQuiescence, waitFor, waitForConsumed, waitForQuiescence } from '../../helpers/wait.js';
import {
  closeSqs,
  connectNumber,
  createAgent,
  deliveries,
  emailsTo,
  newTenant,
  startCall,
  startReceiver,
  TO,
  type Receiver,
} from './fixtures.js';

/**
 * A failed subscription payment holds back the charged actions (owner SMS, caller SMS, email) until
 * billing is in good standing again; the call itself, the webhook and the contact update go ahead.
 * The payment failure and recovery come from the local payment provider as signed billing webhooks.
 */

let hook: Receiver | undefined;
afterAll(async () => {
  await hook?.stop();
  closeSqs();
});

const stateDir = () =>
  (JSON.parse(readFileSync(process.env.LOCAL_STACK_STATE!, 'utf8')) as { state_dir: string }).state_dir;
const smsFrom = (from: string) =>
  readSmsOutbox(join(stateDir(), 'outbox', 'sms.jsonl')).filter((sms) => sms.from === from);

async function simulator(path: string): Promise<void> {
  const res = await fetch(`${stackState().env.PAYMENTS_SIMULATOR_URL}${path}`, { method: 'POST' });
  if (!res.ok) throw new Error(`payments simulator ${path}: ${res.status} ${await res.text()}`);
}

describe('held charged actions', () => {
  it('are held while a subscription payment has failed and go out once, when it recovers; free actions go out at once', async () => {
    hook = await startReceiver();
    const tenant = await newTenant({ paid: false });
    const subscribed = await api(
      'POST',
      `/api/v1/organisations/${tenant.organisationId}/billing/subscription`,
      {
        token: tenant.owner.token,
        body: { plan: 'growth' },
      },
    );
    expect(subscribed.status).toBe(202);
    const account = await waitForSubscriptionActive(tenant.organisationId, 'growth');
    const subscriptionId = account.providerSubscriptionId!;

    const ownerPhone = '+61491570183';
    const summaryTo = `held-${tenant.workspaceId.slice(-10).toLowerCase()}@example.com`;
    const agent = await createAgent(tenant, [
      { type: 'sms_owner', config: { to: ownerPhone } },
      { type: 'sms_caller', config: {} },
      { type: 'email_summary', config: { to: summaryTo } },
      { type: 'webhook', config: { url: hook.url } },
      { type: 'contact_update', config: {} },
    ]);
    const agentNumber = await connectNumber(tenant, agent.id);

    await simulator(`/control/subscriptions/${subscriptionId}/payment-failed`);
    await waitFor(async () => ((await isInGoodStanding(tenant.organisationId)) ? undefined : true), {
      what: 'billing to be past due',
    });

    // The call goes ahead, and so do the webhook and the contact update.
    const callId = await startCall(tenant, agent.id);
    await waitFor(() => hook!.requests[0], { what: 'the webhook' });
    await waitFor(() => findContactByPhone(tenant.workspaceId, TO.answered).then((c) => c ?? undefined), {
      what: 'the contact',
    });
    await waitFor(async () => ((await countHeldActions(tenant.organisationId)) === 3 ? true : undefined), {
      what: 'three held actions',
    });
    // Every action of the call has run (or been held): nothing is left on a queue.
    await waitForQuiescence();
    expect(smsFrom(agentNumber)).toHaveLength(0);
    expect(emailsTo(summaryTo)).toHaveLength(0);
    expect(await countHeldActions(tenant.organisationId)).toBe(3);

    // A release while still past due (too early) runs nothing: the actions are held again.
    const beforeRelease = await readQuiescence();
    expect(await releaseHeldActions(tenant.organisationId)).toBe(3);
    // The three released actions were received and handled by the actions consumer.
    await waitForConsumed(beforeRelease, { RunPostCallAction: 3 });
    expect(smsFrom(agentNumber)).toHaveLength(0);
    expect(await countHeldActions(tenant.organisationId)).toBe(3);

    // Payment recovers: billing releases them, and each goes out once.
    await simulator(`/control/subscriptions/${subscriptionId}/payment-succeeded`);
    await waitFor(
      () => (smsFrom(agentNumber).length === 2 && emailsTo(summaryTo).length === 1 ? true : undefined),
      { what: 'the held actions to go out' },
    );
    expect(
      smsFrom(agentNumber)
        .map((s) => s.to)
        .sort(),
    ).toEqual([ownerPhone, TO.answered].sort());
    expect(await countHeldActions(tenant.organisationId)).toBe(0);

    // A second release (billing retrying) sends nothing again.
    expect(await releaseHeldActions(tenant.organisationId)).toBe(0);
    await waitForQuiescence();
    expect(smsFrom(agentNumber)).toHaveLength(2);
    expect(emailsTo(summaryTo)).toHaveLength(1);
    expect(hook.requests).toHaveLength(1);
    expect((await deliveries(tenant, callId))[0].state).toBe('succeeded');
  });
});
