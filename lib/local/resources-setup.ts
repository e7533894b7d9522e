import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ResourceInUseException,
  PutItemCommand,
  UpdateTimeToLiveCommand,
  type AttributeDefinition,
} from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueDoesNotExist,
  SetQueueAttributesCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import {
  BUCKET,
  dlqName,
  QUEUES,
  queueKeys,
  TABLE,
  type QueueKey,
} from '../../functions/platform/resources.js';
import { CALL_SHARDS, CALLS_MIGRATED_KEY, MIGRATION_LAYOUT } from '../../functions/calling/call-shards.js';

export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export interface LocalQueue {
  url: string;
  arn: string;
  dlqUrl: string;
  dlqArn: string;
}

export interface LocalResources {
  tableName: string;
  bucketName: string;
  queues: Record<QueueKey, LocalQueue>;
}

/** The table of lib/resources.ts: pk/sk, every GSI projecting ALL, on demand, TTL on `expires_at`. */
export async function ensureTable(client: DynamoDBClient): Promise<string> {
  const keys = new Set<string>([TABLE.partitionKey, TABLE.sortKey]);
  for (const index of TABLE.indexes) {
    keys.add(index.partitionKey);
    keys.add(index.sortKey);
  }
  const attributeDefinitions: AttributeDefinition[] = [...keys].map((name) => ({
    AttributeName: name,
    AttributeType: 'S',
  }));
  let created = false;
  try {
    await client.send(
      new CreateTableCommand({
        TableName: TABLE.name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: attributeDefinitions,
        KeySchema: [
          { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: TABLE.indexes.map((index) => ({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
      }),
    );
    created = true;
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: TABLE.name }));
    if (Table?.TableStatus === 'ACTIVE') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (created) {
    // A new table holds no call (nor post-call item) at an old key: only the new keys are read (calling/call-shards.ts).
    await client.send(
      new PutItemCommand({
        TableName: TABLE.name,
        Item: {
          pk: { S: CALLS_MIGRATED_KEY.pk },
          sk: { S: CALLS_MIGRATED_KEY.sk },
          shards: { N: String(CALL_SHARDS) },
          layout: { N: String(MIGRATION_LAYOUT) },
        },
      }),
    );
  }
  const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: TABLE.name }));
  const status = ttl.TimeToLiveDescription?.TimeToLiveStatus;
  if (status !== 'ENABLED' && status !== 'ENABLING') {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: TABLE.name,
        TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
      }),
    );
  }
  return TABLE.name;
}

async function ensureQueue(client: SQSClient, name: string, attributes: Record<string, string>) {
  let url: string | undefined;
  try {
    url = (await client.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
  } catch (error) {
    if (
      !(error instanceof QueueDoesNotExist) &&
      (error as Error).name !== 'AWS.SimpleQueueService.NonExistentQueue'
    ) {
      throw error;
    }
  }
  if (url) {
    await client.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: attributes }));
  } else {
    url = (await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl;
  }
  if (!url) throw new Error(`Queue ${name} has no URL`);
  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  const arn = Attributes?.QueueArn;
  if (!arn) throw new Error(`Queue ${name} has no ARN`);
  return { url, arn };
}

/**
 * Every queue of lib/resources.ts with its DLQ and redrive policy (maxReceiveCount from resources).
 * `visibilityTimeoutSeconds` overrides the queues' visibility locally so retries and DLQ happen fast.
 */
export async function ensureQueues(
  client: SQSClient,
  options: { visibilityTimeoutSeconds?: number } = {},
): Promise<Record<QueueKey, LocalQueue>> {
  const queues = {} as Record<QueueKey, LocalQueue>;
  for (const key of queueKeys) {
    const definition = QUEUES[key];
    const visibility = String(options.visibilityTimeoutSeconds ?? definition.visibilityTimeoutSeconds);
    const dlq = await ensureQueue(client, dlqName(key), { MessageRetentionPeriod: '1209600' });
    const queue = await ensureQueue(client, definition.name, {
      VisibilityTimeout: visibility,
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: dlq.arn,
        maxReceiveCount: String(definition.maxReceiveCount),
      }),
    });
    queues[key] = { url: queue.url, arn: queue.arn, dlqUrl: dlq.url, dlqArn: dlq.arn };
  }
  return queues;
}

export async function ensureBucket(client: S3Client): Promise<string> {
  try {
    await client.send(new HeadBucketCommand({ Bucket: BUCKET.name }));
  } catch {
    try {
      await client.send(new CreateBucketCommand({ Bucket: BUCKET.name }));
    } catch (error) {
      const name = (error as Error).name;
      if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw error;
    }
  }
  return BUCKET.name;
}

/** Creates the table, the queues with their DLQs and the bucket, idempotently. */
export async function ensureResources(options: {
  region: string;
  dynamoDbEndpoint: string;
  sqsEndpoint: string;
  s3Endpoint: string;
  visibilityTimeoutSeconds?: number;
}): Promise<LocalResources> {
  const common = { region: options.region, credentials: LOCAL_CREDENTIALS };
  const dynamo = new DynamoDBClient({ ...common, endpoint: options.dynamoDbEndpoint });
  const sqs = new SQSClient({ ...common, endpoint: options.sqsEndpoint });
  const s3 = new S3Client({ ...common, endpoint: options.s3Endpoint, forcePathStyle: true });
  try {
    const [tableName, queues, bucketName] = await Promise.all([
      ensureTable(dynamo),
      ensureQueues(sqs, { visibilityTimeoutSeconds: options.visibilityTimeoutSeconds }),
      ensureBucket(s3),
    ]);
    return { tableName, queues, bucketName };
  } finally {
    dynamo.destroy();
    sqs.destroy();
    s3.destroy();
  }
}
