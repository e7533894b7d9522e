import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactGetCommand,
  TransactWriteCommand,
  type BatchWriteCommandInput,
  type QueryCommandInput,
  type ScanCommandInput,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { Entity } from 'electrodb';
import { config } from './config.js';
import { grantsMiddleware } from './grants.js';
import { TABLE } from './resources.js';
import { sdkClient } from './sdk-clients.js';

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
    dynamo = sdkClient(
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

/**
 * Forgets the table's clients: the next use makes new ones from the environment as it is then. Only
 * for a process that moves to another table (npm run bench, between the local stacks it starts); a
 * client reads its endpoint once.
 */
export function resetTableClients(): void {
  dynamo?.destroy();
  dynamo = undefined;
  documentClient = undefined;
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

/** An item's key on the table. */
export interface TableKey {
  pk: string;
  sk: string;
}

/** An item as the table holds it: an entity's attributes with its keys and ElectroDB's identifiers. */
export type StoredItem = Record<string, unknown>;

type WriteRequest = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
/** One item of a transaction (Put, Update, Delete or ConditionCheck), without its table name. */
export type TransactionItem =
  | { Put: Omit<NonNullable<WriteRequest['Put']>, 'TableName'> }
  | { Update: Omit<NonNullable<WriteRequest['Update']>, 'TableName'> }
  | { Delete: Omit<NonNullable<WriteRequest['Delete']>, 'TableName'> }
  | { ConditionCheck: Omit<NonNullable<WriteRequest['ConditionCheck']>, 'TableName'> };

/**
 * Plain reads and writes of items as ElectroDB stores them, for the hot paths (an API key's
 * authentication, start-call): the DocumentClient alone, without ElectroDB's work on every request
 * (building and checking the params, formatting the response, an error made for its stack trace).
 * The callers build exactly the keys and items their entities would; test/unit/hot-path-items.test.ts
 * holds them to the entities' own params. Everything else goes through the entities.
 */
export async function getStoredItem(key: TableKey): Promise<StoredItem | undefined> {
  const { Item } = await docClient().send(new GetCommand({ TableName: tableName(), Key: key }));
  return Item;
}

/** Several items in one consistent read (TransactGetItems); undefined where an item does not exist. */
export async function getStoredItems(keys: TableKey[]): Promise<(StoredItem | undefined)[]> {
  const table = tableName();
  const { Responses = [] } = await docClient().send(
    new TransactGetCommand({ TransactItems: keys.map((Key) => ({ Get: { TableName: table, Key } })) }),
  );
  return keys.map((_, i) => Responses[i]?.Item);
}

/**
 * Several items in one consistent read that is not a transaction (BatchGetItem, sending again what
 * DynamoDB leaves unprocessed): one request like getStoredItems, at half its read units, and never
 * refused by a transaction writing one of the items meanwhile. The keys must differ. Undefined where
 * an item does not exist.
 */
export async function batchGetStoredItems(keys: TableKey[], tries = 8): Promise<(StoredItem | undefined)[]> {
  const table = tableName();
  const id = (key: Record<string, unknown>) => `${String(key.pk)}\n${String(key.sk)}`;
  const found = new Map<string, StoredItem>();
  let pending: Record<string, unknown>[] = keys.map((key) => ({ pk: key.pk, sk: key.sk }));
  for (let attempt = 0; pending.length > 0; attempt += 1) {
    if (attempt >= tries) throw new Error(`could not read ${pending.length} items; try again`);
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
    const { Responses, UnprocessedKeys } = await docClient().send(
      new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: true } } }),
    );
    for (const item of Responses?.[table] ?? []) found.set(id(item), item);
    pending = UnprocessedKeys?.[table]?.Keys ?? [];
  }
  return keys.map((key) => found.get(id(key as unknown as Record<string, unknown>)));
}

/**
 * One transaction. A cancellation (a condition failed, a conflict) is an outcome, not an error: its
 * reasons come back in the items' order (`None` for an item that was not the cause).
 */
export async function writeStoredItems(
  items: TransactionItem[],
): Promise<{ canceled: false } | { canceled: true; codes: string[] }> {
  const table = tableName();
  const TransactItems = items.map((item) => {
    const [kind, request] = Object.entries(item)[0] as [string, object];
    return { [kind]: { ...request, TableName: table } } as WriteRequest;
  });
  try {
    await docClient().send(new TransactWriteCommand({ TransactItems }));
    return { canceled: false };
  } catch (error) {
    const { name, CancellationReasons } = error as {
      name?: string;
      CancellationReasons?: { Code?: string }[];
    };
    if (name !== 'TransactionCanceledException') throw error;
    return { canceled: true, codes: items.map((_, i) => CancellationReasons?.[i]?.Code ?? 'None') };
  }
}

/**
 * An entity's own request as an item of writeStoredItems or a key of the reads above: ElectroDB
 * builds it (`Entity.create(…).params()`, `.patch(…)…params()`, `.get(…).params()`), so its keys,
 * identifiers and conditions are exactly the entity's; only the table name (and a single write's
 * ReturnValues) are left out.
 */
export function entityWrite(
  kind: 'Put' | 'Update' | 'Delete' | 'ConditionCheck',
  params: Record<string, unknown>,
): TransactionItem {
  const { TableName: _table, ReturnValues: _returns, ...request } = params;
  return { [kind]: request } as unknown as TransactionItem;
}
export const entityKey = (params: { Key?: unknown }): TableKey => params.Key as TableKey;

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

/**
 * Puts up to 25 items with one BatchWriteItem, sending again what DynamoDB leaves unprocessed (with a
 * growing pause), at most `tries` times. Only for idempotent puts of derived items (no conditions).
 */
export async function batchPutItems(items: Record<string, unknown>[], tries = 8): Promise<void> {
  await batchWrite(
    items.map((Item) => ({ PutRequest: { Item } })),
    tries,
  );
}

/** Deletes up to 25 items by key with one BatchWriteItem, as batchPutItems puts them (deleting is idempotent). */
export async function batchDeleteItems(keys: TableKey[], tries = 8): Promise<void> {
  await batchWrite(
    keys.map(({ pk, sk }) => ({ DeleteRequest: { Key: { pk, sk } } })),
    tries,
  );
}

type BatchWriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];

async function batchWrite(requests: BatchWriteRequest[], tries: number): Promise<void> {
  const table = tableName();
  let pending = requests;
  for (let attempt = 0; pending.length > 0; attempt += 1) {
    if (attempt >= tries) throw new Error(`could not write ${pending.length} items; try again`);
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
    const { UnprocessedItems } = await docClient().send(
      new BatchWriteCommand({ RequestItems: { [table]: pending } }),
    );
    pending = UnprocessedItems?.[table] ?? [];
  }
}

/** A Query of the table (an entity's `.params()`, or plain), its table name filled in. */
export type TableQuery = Omit<QueryCommandInput, 'TableName'> & { TableName?: string };
/** One page of a Query or Scan, as stored. */
export interface StoredPage {
  items: StoredItem[];
  /** The start key of the next page; absent at the end. */
  next?: Record<string, unknown>;
  scanned: number;
}

/** One page of a Query (the sharded call log's merge, which runs a query per shard itself). */
export async function queryStoredItems(query: TableQuery): Promise<StoredPage> {
  const page = await docClient().send(new QueryCommand({ ...query, TableName: tableName() }));
  return { items: page.Items ?? [], next: page.LastEvaluatedKey, scanned: page.ScannedCount ?? 0 };
}

/** One page of a Scan of the whole table (one-off migrations only). */
export async function scanStoredItems(scan: Omit<ScanCommandInput, 'TableName'>): Promise<StoredPage> {
  const page = await docClient().send(new ScanCommand({ ...scan, TableName: tableName() }));
  return { items: page.Items ?? [], next: page.LastEvaluatedKey, scanned: page.ScannedCount ?? 0 };
}

/** One item put as it is, unconditionally (a migration's own progress). */
export async function putStoredItem(item: StoredItem): Promise<void> {
  await docClient().send(new PutCommand({ TableName: tableName(), Item: item }));
}
