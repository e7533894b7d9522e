import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findContactByPhone } from '../../../functions/contacts/service.js';
import { sendMessage } from '../../../functions/platform/queue.js';
import type { CallEndedMessage } from '../../../functions/platform/queue-messages.js';
import { readActionRun } from '../../../functions/post-call/entities.js';
import { readSmsOutbox } from '../../../functions/providers/sms/local-outbox.js';
import { api } from '../../helpers/http.js';
import {
  closeSqs,
  connectNumber,
  createAgent,
  deliveries,
  emailsTo,
  newTenant,
  sleep,
  startCall,
  startReceiver,
  TO,
  waitFor,
  ws,
  type Receiver,
  type Tenant,
} from './fixtures.js';

/**
 * Faults lose nothing and never send twice: a redelivered queue message (on any of the three
 * queues), concurrent duplicates of `call.ended`, and a provider that sends every status callback
 * twice and out of order all end with exactly one SMS of each kind, one email and one webhook.
 */

const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.stop()));
  closeSqs();
});

const stateDir = () =>
  (JSON.parse(readFileSync(process.env.LOCAL_STACK_STATE!, 'utf8')) as { state_dir: string }).state_dir;
const smsFrom = (from: string) =>
  readSmsOutbox(join(stateDir(), 'outbox', 'sms.jsonl')).filter((sms) => sms.from === from);

interface Setup {
  tenant: Tenant;
  agent: { id: string; post_call_actions: { id: string; type: string }[] };
  agentNumber: string;
  hook: Receiver;
  ownerPhone: string;
  summaryTo: string;
}

async function setup(): Promise<Setup> {
  const hook = await startReceiver();
  receivers.push(hook);
  const tenant = await newTenant();
  const ownerPhone = '+61491570182';
  const summaryTo = `dup-${tenant.workspaceId.slice(-10).toLowerCase()}@example.com`;
  const agent = await createAgent(tenant, [
    { type: 'sms_owner', config: { to: ownerPhone } },
    { type: 'sms_caller', config: {} },
    { type: 'email_summary', config: { to: summaryTo } },
    { type: 'webhook', config: { url: hook.url } },
    { type: 'contact_update', config: {} },
  ]);
  const agentNumber = await connectNumber(tenant, agent.id);
  return { tenant, agent, agentNumber, hook, ownerPhone, summaryTo };
}

async function everythingSent(s: Setup, callId: string, calledNumber: string) {
  await waitFor('every action to run', async () => {
    const sms = smsFrom(s.agentNumber);
    const contact = await findContactByPhone(s.tenant.workspaceId, calledNumber);
    const list = await deliveries(s.tenant, callId);
    return sms.length >= 2 &&
      emailsTo(s.summaryTo).length >= 1 &&
      s.hook.requests.length >= 1 &&
      contact &&
      list[0]?.state === 'succeeded'
      ? true
      : undefined;
  });
}

async function exactlyOnce(s: Setup, callId: string, calledNumber: string) {
  const sms = smsFrom(s.agentNumber);
  expect(sms.filter((m) => m.to === s.ownerPhone)).toHaveLength(1);
  expect(sms.filter((m) => m.to === calledNumber)).toHaveLength(1);
  expect(emailsTo(s.summaryTo)).toHaveLength(1);
  expect(s.hook.requests).toHaveLength(1);
  const list = await deliveries(s.tenant, callId);
  expect(list).toHaveLength(1);
  expect(list[0].attempts).toHaveLength(1);
  const contact = await findContactByPhone(s.tenant.workspaceId, calledNumber);
  expect(contact?.callCount).toBe(1);
  // Each action ran exactly once (the outboxes also drop repeated keys, so count the runs themselves).
  for (const action of s.agent.post_call_actions) {
    const { data: run } = await readActionRun(s.tenant.workspaceId, callId, action.id);
    expect({ type: action.type, state: run?.state, tries: run?.tries }).toEqual({
      type: action.type,
      state: 'succeeded',
      tries: 1,
    });
  }
  const ledger = await api('GET', `/api/v1/organisations/${s.tenant.organisationId}/billing/ledger`, {
    token: s.tenant.owner.token,
  });
  expect((ledger.body.items as { reason: string }[]).filter((e) => e.reason.startsWith('SMS '))).toHaveLength(
    2,
  );
}

describe('duplicates', () => {
  it('redelivered messages on the post-call, actions and delivery queues send nothing twice', async () => {
    const s = await setup();
    const callId = await startCall(s.tenant, s.agent.id);
    await everythingSent(s, callId, TO.answered);
    const [delivery] = await deliveries(s.tenant, callId);

    const ended: CallEndedMessage = {
      type: 'call.ended',
      call_id: callId,
      workspace_id: s.tenant.workspaceId,
      organisation_id: s.tenant.organisationId,
    };
    await Promise.all([
      sendMessage('postCall', ended),
      sendMessage('postCall', ended),
      ...s.agent.post_call_actions.map((action) =>
        sendMessage('postCallActions', {
          type: 'post_call.action',
          workspace_id: s.tenant.workspaceId,
          organisation_id: s.tenant.organisationId,
          call_id: callId,
          action_id: action.id,
        }),
      ),
      sendMessage('webhookDelivery', {
        type: 'webhook.attempt',
        workspace_id: s.tenant.workspaceId,
        delivery_id: delivery.id,
        attempt: 1,
        due_at: new Date().toISOString(),
      }),
    ]);
    await sleep(4000);
    await exactlyOnce(s, callId, TO.answered);
  });

  it('concurrent duplicates of call.ended, racing the real one, build one record and run each action once', async () => {
    const s = await setup();
    const callId = await startCall(s.tenant, s.agent.id);
    await waitFor(
      'the call to end',
      async () => {
        const res = await api('GET', `${ws(s.tenant)}/calls/${callId}`, { token: s.tenant.owner.token });
        return res.body.status === 'completed' ? true : undefined;
      },
      30_000,
      50,
    );
    const ended: CallEndedMessage = {
      type: 'call.ended',
      call_id: callId,
      workspace_id: s.tenant.workspaceId,
      organisation_id: s.tenant.organisationId,
    };
    await Promise.all([1, 2, 3].map(() => sendMessage('postCall', ended)));
    await everythingSent(s, callId, TO.answered);
    await sleep(4000);
    await exactlyOnce(s, callId, TO.answered);
  });

  it('a provider that sends every status callback twice, out of order, gives one SMS of each kind, one email and one webhook', async () => {
    const s = await setup();
    const callId = await startCall(s.tenant, s.agent.id, TO.duplicated);
    await everythingSent(s, callId, TO.duplicated);
    await sleep(4000);
    await exactlyOnce(s, callId, TO.duplicated);
  });
});
