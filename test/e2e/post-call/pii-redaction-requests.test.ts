import { scheduledFunctions } from '../../../lib/cloud/catalog.js';
import { readStackState } from '../../../lib/local/state.js';
import { receiveCall } from '../../../lib/tools/cli/call.js';
import { readCall } from '../../../functions/calling/lifecycle.js';
import { api, type Json } from '../../helpers/http.js';
import { requestsBetween, stackCounters, totalOf, type StackCounters } from '../../helpers/metrics.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { createAgent, newTenant, numberFor, ws, type Tenant } from '../calling/fixtures.js';

/**
 * What PII redaction costs in DynamoDB requests (docs/pii-redaction.md "Cost"): the same inbound call —
 * the same caller, a contact of the workspace, saying an e-mail and a card number, the same agent but
 * for `pii_redaction` — with redaction off, then on, each counted by the local stack (GET
 * /_local/metrics, every function the call reaches, the schedules and other families' work aside) between two quiescent points,
 * from the dial to its post-call analysis stored. Nothing is asked of the API in between (the waits
 * read the table directly). Redaction on adds the contact's GetItem (its known values) and the
 * conversation item's DeleteItem: at most 2 more. A write that met a concurrent one (CallWriteConflicts)
 * is tried again, at most a read and a transaction more, as test/e2e/calling/call-requests.test.ts allows.
 */

const CALLER = '+61491570177';
const LINES = [
  'Hi, my email is jane dot doe at example dot com and my card is 4111 1111 1111 1111.',
  'Thanks, bye.',
];
const SCHEDULED = new Set(scheduledFunctions().map((f) => f.id));
/**
 * Functions no inbound call reaches (campaigns, imports, knowledge, integrations, evaluations): on the
 * shared stack, another suite's paced campaign may run in a call's window (CI counted its pages).
 */
const NOT_A_CALLS = new Set([
  'ProcessCampaignMessages',
  'ProcessContactImport',
  'ProcessKnowledge',
  'SyncIntegrationPage',
  'RunEvaluationScenario',
]);

interface CallRequests {
  callId: string;
  total: number;
  byFunction: Record<string, Record<string, number>>;
  conflicts: number;
}

let tenant: Tenant;
const numbers: { off: string; on: string } = { off: '', on: '' };

beforeAll(async () => {
  tenant = await newTenant({ paid: true });
  const contact = await api('POST', `${ws(tenant)}/contacts`, {
    token: tenant.owner.token,
    body: { first_name: 'Jane', last_name: 'Doe', phone: CALLER, email: 'jane.doe@example.com' },
  });
  expect(contact.status).toBe(201);
  const body = { prompt: 'You are Riley, a real-estate agent.' };
  const off: Json = await createAgent(tenant, { ...body, name: 'Riley (redaction off)' });
  const on: Json = await createAgent(tenant, {
    ...body,
    name: 'Riley (redaction on)',
    pii_redaction: { enabled: true },
  });
  numbers.off = (await numberFor(tenant, off.id)).phone_number as string;
  numbers.on = (await numberFor(tenant, on.id)).phone_number as string;
});

/** One call to `to` from its start to its analysis stored; what the service asked of DynamoDB for it. */
async function countedCall(to: string): Promise<CallRequests> {
  await waitForQuiescence({ timeoutMs: 60_000 });
  const before = await stackCounters();
  const received = await receiveCall(readStackState()!, { from: CALLER, to, says: LINES });
  expect(received.accepted).toBe(true);
  const callId = received.call_id as string;
  await waitFor(
    async () => {
      const call = await readCall(tenant.workspaceId, callId);
      return call?.status === 'completed' && call.analysis !== undefined ? call : undefined;
    },
    { what: `call ${callId} completed and analysed`, timeoutMs: 90_000 },
  );
  await waitForQuiescence({ timeoutMs: 60_000 });
  const after = await stackCounters();
  const byFunction: Record<string, Record<string, number>> = {};
  for (const fnId of Object.keys(after.dynamodb_by_function)) {
    if (SCHEDULED.has(fnId) || NOT_A_CALLS.has(fnId)) continue;
    const commands = requestsBetween(before, after, fnId);
    if (Object.keys(commands).length > 0) byFunction[fnId] = commands;
  }
  return {
    callId,
    total: Object.values(byFunction).reduce((sum, commands) => sum + totalOf(commands), 0),
    byFunction,
    conflicts: conflictsOf(after) - conflictsOf(before),
  };
}

const conflictsOf = (m: StackCounters): number => m.service_metrics.CallWriteConflicts?.count ?? 0;

/** The call whose total is the median of three. */
const median = (calls: CallRequests[]): CallRequests =>
  [...calls].sort((a, b) => a.total - b.total)[Math.floor(calls.length / 2)];

test('a call with redaction on asks DynamoDB at most 2 more requests than the same call without', async () => {
  // Each agent's first call is not counted (a running stack's cost, not its first imports' reads). Then
  // three of each, alternating: the medians are compared, so one call's retried write (a conversation's
  // frames racing, which CallWriteConflicts does not count) does not decide it.
  await countedCall(numbers.off);
  await countedCall(numbers.on);
  const offs: CallRequests[] = [];
  const ons: CallRequests[] = [];
  for (let i = 0; i < 3; i += 1) {
    offs.push(await countedCall(numbers.off));
    ons.push(await countedCall(numbers.on));
  }
  const off = median(offs);
  const on = median(ons);

  // The calls were what they should be: the same conversation, stored raw and redacted.
  const [rawCall, redactedCall] = await Promise.all([
    readCall(tenant.workspaceId, off.callId),
    readCall(tenant.workspaceId, on.callId),
  ]);
  expect(rawCall?.contactId).toEqual(expect.any(String));
  expect(redactedCall?.contactId).toBe(rawCall?.contactId);
  expect(rawCall?.transcript?.find((t) => t.role === 'user')?.text).toBe(LINES[0]);
  expect(redactedCall?.piiRedacted).toBe(true);
  expect(redactedCall?.transcript?.find((t) => t.role === 'user')?.text).toBe(
    'Hi, my email is [EMAIL_1] and my card is [CREDIT_CARD_1].',
  );

  const retries = 2 * Math.max(0, on.conflicts - off.conflicts);
  const extra = on.total - off.total;
  const report = JSON.stringify(
    { off, on, extra, totals: { off: offs.map((r) => r.total), on: ons.map((r) => r.total) } },
    null,
    1,
  );
  if (extra > 2 + retries) throw new Error(`redaction on asked ${extra} more requests:\n${report}`);
  // It costs something: the live history is deleted with the call's end.
  const deletes = (r: CallRequests) => r.byFunction.ConversationRelay?.DeleteItem ?? 0;
  expect(deletes(on) - deletes(off)).toBe(1);
}, 300_000);
