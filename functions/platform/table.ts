import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from './config.js';
import { grantsMiddleware } from './grants.js';

/**
 * The table client, one per container. A counting middleware records every DynamoDB round trip so
 * tests and the benchmark can hold the hot paths to their budget (start-call: at most 4).
 */
export const roundTrips = {
  count: 0,
  reset(): void {
    this.count = 0;
  },
};

let dynamo: DynamoDBClient | undefined;
let documentClient: DynamoDBDocumentClient | undefined;

export function dynamoClient(): DynamoDBClient {
  if (!dynamo) {
    dynamo = new DynamoDBClient({ region: config().AWS_REGION });
    dynamo.middlewareStack.add(
      (next) => async (args) => {
        roundTrips.count += 1;
        return next(args);
      },
      { step: 'initialize', name: 'countRoundTrips' },
    );
    dynamo.middlewareStack.add(grantsMiddleware('dynamodb'), { step: 'initialize', name: 'enforceGrants' });
  }
  return dynamo;
}

export function docClient(): DynamoDBDocumentClient {
  if (!documentClient) {
    documentClient = DynamoDBDocumentClient.from(dynamoClient(), {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
    });
  }
  return documentClient;
}

export function tableName(): string {
  const name = config().TABLE_NAME;
  if (!name) throw new Error('TABLE_NAME is not configured for this function');
  return name;
}

/**
 * ElectroDB configuration every entity shares. Entities are built at import time, and a function
 * without table access imports some of them through the kernel, so a missing table name only fails
 * when the table is actually used.
 */
export const entityConfig = () => ({
  table: config().TABLE_NAME ?? 'table-not-configured',
  client: docClient(),
});

/** Keys keep the case they were written in: ids are case-sensitive (ElectroDB lowercases by default). */
export const KEEP_CASE = 'none' as const;

/** True when a single-item write failed on its condition (ElectroDB wraps the SDK's exception). */
export function isConditionFailure(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth += 1) {
    const { name, message, cause } = current as { name?: string; message?: string; cause?: unknown };
    if (name === 'ConditionalCheckFailedException') return true;
    if (typeof message === 'string' && message.includes('The conditional request failed')) return true;
    current = cause;
  }
  return false;
}
