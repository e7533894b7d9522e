/**
 * The local stack honours each function's timeout as Lambda does (lib/local/invoke.ts): a handler that
 * overruns has failed, whatever it does afterwards. Through the local stack's own triggers — the HTTP
 * gateway (500; 503 when API Gateway's integration timeout comes first), a queue poller against
 * fauxqs (the message is received again and ends in the dead-letter queue, never deleted as done) and
 * the relay gateway (the client is sent API Gateway's error frame) — with a test-only catalog entry
 * (test/fixtures/local-timeouts/slow-handler.ts, 1 s) that takes as long as each request says. Without
 * the enforcement every one of these would succeed, after 4 s.
 */
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { WebSocket } from 'ws';
import type { FunctionSpec } from '../../lib/cloud/catalog-types.js';
import { INTEGRATION_TIMEOUT_MESSAGE, startGateway, type Gateway } from '../../lib/local/gateway.js';
import { FunctionTimeout, invokeFunction } from '../../lib/local/invoke.js';
import { startQueuePoller, type QueuePoller } from '../../lib/local/pollers.js';
import { startRelayGateway, type RelayGateway } from '../../lib/local/relay-gateway.js';
import { seen } from '../fixtures/local-timeouts/slow-handler.js';
import { waitFor } from '../helpers/wait.js';

const REGION = process.env.AWS_REGION ?? 'ap-southeast-2';
/** Longer than the test function's 1 s timeout, by enough that a pass cannot be a close race. */
const OVERRUN_MS = 4000;
/** The test gateway's integration timeout (API Gateway's is 30 s): past the slow function's 1 s. */
const INTEGRATION_TIMEOUT_MS = 2000;

const route = (path: string) => ({
  method: 'GET' as const,
  path,
  summary: 'A test-only route',
  auth: 'none' as const,
  access: {},
});

const slow: FunctionSpec = {
  id: 'SlowForTests',
  entry: 'test/fixtures/local-timeouts/slow-handler.ts',
  group: 'public',
  access: {},
  timeoutSeconds: 1,
  http: [route('/test-only/slow')],
  webSocket: { routes: ['$connect', '$default', '$disconnect'] },
};
/** A function allowed longer than API Gateway waits (the test's gateway: INTEGRATION_TIMEOUT_MS). */
const patient: FunctionSpec = {
  ...slow,
  id: 'PatientForTests',
  timeoutSeconds: 10,
  http: [route('/test-only/patient')],
  webSocket: undefined,
};

const sqs = new SQSClient({});
const queues: string[] = [];
let gateway: Gateway | undefined;
let relay: RelayGateway | undefined;
let poller: QueuePoller | undefined;

afterEach(async () => {
  await poller?.stop();
  poller = undefined;
  // Let a handler that was cut off finish its sleep, so it does not run into the next test.
  await waitFor(() => seen().finished === seen().started, { what: 'the cut-off handlers to finish' });
});

afterAll(async () => {
  await gateway?.stop();
  await relay?.stop();
  for (const url of queues) await sqs.send(new DeleteQueueCommand({ QueueUrl: url })).catch(() => undefined);
  sqs.destroy();
});

test('invokeFunction: a handler within its timeout answers; one past it fails with FunctionTimeout', async () => {
  const event = (ms: number) => ({ queryStringParameters: { ms: String(ms) } });
  await expect(invokeFunction(slow, event(10), REGION)).resolves.toMatchObject({ statusCode: 200 });
  const before = { ...seen() };
  const started = Date.now();
  await expect(invokeFunction(slow, event(OVERRUN_MS), REGION)).rejects.toBeInstanceOf(FunctionTimeout);
  expect(Date.now() - started).toBeLessThan(OVERRUN_MS - 500);
  // It failed while the handler was still running.
  expect(seen().started).toBe(before.started + 1);
  expect(seen().finished).toBe(before.finished);
});

test('the HTTP gateway: a function past its timeout is a 500, an integration past 30 s (here 2 s) a 503', async () => {
  gateway = await startGateway({
    port: 0,
    functions: [slow, patient],
    region: REGION,
    integrationTimeoutMs: INTEGRATION_TIMEOUT_MS,
  });
  gateway.setReady();
  const get = async (path: string) => {
    const started = Date.now();
    const res = await fetch(`${gateway!.url}${path}`);
    return { status: res.status, body: (await res.json()) as unknown, ms: Date.now() - started };
  };
  expect(await get('/test-only/slow?ms=10')).toMatchObject({ status: 200, body: { done: true } });

  const overran = await get(`/test-only/slow?ms=${OVERRUN_MS}`);
  expect(overran.status).toBe(500);
  expect(overran.ms).toBeLessThan(OVERRUN_MS - 500);

  const unanswered = await get(`/test-only/patient?ms=${OVERRUN_MS}`);
  expect(unanswered).toMatchObject({ status: 503, body: { error: INTEGRATION_TIMEOUT_MESSAGE } });
  expect(unanswered.ms).toBeLessThan(OVERRUN_MS - 500);
});

test('a queue message whose handler overruns is received again and dead-lettered, never deleted as done', async () => {
  const name = `timeouts-test-${Date.now()}`;
  const dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }))).QueueUrl!;
  const dlqArn = (
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }))
  ).Attributes!.QueueArn!;
  const url = (
    await sqs.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: {
          VisibilityTimeout: '1',
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: '2' }),
        },
      }),
    )
  ).QueueUrl!;
  queues.push(url, dlqUrl);
  const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] })))
    .Attributes!.QueueArn!;
  const failures: string[] = [];
  poller = startQueuePoller({
    name: slow.id,
    sqs,
    queueUrl: url,
    queueArn: arn,
    region: REGION,
    batchSize: 1,
    // The poller keeps a message invisible while its handler runs: only the timeout can fail it.
    visibilityTimeoutSeconds: 1,
    waitTimeSeconds: 1,
    report: (message) => failures.push(message),
    handle: (event) => invokeFunction(slow, event, REGION),
  });
  const before = seen().started;
  await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify({ ms: OVERRUN_MS }) }));

  const attributes = async (queueUrl: string) =>
    (
      await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      )
    ).Attributes!;
  await waitFor(async () => (await attributes(dlqUrl)).ApproximateNumberOfMessages === '1', {
    what: 'the overrunning message in the dead-letter queue',
    timeoutMs: 20_000,
  });
  // Received twice (maxReceiveCount), each time cut off at 1 s; never deleted as handled.
  expect(seen().started - before).toBe(2);
  expect(poller.stats.deleted).toBe(0);
  expect(failures.filter((line) => line.includes('handler threw'))).toHaveLength(2);
  expect(await attributes(url)).toMatchObject({
    ApproximateNumberOfMessages: '0',
    ApproximateNumberOfMessagesNotVisible: '0',
  });
});

test("a relay frame whose handler overruns fails: the client gets API Gateway's error frame", async () => {
  relay = await startRelayGateway({ functions: [slow], region: REGION });
  const socket = new WebSocket(relay.url);
  const frames: unknown[] = [];
  socket.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString('utf8'))));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const before = { ...seen() };
  socket.send(JSON.stringify({ ms: 10 }));
  await waitFor(() => seen().finished === before.finished + 1, { what: 'the quick frame handled' });
  const started = Date.now();
  socket.send(JSON.stringify({ ms: OVERRUN_MS }));
  const [error] = await waitFor(() => (frames.length > 0 ? frames : undefined), {
    what: 'the error frame',
    timeoutMs: OVERRUN_MS - 500,
  });
  expect(Date.now() - started).toBeLessThan(OVERRUN_MS - 500);
  expect(error).toEqual({
    message: 'Internal server error',
    connectionId: expect.any(String),
    requestId: expect.any(String),
  });
  // The quick frame had none; the slow one exactly one.
  await waitFor(() => seen().finished === seen().started, { what: 'the slow handler to finish' });
  expect(frames).toHaveLength(1);
  socket.close();
});
