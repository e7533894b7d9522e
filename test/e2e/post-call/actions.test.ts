import { findContactByPhone } from '../../../functions/contacts/lookup.js';
import { readActionRun } from '../../../functions/post-call/entities.js';
import { getCallRecord } from '../../../functions/post-call/pipeline.js';
import { api } from '../../helpers/http.js';
import { readQuiescence, waitFor, waitForHandled } from '../../helpers/wait.js';
import {
  connectNumber,
  createAgent,
  deliveries,
  emailsTo,
  newTenant,
  smsWithKey,
  startCall,
  receiversForThisFile,
  TO,
} from './fixtures.js';
import { readSmsOutbox } from '../../../functions/providers/sms/local-outbox.js';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';

/**
 * Every post-call action, each its own message on the actions queue: SMS to the owner and the caller
 * through the SMS port (local outbox), the email summary through the email port, the webhook, and
 * the contact update and profile enrichment that write the contact tied to the call.
 */

const receiver = receiversForThisFile();

const stateDir = () =>
  (JSON.parse(readFileSync(process.env.LOCAL_STACK_STATE!, 'utf8')) as { state_dir: string }).state_dir;
/** SMS the agent's number sent (each test tenant has its own number). */
const smsFrom = (from: string) =>
  readSmsOutbox(join(stateDir(), 'outbox', 'sms.jsonl')).filter((sms) => sms.from === from);

describe('post-call actions', () => {
  it('run every configured action once: owner SMS, caller SMS, email summary, webhook, contact update, profile enrichment', async () => {
    const hook = await receiver();
    const tenant = await newTenant();
    const ownerPhone = '+61491570180';
    const summaryTo = `summary-${tenant.workspaceId.slice(-8).toLowerCase()}@example.com`;
    const agent = await createAgent(tenant, [
      { type: 'sms_owner', config: { to: ownerPhone } },
      { type: 'sms_caller', config: { message: 'Thanks {{name}}, {{agent_name}} here. Reply any time.' } },
      { type: 'email_summary', config: { to: summaryTo } },
      { type: 'webhook', config: { url: hook.url } },
      { type: 'contact_update', config: {} },
      { type: 'profile_enrichment', config: {} },
      { type: 'email_summary', config: {} }, // no `to`: the workspace's admins
    ]);
    const agentNumber = await connectNumber(tenant, agent.id);
    const callId = await startCall(tenant, agent.id, TO.answered, {
      name: 'Jordan Lee',
      email: `jordan-${tenant.workspaceId.slice(-6).toLowerCase()}@example.com`,
      listing_id: 'lst_9',
      listing_address: '9 Ocean Street, Bondi NSW 2026',
      listing_price: '$1,900,000',
    });

    const sent = await waitFor(
      () => {
        const list = smsFrom(agentNumber);
        return list.length >= 2 ? list : undefined;
      },
      { what: 'both SMS' },
    );
    const toOwner = sent.find((sms) => sms.to === ownerPhone)!;
    const toCaller = sent.find((sms) => sms.to === TO.answered)!;
    expect(toOwner.text).toContain(`Outbound call to ${TO.answered}`);
    expect(toOwner.text).toContain('9 Ocean Street, Bondi NSW 2026 ($1,900,000)');
    expect(toCaller.text).toBe('Thanks Jordan Lee, Riley here. Reply any time.');

    const [email] = await waitFor(
      () => {
        const list = emailsTo(summaryTo);
        return list.length > 0 ? list : undefined;
      },
      { what: 'the email summary' },
    );
    expect(email.subject).toBe(`Call summary: ${TO.answered} (completed)`);
    expect(email.text).toContain(callId);
    expect(email.text).toContain('lst_9: 9 Ocean Street, Bondi NSW 2026 — $1,900,000');

    await waitFor(() => hook.requests[0], { what: 'the webhook' });
    const [toOwnerEmail] = await waitFor(
      () => {
        const list = emailsTo(tenant.owner.email).filter((e) => e.subject.startsWith('Call summary'));
        return list.length > 0 ? list : undefined;
      },
      { what: 'the summary to the admins' },
    );
    expect(toOwnerEmail.text).toContain(callId);

    const contact = await waitFor(
      async () => {
        const found = await findContactByPhone(tenant.workspaceId, TO.answered, { withCalls: true });
        return found?.profile && found.callCount === 1 ? found : undefined;
      },
      { what: 'the contact with its profile' },
    );
    expect(contact).toMatchObject({
      name: 'Jordan Lee',
      phone: TO.answered,
      email: `jordan-${tenant.workspaceId.slice(-6).toLowerCase()}@example.com`,
      source: 'Call',
      callCount: 1,
      lastCallId: callId,
    });
    expect(contact.profile).toMatchObject({
      last_call_id: callId,
      listings_of_interest: [
        { listing_id: 'lst_9', address: '9 Ocean Street, Bondi NSW 2026', price: '$1,900,000' },
      ],
    });

    // SMS are charged once each (5 credits per segment) in the ledger.
    const ledger = await api('GET', `/api/v1/organisations/${tenant.organisationId}/billing/ledger`, {
      token: tenant.owner.token,
    });
    expect(ledger.status).toBe(200);
    const smsCharges = (ledger.body.items as { reason: string }[]).filter((e) => e.reason.startsWith('SMS '));
    expect(smsCharges).toHaveLength(2);

    // A second call from the same number updates the same contact: no duplicate.
    const second = await startCall(tenant, agent.id, TO.answered, { name: 'Someone Else' });
    const updated = await waitFor(
      async () => {
        const found = await findContactByPhone(tenant.workspaceId, TO.answered, { withCalls: true });
        return found?.callCount === 2 && found.lastCallId === second ? found : undefined;
      },
      { what: 'the second call on the contact' },
    );
    expect(updated.contactId).toBe(contact.contactId);
    expect(updated.name).toBe('Jordan Lee'); // a known name is not overwritten
    // The second call's record knows the contact now.
    const record = await waitFor(() => getCallRecord(tenant.workspaceId, second), {
      what: 'the second record',
    });
    expect(record.contact).toEqual({
      contact_id: contact.contactId,
      name: 'Jordan Lee',
      phone: TO.answered,
      email: contact.email,
    });
  });

  it('one failing action never blocks or repeats another', async () => {
    const hook = await receiver();
    const tenant = await newTenant();
    const agent = await createAgent(tenant, [
      { type: 'email_summary', config: { to: 'nobody@fail.test' } },
      { type: 'sms_owner', config: { to: '+61491570195' } }, // the local SMS provider refuses +6149157019x
      { type: 'webhook', config: { url: hook.url } },
      { type: 'sms_owner', config: { to: '+61491570181' } },
      { type: 'sms_owner', config: {} }, // no number to send to: fails at once, charges nothing
    ]);
    const agentNumber = await connectNumber(tenant, agent.id);
    const callId = await startCall(tenant, agent.id);

    await waitFor(() => hook.requests[0], { what: 'the webhook' });
    await waitFor(() => (smsFrom(agentNumber).some((s) => s.to === '+61491570181') ? true : undefined), {
      what: 'the good SMS',
    });
    const actions = agent.post_call_actions as { id: string }[];
    const failedEmail = await waitFor(
      async () => {
        const { data } = await readActionRun(tenant.workspaceId, callId, actions[0].id);
        return data?.state === 'failed' ? data : undefined;
      },
      { what: 'the email action to give up', timeoutMs: 45_000 },
    );
    // Every action has run its course (no retry left on a queue or in flight): now count.
    await waitForHandled(await readQuiescence(), {});
    expect(failedEmail.tries).toBe(5);
    expect(failedEmail.error).toContain('fail.test');
    const { data: failedSms } = await readActionRun(tenant.workspaceId, callId, actions[1].id);
    expect(failedSms).toMatchObject({ state: 'failed', tries: 1 }); // a refused number is not retried
    const { data: misconfigured } = await readActionRun(tenant.workspaceId, callId, actions[4].id);
    expect(misconfigured).toMatchObject({
      state: 'failed',
      tries: 1,
      error: expect.stringContaining('invalid sms_owner config: to'),
    });
    // The refused SMS was charged before sending and refunded when it could never go out.
    const ledger = await api('GET', `/api/v1/organisations/${tenant.organisationId}/billing/ledger`, {
      token: tenant.owner.token,
    });
    const reasons = (ledger.body.items as { reason: string; kind: string }[]).map(
      (e) => `${e.kind}:${e.reason.split(':')[0]}`,
    );
    expect(reasons.filter((r) => r.startsWith('refund:SMS'))).toHaveLength(1);
    expect(reasons.filter((r) => r.startsWith('charge:SMS'))).toHaveLength(2); // the refused one and the good one
    expect(hook.requests).toHaveLength(1);
    expect(smsFrom(agentNumber).filter((s) => s.to === '+61491570181')).toHaveLength(1);
    expect((await deliveries(tenant, callId))[0].state).toBe('succeeded');
    expect(smsWithKey(`post-call:`).length).toBeGreaterThan(0);
  });
});
