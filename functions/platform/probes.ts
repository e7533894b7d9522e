import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { QueueKey } from './resources.js';
import { queueUrl, sqsClient, sqsCommands } from './queue.js';
import { headBucket } from './storage.js';
import { dynamoClient, tableName } from './table.js';

/**
 * Probes of the service's resources, for the health check: each resolves once the resource answers
 * (and rejects with the SDK's error when it does not). Domains never build SDK commands themselves;
 * they call these, so the AWS SDK stays in platform/ and providers/.
 */

/** Reads one (absent) item of the table. */
export async function probeTable(): Promise<void> {
  await dynamoClient().send(
    new GetItemCommand({ TableName: tableName(), Key: { pk: { S: 'HEALTH' }, sk: { S: 'HEALTH' } } }),
  );
}

/** Reads one attribute of a queue. */
export async function probeQueue(queue: QueueKey): Promise<void> {
  const [client, { GetQueueAttributesCommand }] = await Promise.all([sqsClient(), sqsCommands()]);
  await client.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl(queue), AttributeNames: ['QueueArn'] }),
  );
}

/** Asks whether the bucket is there and reachable. */
export async function probeBucket(): Promise<void> {
  await headBucket();
}
