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
import { requestsBetween, stackCounters, totalOf } from '../../helpers/metrics.js';

/**
 * What the post-call pipeline asks of DynamoDB for the budget's call (docs/cost.md): a completed call
 * whose agent has one post-call webhook action, in a workspace with no webhook endpoint and no
 * workflow, whose signing secret exists. Counted by the local stack (GET /_local/metrics, requests
 * per catalog function) between two quiescent points around the call. A regression that adds a
 * request to one of these steps breaks the numbers below.
 */

const POST_CALL = ['ProcessCallEnded', 'RouteWorkspaceEvents', 'RunPostCallAction', 'DeliverWebhook'];

let hook: Receiver | undefined;
afterAll(async () => {
  await hook?.stop();
  closeSqs();
});

it('the budget call’s post-call steps make 9 DynamoDB requests (ProcessCallEnded 4, RouteWorkspaceEvents 2, RunPostCallAction 3, DeliverWebhook 0)', async () => {
  hook = await startReceiver();
  const tenant = await newTenant();
  const agent = await createAgent(tenant, [{ type: 'webhook', config: { url: hook.url } }]);
  await connectNumber(tenant, agent.id as string);
  // The workspace's signing secret exists (made here on first use), as in any workspace that had a delivery.
  await webhookSecret(tenant);

  await waitForQuiescence();
  const before = await stackCounters();
  const callId = await startCall(tenant, agent.id as string, TO.answered);
  await waitFor(async () => (await deliveries(tenant, callId))[0]?.state === 'succeeded', {
    what: 'the post-call webhook to be delivered',
    timeoutMs: 60_000,
  });
  await waitForQuiescence();
  const after = await stackCounters();
  const counted = Object.fromEntries(POST_CALL.map((fn) => [fn, requestsBetween(before, after, fn)]));

  // It happened, once.
  expect(hook.requests).toHaveLength(1);
  const [delivery] = await deliveries(tenant, callId);
  expect(delivery.attempts).toHaveLength(1);

  expect(counted).toEqual({
    // The record and the call (one BatchGetItem), the agent's version and the contact's number (one
    // BatchGetItem), the record with its run and the call's memory (one transaction); the analysis
    // on the call as read with the record (calling's setCallSentiment: its transaction with the counters).
    ProcessCallEnded: { BatchGetItem: 2, TransactWriteItems: 2 },
    // The workspace's webhook endpoints; its workflows triggered by call.ended.
    RouteWorkspaceEvents: { Query: 2 },
    // The run, the record and the signing secret (one BatchGetItem); the run's result with the
    // delivery, claimed for its first attempt, and the check that its URL is not disabled (one
    // transaction); that attempt, made at once, and its result (UpdateItem).
    RunPostCallAction: { BatchGetItem: 1, TransactWriteItems: 1, UpdateItem: 1 },
    // Nothing: a first attempt that succeeds is never queued.
    DeliverWebhook: {},
  });
  expect(POST_CALL.reduce((sum, fn) => sum + totalOf(counted[fn] ?? {}), 0)).toBe(9);
}, 120_000);
