/**
 * The local stack's queue poller against the running fauxqs: partial batch failures are retried,
 * successes deleted once, a throwing handler retries the whole batch, and a message that keeps
 * failing moves to the DLQ after maxReceiveCount receives; and the scheduler's no-overlap rule. Fake
 * handlers, no catalog entries.
 */
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { failedMessageIds, startQueuePoller, type QueuePoller } from '../../lib/local/pollers.js';
import { startScheduler } from '../../lib/local/scheduler.js';
import { waitFor } from '../helpers/wait.js';

const MAX_RECEIVES = 3;
/** Three visibility timeouts of the test queues (1 s). */
const SLOW_HANDLER_MS = 3 * 1000;
const sqs = new SQSClient({});
const created: string[] = [];
let poller: QueuePoller | undefined;

async function queuePair(name: string) {
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
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: dlqArn,
            maxReceiveCount: String(MAX_RECEIVES),
          }),
        },
      }),
    )
  ).QueueUrl!;
  const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] })))
    .Attributes!.QueueArn!;
  created.push(url, dlqUrl);
  return { url, arn, dlqUrl };
}

const until = (what: string, condition: () => boolean, timeoutMs = 20_000) =>
  waitFor(condition, { what, timeoutMs });

async function drain(url: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    if (!Messages || Messages.length === 0) return bodies;
    bodies.push(...Messages.map((m) => m.Body ?? ''));
  }
}

afterEach(async () => {
  await poller?.stop();
  poller = undefined;
});

afterAll(async () => {
  for (const url of created) await sqs.send(new DeleteQueueCommand({ QueueUrl: url })).catch(() => undefined);
  sqs.destroy();
});

describe('failedMessageIds (Lambda partial batch response rules)', () => {
  const ids = ['a', 'b', 'c'];
  it('no batchItemFailures or an empty list: all succeeded', () => {
    expect(failedMessageIds(undefined, ids).size).toBe(0);
    expect(failedMessageIds({ batchItemFailures: [] }, ids).size).toBe(0);
  });
  it('listed identifiers failed', () => {
    expect([...failedMessageIds({ batchItemFailures: [{ itemIdentifier: 'b' }] }, ids)]).toEqual(['b']);
  });
  it('an unknown or empty identifier fails the whole batch', () => {
    expect(failedMessageIds({ batchItemFailures: [{ itemIdentifier: 'zzz' }] }, ids).size).toBe(3);
    expect(failedMessageIds({ batchItemFailures: [{ itemIdentifier: '' }] }, ids).size).toBe(3);
  });
});

describe('queue poller against fauxqs', () => {
  it('feeds SQS-shaped batches, retries what failed and dead-letters what keeps failing', async () => {
    const queue = await queuePair(`poller-test-${Date.now()}`);
    const attempts = new Map<string, number>();
    const events: SQSEvent[] = [];
    let thrown = false;
    const reports: string[] = [];

    poller = startQueuePoller({
      name: 'FakeConsumer',
      sqs,
      queueUrl: queue.url,
      queueArn: queue.arn,
      region: process.env.AWS_REGION ?? 'ap-southeast-2',
      batchSize: 5,
      visibilityTimeoutSeconds: 1,
      report: (message) => reports.push(message),
      handle: async (event) => {
        events.push(event);
        // The first batch that contains 'crash' makes the handler throw: the whole batch is retried.
        if (!thrown && event.Records.some((r) => r.body === 'crash')) {
          thrown = true;
          for (const r of event.Records) attempts.set(r.body, (attempts.get(r.body) ?? 0) + 1);
          throw new Error('boom');
        }
        const batchItemFailures: { itemIdentifier: string }[] = [];
        for (const record of event.Records) {
          const n = (attempts.get(record.body) ?? 0) + 1;
          attempts.set(record.body, n);
          if (record.body === 'poison' || (record.body === 'fail-once' && n === 1)) {
            batchItemFailures.push({ itemIdentifier: record.messageId });
          }
        }
        return { batchItemFailures };
      },
    });

    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: ['ok', 'fail-once', 'poison', 'crash'].map((body, i) => ({
          Id: String(i),
          MessageBody: body,
          MessageAttributes: { kind: { DataType: 'String', StringValue: body } },
        })),
      }),
    );

    // poison is received MAX_RECEIVES times, then fauxqs moves it to the DLQ.
    await until(
      'poison to be received MAX_RECEIVES times and fail-once twice',
      () => (attempts.get('poison') ?? 0) >= MAX_RECEIVES && (attempts.get('fail-once') ?? 0) >= 2,
    );
    await until('three messages to be deleted', () => poller!.stats.deleted >= 3);
    const dead = await waitFor(
      async () => {
        const bodies = await drain(queue.dlqUrl);
        return bodies.length > 0 ? bodies : undefined;
      },
      { what: 'poison in the DLQ', timeoutMs: 15_000 },
    );
    expect(dead).toEqual(['poison']);

    expect(attempts.get('ok')).toBeLessThanOrEqual(2); // once, plus once more only if it shared the crashed batch
    expect(attempts.get('fail-once')).toBeGreaterThanOrEqual(2);
    expect(attempts.get('poison')).toBe(MAX_RECEIVES);
    expect(thrown).toBe(true);
    expect(reports).toEqual([expect.stringContaining('handler threw')]);

    // Records look like Lambda's.
    const record = events[0].Records[0];
    expect(record).toMatchObject({
      eventSource: 'aws:sqs',
      eventSourceARN: queue.arn,
      messageAttributes: { kind: { dataType: 'String', stringValue: expect.any(String) } },
    });
    expect(record.messageId).toEqual(expect.any(String));
    expect(record.receiptHandle).toEqual(expect.any(String));
    expect(Number(record.attributes.ApproximateReceiveCount)).toBeGreaterThanOrEqual(1);
    expect(events.every((e) => e.Records.length <= 5)).toBe(true);

    // Nothing is left on the source queue.
    await poller.stop();
    poller = undefined;
    expect(await drain(queue.url)).toEqual([]);
  });

  it('keeps a slow batch invisible while its handler runs (no second delivery)', async () => {
    const queue = await queuePair(`poller-slow-${Date.now()}`);
    let deliveries = 0;
    let handling = -1;
    poller = startQueuePoller({
      name: 'SlowConsumer',
      sqs,
      queueUrl: queue.url,
      queueArn: queue.arn,
      region: 'ap-southeast-2',
      batchSize: 1,
      visibilityTimeoutSeconds: 1,
      concurrency: 2,
      handle: async () => {
        deliveries += 1;
        handling = poller!.stats.inFlight;
        // Time passing is the behaviour under test here: the handler must outlive several visibility
        // timeouts (a second receive loop is polling all along) to show the poller keeps the message
        // invisible; there is no event to wait for instead.
        await new Promise((r) => setTimeout(r, SLOW_HANDLER_MS));
        return {};
      },
    });
    await sqs.send(
      new SendMessageBatchCommand({ QueueUrl: queue.url, Entries: [{ Id: '1', MessageBody: 'slow' }] }),
    );
    await until('the slow message to be deleted', () => poller!.stats.deleted === 1, 15_000);
    expect(deliveries).toBe(1);
    // The batch counted as in hand while its handler ran (the quiescence signal reads it), not after.
    expect(handling).toBe(1);
    expect(poller!.stats.inFlight).toBe(0);
  });
});

describe('local scheduler', () => {
  it('fires Scheduled Events every localEverySeconds and skips a tick while the last run is still going', async () => {
    const events: Record<string, unknown>[] = [];
    let release: () => void = () => undefined;
    const scheduler = startScheduler({
      region: 'ap-southeast-2',
      functions: [
        {
          id: 'Tick',
          group: 'public',
          entry: 'functions/none.ts',
          schedule: { expression: 'rate(1 hour)', localEverySeconds: 1 },
          access: {},
        },
      ],
      invoke: async (_fn, event) => {
        events.push(event as Record<string, unknown>);
        await new Promise<void>((r) => {
          release = r;
        });
      },
    });
    try {
      await until('a tick to be skipped', () => scheduler.schedules[0].skipped >= 1, 5000);
      expect(scheduler.running()).toEqual(['Tick']);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} });
      expect(String(events[0].time)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      release();
      await until('the next run', () => events.length >= 2, 5000);
      release();
    } finally {
      await scheduler.stop();
    }
  });
});
