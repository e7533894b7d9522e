import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Entity } from 'electrodb';
import { config } from './config.js';
import { grantsMiddleware } from './grants.js';
import { TABLE } from './resources.js';
import { withoutUnusedMiddleware } from './sdk-clients.js';

/**
 * ElectroDB checks every model against its JSON schema (the `jsonschema` package) each time an entity
 * is built: about half of a function's cold load (~100 ms of the access API's ~200 ms import). The
 * models are constants, checked wherever the source runs unbundled (tests, the local stack: every
 * entity module is imported there, and an invalid model throws on import), so the bundles the CDK
 * builds (lib/constructs/service-function.ts defines ENTITY_MODELS_PREVALIDATED) skip the check.
 * Every entity module imports this one, so this runs before the first entity is built.
 */
export const ENTITY_MODELS_PREVALIDATED = process.env.ENTITY_MODELS_PREVALIDATED === 'true';
if (ENTITY_MODELS_PREVALIDATED) {
  (Entity.prototype as unknown as { _validateModel: (model: unknown) => void })._validateModel = () => {};
}

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
    const { AWS_REGION, STAGE } = config();
    dynamo = withoutUnusedMiddleware(
      // Locally the endpoint is explicit: no account-based endpoint to work out for each request.
      new DynamoDBClient({
        region: AWS_REGION,
        ...(STAGE === 'local' ? { accountIdEndpointMode: 'disabled' } : {}),
      }),
    );
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
 * ElectroDB configuration every entity shares. Entities are built at import time, which may come
 * before the environment is complete (the local stack imports the catalog, and with it schemas and
 * entities, before it sets TABLE_NAME), so an unset name falls back to the table's logical name —
 * the local stack's table. A function without table access is refused by its grants either way.
 */
export const entityConfig = () => ({
  table: config().TABLE_NAME ?? TABLE.name,
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
