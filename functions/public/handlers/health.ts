import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { HeadBucketCommand } from '@aws-sdk/client-s3';
import { implement } from '../../platform/http/index.js';
import { publicRoutes } from '../routes.js';
import { HttpError } from '../../platform/errors.js';
import { dynamoClient, tableName } from '../../platform/table.js';
import { queueUrl, sqsClient } from '../../platform/queue.js';
import { bucketName, s3Client } from '../../platform/storage.js';
import { logger } from '../../platform/logger.js';

/** `GET /api/v1/health`: 200 `{status:"ok"}` once the table, a queue and the bucket all answer. */
export const handler = implement(publicRoutes.health, async () => {
  const checks = await Promise.allSettled([
    dynamoClient().send(
      new GetItemCommand({ TableName: tableName(), Key: { pk: { S: 'HEALTH' }, sk: { S: 'HEALTH' } } }),
    ),
    sqsClient().send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl('calls'), AttributeNames: ['QueueArn'] }),
    ),
    s3Client().send(new HeadBucketCommand({ Bucket: bucketName() })),
  ]);
  const names = ['table', 'queue', 'bucket'];
  const failed = checks.flatMap((check, i) => (check.status === 'rejected' ? [names[i]] : []));
  if (failed.length > 0) {
    logger.warn('health check failed', {
      failed,
      reasons: checks.map((c) => (c.status === 'rejected' ? String(c.reason) : 'ok')),
    });
    throw new HttpError(503, `Unavailable: ${failed.join(', ')}`);
  }
  return { status: 200, body: { status: 'ok', checks: { table: 'ok', queue: 'ok', bucket: 'ok' } } };
});
