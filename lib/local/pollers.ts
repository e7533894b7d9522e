import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import type { FunctionSpec } from '../cloud/catalog-types.js';
import type { QueueKey } from '../../functions/platform/resources.js';
import { sqsEvent } from './events.js';
import { invokeFunction } from './invoke.js';
import { warn } from './log.js';
import { settleWithin } from './processes.js';
import type { LocalQueue } from './resources-setup.js';

export interface QueuePollerOptions {
  /** For messages: usually the catalog id of the consumer. */
  name: string;
  sqs: SQSClient;
  queueUrl: string;
  queueArn: string;
  region: string;
  /** Lambda's batch size: records per invocation (more than 10 takes several receives). */
  batchSize: number;
  /**
   * Long-poll wait per receive (default 1 s). A receive waiting when the poller stops is aborted, so
   * a longer wait does not slow stopping; it only makes an idle poller ask less often.
   */
  waitTimeSeconds?: number;
  /**
   * The queue's visibility timeout. When given, in-flight messages are kept invisible while the
   * handler runs (a shortened local visibility must not hand a message to a second consumer).
   */
  visibilityTimeoutSeconds?: number;
  /** Parallel receive loops (Lambda would run several batches at once). Default 1. */
  concurrency?: number;
  /** Where problems go (a throwing handler, a failed receive). Default: stderr. */
  report?: (message: string, error?: unknown) => void;
  /** The consumer: receives an SQS event, may return `{ batchItemFailures }`. */
  handle: (event: SQSEvent) => Promise<unknown>;
}

export interface PollerStats {
  batches: number;
  received: number;
  deleted: number;
  failed: number;
  /**
   * Batches in hand now: received and not yet deleted (or left to reappear). With the queue's own
   * counts this tells whether a message is still being worked on (the stack's quiescence signal).
   */
  inFlight: number;
}

export interface QueuePoller {
  readonly name: string;
  readonly stats: PollerStats;
  stop(): Promise<void>;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolveSleep) => {
    const timer = setTimeout(resolveSleep, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolveSleep();
      },
      { once: true },
    );
  });

/**
 * Which messages of a batch failed, with Lambda's rules for partial batch responses: no
 * `batchItemFailures` (or an empty list) → all succeeded; an identifier that is empty or not in the
 * batch → the whole batch failed.
 */
export function failedMessageIds(result: unknown, messageIds: string[]): Set<string> {
  const failures =
    result && typeof result === 'object'
      ? (result as { batchItemFailures?: unknown }).batchItemFailures
      : undefined;
  if (failures === undefined || failures === null) return new Set();
  if (!Array.isArray(failures)) return new Set(messageIds);
  const known = new Set(messageIds);
  const failed = new Set<string>();
  for (const failure of failures) {
    const id = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    if (typeof id !== 'string' || !known.has(id)) return new Set(messageIds);
    failed.add(id);
  }
  return failed;
}

/**
 * Feeds one SQS queue to a consumer the way Lambda's event source mapping does: long-poll, invoke
 * with a batch, delete every message not reported in `batchItemFailures`. Failed messages (all of
 * them when the handler throws) are left to reappear after the visibility timeout; the queue's
 * redrive policy moves them to the DLQ after maxReceiveCount receives.
 */
export function startQueuePoller(options: QueuePollerOptions): QueuePoller {
  const controller = new AbortController();
  const { signal } = controller;
  const stats: PollerStats = { batches: 0, received: 0, deleted: 0, failed: 0, inFlight: 0 };
  const waitTimeSeconds = options.waitTimeSeconds ?? 1;
  const report = options.report ?? warn;
  let stopped = false;

  const receive = async (max: number, wait: number): Promise<Message[]> => {
    const { Messages } = await options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queueUrl,
        MaxNumberOfMessages: Math.min(10, max),
        WaitTimeSeconds: wait,
        AttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: signal },
    );
    return Messages ?? [];
  };

  const receiveBatch = async (): Promise<Message[]> => {
    const batch = await receive(options.batchSize, waitTimeSeconds);
    while (batch.length > 0 && batch.length < options.batchSize && !stopped) {
      const more = await receive(options.batchSize - batch.length, 0);
      if (more.length === 0) break;
      batch.push(...more);
    }
    return batch;
  };

  const keepInvisible = (messages: Message[]): (() => void) => {
    const visibility = options.visibilityTimeoutSeconds;
    if (!visibility) return () => undefined;
    const timer = setInterval(
      () => {
        for (let i = 0; i < messages.length; i += 10) {
          const entries = messages.slice(i, i + 10).map((m, index) => ({
            Id: String(index),
            ReceiptHandle: m.ReceiptHandle ?? '',
            VisibilityTimeout: visibility,
          }));
          options.sqs
            .send(new ChangeMessageVisibilityBatchCommand({ QueueUrl: options.queueUrl, Entries: entries }))
            .catch(() => {
              // A missed extension: the message may become visible again and be delivered twice,
              // which every consumer tolerates (as with SQS); the next tick tries again.
            });
        }
      },
      Math.max(250, (visibility * 1000) / 3),
    );
    return () => clearInterval(timer);
  };

  const deleteMessages = async (messages: Message[]) => {
    for (let i = 0; i < messages.length; i += 10) {
      const chunk = messages.slice(i, i + 10);
      const result = await options.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: chunk.map((m, index) => ({ Id: String(index), ReceiptHandle: m.ReceiptHandle ?? '' })),
        }),
      );
      stats.deleted += result.Successful?.length ?? 0;
      for (const failure of result.Failed ?? [])
        report(`${options.name}: could not delete a message: ${failure.Message}`);
    }
  };

  const loop = async () => {
    while (!stopped) {
      let messages: Message[];
      try {
        messages = await receiveBatch();
      } catch (error) {
        if (stopped) break;
        report(`${options.name}: receive failed (retrying in 1 s)`, error);
        await sleep(1000, signal);
        continue;
      }
      if (messages.length === 0) continue;
      stats.batches += 1;
      stats.received += messages.length;
      stats.inFlight += 1;
      try {
        await handleBatch(messages);
      } finally {
        stats.inFlight -= 1;
      }
    }
  };

  const handleBatch = async (messages: Message[]) => {
    const event = sqsEvent(messages, options.queueArn, options.region);
    const ids = event.Records.map((r) => r.messageId);
    const release = keepInvisible(messages);
    let failed: Set<string>;
    try {
      failed = failedMessageIds(await options.handle(event), ids);
    } catch (error) {
      report(
        `${options.name}: handler threw; all ${messages.length} message(s) of the batch will be retried`,
        error,
      );
      failed = new Set(ids);
    } finally {
      release();
    }
    stats.failed += failed.size;
    const succeeded = messages.filter((m, i) => !failed.has(ids[i]));
    try {
      await deleteMessages(succeeded);
    } catch (error) {
      report(`${options.name}: delete failed; those messages will be delivered again`, error);
    }
  };

  const loops = Array.from({ length: Math.max(1, options.concurrency ?? 1) }, () => loop());
  return {
    name: options.name,
    stats,
    stop: async () => {
      stopped = true;
      controller.abort();
      // Let an in-flight batch finish (bounded), so its messages are deleted or left on purpose.
      await settleWithin(Promise.allSettled(loops), 5000);
    },
  };
}

const STACK_WAIT_SECONDS = 10;

/** One poller per catalog function with a queue trigger. */
export function startPollers(options: {
  functions: FunctionSpec[];
  queues: Record<QueueKey, LocalQueue>;
  sqs: SQSClient;
  region: string;
  visibilityTimeoutSeconds?: number;
  concurrency?: number;
}): QueuePoller[] {
  return options.functions
    .filter((fn) => fn.queue)
    .map((fn) => {
      const trigger = fn.queue!;
      const queue = options.queues[trigger.name];
      if (!queue) throw new Error(`${fn.id} consumes unknown queue '${trigger.name}'`);
      return startQueuePoller({
        name: fn.id,
        sqs: options.sqs,
        queueUrl: queue.url,
        queueArn: queue.arn,
        region: options.region,
        batchSize: trigger.batchSize,
        visibilityTimeoutSeconds: options.visibilityTimeoutSeconds,
        concurrency: options.concurrency,
        // A message ends the wait at once (fauxqs answers a waiting receive when one arrives, or when a
        // failed one becomes visible again); an idle stack's pollers then ask once every 10 s, not 1 s.
        waitTimeSeconds: STACK_WAIT_SECONDS,
        handle: async (event) => invokeFunction(fn, event, options.region),
      });
    });
}
