import { workspaceCalls } from '../../../functions/calling/call-log-merge.js';
import { api, type ApiResponse } from '../../helpers/http.js';
import { waitForQuiescence } from '../../helpers/wait.js';
import { apiKey, readyToCall, setConcurrencyLimit, workspaceRecord, ws, type Tenant } from './fixtures.js';

/**
 * A busy workspace (issue 44): the concurrency limit holds exactly when many starts race for the last
 * slots. 200 start-call requests at once, through the gateway, against a limit of 50: exactly 50 are
 * admitted and the other 150 are 429, whichever order the transactions land in (the slot is one
 * conditional counter on the workspace item, taken in the call's creation transaction: docs/scale.md).
 * The number dialled answers and opens no conversation, so no call ends (nor frees a slot) meanwhile.
 */

const EXTERNAL = '+61491570116';
const LIMIT = 50;
const REQUESTS = 200;

let tenant: Tenant;
let agentId: string;

beforeAll(async () => {
  const ready = await readyToCall();
  tenant = ready.tenant;
  agentId = ready.agent.id;
  await setConcurrencyLimit(tenant.workspaceId, LIMIT);
});

it(`${REQUESTS} concurrent starts against a limit of ${LIMIT} admit exactly ${LIMIT}; the others are 429`, async () => {
  const { key } = await apiKey(tenant);
  const start = (): Promise<ApiResponse> =>
    api('POST', `${ws(tenant)}/agents/${agentId}/start-call`, { token: key, body: { to_phone: EXTERNAL } });
  const answers = await Promise.all(Array.from({ length: REQUESTS }, start));

  const statuses = answers.reduce<Record<number, number>>((byStatus, res) => {
    byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
    return byStatus;
  }, {});
  expect(statuses).toEqual({ 201: LIMIT, 429: REQUESTS - LIMIT });
  for (const refused of answers.filter((res) => res.status === 429)) {
    expect(refused.body).toEqual({ error: 'Too many concurrent calls' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  }
  const admitted = new Set(answers.filter((res) => res.status === 201).map((res) => res.body.id as string));
  expect(admitted.size).toBe(LIMIT);

  // The counter and the call log agree with the answers (both written in the start's transaction): no
  // refused start left a call or a slot.
  expect((await workspaceRecord(tenant.workspaceId))?.activeCalls).toBe(LIMIT);
  const calls = await workspaceCalls(tenant.workspaceId);
  expect(new Set(calls.map((call) => call.callId))).toEqual(admitted);

  // Ending a call gives its slot back: the next start is admitted, the one after it refused.
  const [first] = admitted;
  const hung = await api('POST', `${ws(tenant)}/calls/${first}/hangup`, { token: tenant.owner.token });
  expect(hung.status).toBe(200);
  expect((await start()).status).toBe(201);
  expect((await start()).status).toBe(429);
});

afterAll(async () => {
  // Ends the calls still up, so the stack's simulator has nothing left running for later suites.
  const calls = await workspaceCalls(tenant.workspaceId);
  await Promise.all(
    calls
      .filter((call) => !['completed', 'failed'].includes(call.status))
      .map((call) => api('POST', `${ws(tenant)}/calls/${call.callId}/hangup`, { token: tenant.owner.token })),
  );
  await waitForQuiescence({ timeoutMs: 120_000 });
});
