/** What the stack keeps data in: the one table, the queues (each with its DLQ) and the buckets. */
import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { ServiceQueue } from './constructs/service-queue.js';
import { pascal } from './names.js';
import { BUCKET, TABLE, queueKeys, type QueueKey } from '../../functions/platform/resources.js';

export function addTable(stack: Stack): dynamodb.Table {
  const table = new dynamodb.Table(stack, 'Table', {
    partitionKey: { name: TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
    sortKey: { name: TABLE.sortKey, type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    timeToLiveAttribute: TABLE.ttlAttribute,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    deletionProtection: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  for (const index of TABLE.indexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });
  }
  return table;
}

export function addQueues(stack: Stack): Record<QueueKey, ServiceQueue> {
  const queues = {} as Record<QueueKey, ServiceQueue>;
  for (const key of queueKeys) {
    queues[key] = new ServiceQueue(stack, `${pascal(key)}Queue`, {
      queueKey: key,
      namePrefix: stack.stackName,
    });
  }
  return queues;
}

/** The recordings bucket, and the bucket its server access logs go to. */
export function addBuckets(stack: Stack): { accessLogs: s3.Bucket; recordings: s3.Bucket } {
  const accessLogs = new s3.Bucket(stack, 'AccessLogsBucket', {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(365) }],
    removalPolicy: RemovalPolicy.RETAIN,
  });
  const recordings = new s3.Bucket(stack, 'RecordingsBucket', {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    // No versioning: a recording past its retention must really be gone, not kept as a noncurrent version.
    versioned: false,
    serverAccessLogsBucket: accessLogs,
    serverAccessLogsPrefix: 'recordings-bucket/',
    lifecycleRules: [
      {
        id: 'expire-recordings',
        prefix: BUCKET.recordingsPrefix,
        expiration: Duration.days(BUCKET.recordingRetentionDays),
      },
      { id: 'abort-incomplete-multipart-uploads', abortIncompleteMultipartUploadAfter: Duration.days(7) },
    ],
    removalPolicy: RemovalPolicy.RETAIN,
  });
  return { accessLogs, recordings };
}
