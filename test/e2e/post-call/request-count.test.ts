import { stackState } from '../../helpers/stack-state.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import {
  closeSqs,
  connectNumber,
  createAgent,
  deliveries,
  newTenant,
  startCall,
  startReceiver,
  TO,
  webhookSecret,
  type Receiver,
} from './fixtures.js';

/**
 * What the post-call pipeline asks of DynamoDB for the budget's call (docs/cost.md): a completed call
 * whose agent has one post-call webhook action, in a workspace with no webhook endpoint and no
 * workflow, whose signing secret exists. Counted by the local stack (GET /_local/metrics, requests
 * per catalog function) between two quiescent points around the call. A regression that adds a
 * request to one of these steps breaks the numbers below.
 */

type ByFunction = Record<string, Record<string, number>>;

async function requestsByFunction(): Promise<ByFunction> {
  const res = await fetch(`${stackState().base_url}/_local/metrics`);
  return ((await res.json()) as { dynamodb_by_function: ByFunction }).dynamodb_by_function;
}

const POST_CALL = ['ProcessCallEnded', 'RouteWorkspaceEvents', 'RunPostCallAction', 'DeliverWebhook'];

function delta(after: ByFunction, before: ByFunction): ByFunction {
  const out: ByFunction = {};
  for (const fn of POST_CALL) {
    const commands: Record<string, number> = {};
    for (const [command, n] of Object.entries(after[fn] ?? {})) {
      const d = n - (before[fn]?.[command] ?? 0);
      if (d !== 0) commands[command] = d;
    }
    out[fn] = commands;
  }
  return out;
}

const total = (commands: Record<string, number>) => Object.values(commands).reduce((s, n) => s + n, 0);

let hook: Receiver | undefined;
afterAll(async () => {
  await hook?.stop();
  closeSqs();
});

it('the budget call’s post-call steps make 10 DynamoDB requests (ProcessCallEnded 5, RouteWorkspaceEvents 2, RunPostCallAction 3, DeliverWebhook 0)', async () => {
  hook = await startReceiver();
  const tenant = await newTenant();
  const agent = await createAgent(tenant, [{ type: 'webhook', config: { url: hook.url } }]);
  await connectNumber(tenant, agent.id as string);
  // The workspace's signing secret exists (made here on first use), as in any workspace that had a delivery.
  await webhookSecret(tenant);

  await waitForQuiescence();
  const before = await requestsByFunction();
  const callId = await startCall(tenant, agent.id as string, TO.answered);
  await waitFor(async () => (await deliveries(tenant, callId))[0]?.state === 'succeeded', {
    what: 'the post-call webhook to be delivered',
    timeoutMs: 60_000,
  });
  await waitForQuiescence();
  const counted = delta(await requestsByFunction(), before);

  // It happened, once.
  expect(hook.requests).toHaveLength(1);
  const [delivery] = await deliveries(tenant, callId);
  expect(delivery.attempts).toHaveLength(1);

  expect(counted).toEqual({
    // The record and the call (one BatchGetItem), the agent's version and the contact's number (one
    // BatchGetItem), the record with its run and the call's memory (one transaction); the analysis
    // on the call (calling's setCallSentiment: the call read, then its transaction with the counters).
    ProcessCallEnded: { BatchGetItem: 2, TransactWriteItems: 2, GetItem: 1 },
    // The workspace's webhook endpoints; its workflows triggered by call.ended.
    RouteWorkspaceEvents: { Query: 2 },
    // The run, the record and the signing secret (one BatchGetItem); the run's result with the
    // delivery, claimed for its first attempt, and the check that its URL is not disabled (one
    // transaction); that attempt, made at once, and its result (UpdateItem).
    RunPostCallAction: { BatchGetItem: 1, TransactWriteItems: 1, UpdateItem: 1 },
    // Nothing: a first attempt that succeeds is never queued.
    DeliverWebhook: {},
  });
  expect(POST_CALL.reduce((sum, fn) => sum + total(counted[fn] ?? {}), 0)).toBe(10);
}, 120_000);
