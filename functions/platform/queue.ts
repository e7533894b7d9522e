import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DelayingQueue, QueueKey } from './resources.js';
import { config } from './config.js';
import type { MessageQueue, QueueMessage } from './queue-messages.js';
import { grantsMiddleware } from './grants.js';
import { sdkClient } from './sdk-clients.js';

type SqsModule = typeof import('@aws-sdk/client-sqs');

let sqsModule: Promise<SqsModule> | undefined;
let sqs: Promise<SQSClient> | undefined;
const clientSetups: ((client: SQSClient) => void)[] = [];

/**
 * The SQS client's package is loaded by the first send, not at init: many invocations send nothing
 * (a webhook that is refused, a sweep that finds nothing), and it is a sixth of a cold load.
 */
const loadSqs = (): Promise<SqsModule> => {
  sqsModule ??= import('@aws-sdk/client-sqs');
  sqsModule.catch(() => (sqsModule = undefined));
  return sqsModule;
};

export function sqsClient(): Promise<SQSClient> {
  sqs ??= loadSqs().then(({ SQSClient }) => {
    const client = sdkClient(new SQSClient({ region: config().AWS_REGION }));
    client.middlewareStack.add(grantsMiddleware('sqs'), { step: 'initialize', name: 'enforceGrants' });
    for (const setup of clientSetups) setup(client);
    return client;
  });
  return sqs;
}

/** Runs `setup` on the queue client, now if it exists and on every client made later (local metrics). */
export function onQueueClient(setup: (client: SQSClient) => void): void {
  clientSetups.push(setup);
  void sqs?.then(setup);
}

/** Forgets the queue client (see table.ts resetTableClients: npm run bench, between local stacks). */
export function resetQueueClient(): void {
  void sqs?.then((client) => client.destroy());
  sqs = undefined;
}

export function queueUrl(queue: QueueKey): string {
  const url = config().queueUrls[queue];
  if (!url) throw new Error(`Queue ${queue} is not configured for this function`);
  return url;
}

/**
 * A message's body: JSON with every character outside printable ASCII written as a `\uXXXX` escape
 * (a character outside the BMP as its two surrogates). SQS accepts only some Unicode in a body (its
 * XML character range) and the local stand-in refuses even what SQS takes beyond the BMP (an emoji
 * in a contact's name or an SMS); an ASCII body is valid for both whatever the text, and reads back
 * as the same JSON.
 */
export function queueBody(body: unknown): string {
  return JSON.stringify(body).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * Send one message of the queue's shape (functions/platform/queue-messages.ts). `delaySeconds`
 * (0–900) defers delivery, e.g. for retries with backoff: only on a queue declared `delaysMessages`
 * (functions/platform/resources.ts), whose backlog alarm allows for it.
 */
export async function sendMessage<Q extends MessageQueue>(
  queue: Q,
  body: QueueMessage<Q>,
  options: { delaySeconds?: Q extends DelayingQueue ? number : never } = {},
): Promise<void> {
  const [client, { SendMessageCommand }] = await Promise.all([sqsClient(), loadSqs()]);
  await client.send(
    new SendMessageCommand({
      QueueUrl: queueUrl(queue),
      MessageBody: queueBody(body),
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
  if (bodies.length === 0) return;
  const [client, { SendMessageBatchCommand }] = await Promise.all([sqsClient(), loadSqs()]);
  for (let i = 0; i < bodies.length; i += 10) {
    const chunk = bodies.slice(i, i + 10);
    const result = await client.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl(queue),
        Entries: chunk.map((body, index) => ({ Id: String(index), MessageBody: queueBody(body) })),
      }),
    );
    if (result.Failed && result.Failed.length > 0) {
      throw new Error(`SQS rejected ${result.Failed.length} message(s): ${result.Failed[0]?.Message}`);
    }
  }
}

/** The SQS package's commands, for the platform's own requests (health probes, the bench's floor). */
export const sqsCommands = (): Promise<SqsModule> => loadSqs();
