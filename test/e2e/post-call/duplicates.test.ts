import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findContactByPhone } from '../../../functions/contacts/lookup.js';
import { sendMessage } from '../../../functions/platform/queue.js';
import type { CallEndedMessage } from '../../../functions/platform/queue-messages.js';
import { readActionRun } from '../../../functions/post-call/entities.js';
import { readSmsOutbox } from '../../../functions/providers/sms/local-outbox.js';
import { api, type Json } from '../../helpers/http.js';
import { stackState } from '../../helpers/stack-state.js';
import { readQuiescence, waitFor, waitForConsumed, waitForQuiescence } from '../../helpers/wait.js';
import type { QuiescenceReport } from '../../../lib/local/quiescence.js';
import {
  connectNumber,
  createAgent,
  deliveries,
  emailsTo,
  newTenant,
  startCall,
  receiversForThisFile,
  TO,
  ws,
  type Receiver,
  type Tenant,
} from './fixtures.js';

/**
 * Faults lose nothing and never send twice: a redelivered queue message (on any of the three
 * queues), concurrent duplicates of `call.ended`, and a provider that sends every status callback
 * twice and out of order all end with exactly one SMS of each kind, one email and one webhook.
 *
 * "Exactly once" is only worth asserting once every duplicate has been handled: each test waits for
 * the results (everythingSent), for the duplicates to have been received by their consumers or sent
 * by the simulator, and for the local stack to be quiescent (no message left on a queue or in
 * flight, no callback still to come), and only then counts.
 */

const receiver = receiversForThisFile();

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
  const hook = await receiver();
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
  await waitFor(
    async () => {
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
    },
    { what: 'every action to run' },
  );
}

/** No duplicate ended in a DLQ: each was handled (and found to be done already), not given up on. */
function expectNoNewDeadLetters(before: QuiescenceReport, after: QuiescenceReport) {
  const depth = (report: QuiescenceReport) =>
    Object.fromEntries(Object.entries(report.queues).map(([queue, q]) => [queue, q.dead_letters]));
  expect(depth(after)).toEqual(depth(before));
}

/** The telephony simulator's record of the call it placed for `callId`: every callback it sent. */
async function simulatedCall(callId: string): Promise<Json> {
  const { TELEPHONY_SIMULATOR_URL: url, TELEPHONY_AUTH_TOKEN: token } = stackState().env;
  const get = async (path: string) =>
    (await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } })).json() as Promise<Json>;
  const [placed] = (await get(`/calls?call_id=${callId}`)).items as { sid: string }[];
  return get(`/calls/${placed.sid}`);
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
  const contact = await findContactByPhone(s.tenant.workspaceId, calledNumber, { withCalls: true });
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
    // What the call itself set off has settled: the redelivered messages are all that is left to do.
    const before = await waitForQuiescence();

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
    // Every redelivered message was received by its consumer and handled, none is left anywhere.
    const after = await waitForConsumed(before, {
      ProcessCallEnded: 2,
      RunPostCallAction: s.agent.post_call_actions.length,
      DeliverWebhook: 1,
    });
    expectNoNewDeadLetters(before, after);
    await exactlyOnce(s, callId, TO.answered);
  });

  it('concurrent duplicates of call.ended, racing the real one, build one record and run each action once', async () => {
    const s = await setup();
    const callId = await startCall(s.tenant, s.agent.id);
    await waitFor(
      async () => {
        const res = await api('GET', `${ws(s.tenant)}/calls/${callId}`, { token: s.tenant.owner.token });
        return res.body.status === 'completed' ? true : undefined;
      },
      { what: 'the call to end', timeoutMs: 30_000, intervalMs: 50 },
    );
    const ended: CallEndedMessage = {
      type: 'call.ended',
      call_id: callId,
      workspace_id: s.tenant.workspaceId,
      organisation_id: s.tenant.organisationId,
    };
    // A snapshot, not a wait: the duplicates must race the real call.ended, still being handled.
    const before = await readQuiescence();
    await Promise.all([1, 2, 3].map(() => sendMessage('postCall', ended)));
    await everythingSent(s, callId, TO.answered);
    // The three duplicates were received and handled, and everything they could set off has settled.
    const after = await waitForConsumed(before, { ProcessCallEnded: 3 });
    expectNoNewDeadLetters(before, after);
    await exactlyOnce(s, callId, TO.answered);
  });

  it('a provider that sends every status callback twice, out of order, gives one SMS of each kind, one email and one webhook', async () => {
    const s = await setup();
    const before = await waitForQuiescence();
    const callId = await startCall(s.tenant, s.agent.id, TO.duplicated);
    await everythingSent(s, callId, TO.duplicated);
    // The simulator has sent every callback, the duplicates included (none left to come), and what
    // they set off has settled.
    const after = await waitForQuiescence();
    const played = await simulatedCall(callId);
    expect(played.finished).toBe(true);
    const callbacks = played.callbacks as {
      kind: string;
      status?: string;
      duplicate: boolean;
      http_status?: number;
    }[];
    // Every callback the call was subscribed to (the answer, the end), the voice runtime's `started`
    // and the recording: each sent twice.
    const sent = (duplicate: boolean) =>
      callbacks
        .filter((c) => c.duplicate === duplicate)
        .map((c) => c.status ?? c.kind)
        .sort();
    expect(sent(false)).toEqual(['completed', 'in-progress', 'recording', 'started']);
    expect(sent(true)).toEqual(sent(false));
    const duplicates = callbacks.filter((c) => c.duplicate);
    expect(duplicates.every((c) => c.http_status === 200)).toBe(true);
    expectNoNewDeadLetters(before, after);
    await exactlyOnce(s, callId, TO.duplicated);
  });
});
