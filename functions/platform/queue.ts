import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { QueueKey } from './resources.js';
import { config } from './config.js';
import type { MessageQueue, QueueMessage } from './queue-messages.js';
import { grantsMiddleware } from './grants.js';
import { withoutUnusedMiddleware } from './sdk-clients.js';

let sqs: SQSClient | undefined;

export function sqsClient(): SQSClient {
  if (!sqs) {
    sqs = withoutUnusedMiddleware(new SQSClient({ region: config().AWS_REGION }));
    sqs.middlewareStack.add(grantsMiddleware('sqs'), { step: 'initialize', name: 'enforceGrants' });
  }
  return sqs;
}

/** Forgets the queue client (see table.ts resetTableClients: npm run bench, between local stacks). */
export function resetQueueClient(): void {
  sqs?.destroy();
  sqs = undefined;
}

export function queueUrl(queue: QueueKey): string {
  const url = config().queueUrls[queue];
  if (!url) throw new Error(`Queue ${queue} is not configured for this function`);
  return url;
}

/**
 * Send one message of the queue's shape (functions/platform/queue-messages.ts). `delaySeconds`
 * (0–900) defers delivery, e.g. for retries with backoff.
 */
export async function sendMessage<Q extends MessageQueue>(
  queue: Q,
  body: QueueMessage<Q>,
  options: { delaySeconds?: number } = {},
): Promise<void> {
  await sqsClient().send(
    new SendMessageCommand({
      QueueUrl: queueUrl(queue),
      MessageBody: JSON.stringify(body),
      DelaySeconds: options.delaySeconds
        ? Math.min(900, Math.max(0, Math.round(options.delaySeconds)))
        : undefined,
    }),
  );
}

/** Send many messages, ten per request (the SQS limit); a partial failure throws. */
export async function sendMessages<Q extends MessageQueue>(
  queue: Q,
  bodies: QueueMessage<Q>[],
): Promise<void> {
  for (let i = 0; i < bodies.length; i += 10) {
    const chunk = bodies.slice(i, i + 10);
    const result = await sqsClient().send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl(queue),
        Entries: chunk.map((body, index) => ({ Id: String(index), MessageBody: JSON.stringify(body) })),
      }),
    );
    if (result.Failed && result.Failed.length > 0) {
      throw new Error(`SQS rejected ${result.Failed.length} message(s): ${result.Failed[0]?.Message}`);
    }
  }
}
