import {
  BatchWriteItemCommand,
  TransactWriteItemsCommand,
  type AttributeValue,
  type TransactWriteItem,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { dynamoClient, tableName } from '../../../functions/platform/table.js';

/** BatchWriteItem requests the floors send at once. */
const FLOOR_CONCURRENCY = 8;

/**
 * A bench floor: writes the given BatchWriteItem requests (25 items each) straight to the table with
 * the handlers' own client, FLOOR_CONCURRENCY at once, unprocessed items sent again; items per second.
 */
export async function batchWriteFloor(
  requests: WriteRequest[][],
): Promise<{ items: number; seconds: number; itemsPerSecond: number }> {
  const items = requests.reduce((sum, request) => sum + request.length, 0);
  const seconds = await sendAll(requests, async (request) => {
    let pending = request;
    while (pending.length > 0) {
      const result = await dynamoClient().send(
        new BatchWriteItemCommand({ RequestItems: { [tableName()]: pending } }),
      );
      pending = result.UnprocessedItems?.[tableName()] ?? [];
    }
  });
  return { items, seconds, itemsPerSecond: items / seconds };
}

/**
 * As batchWriteFloor, with TransactWriteItems: each transaction sent once, FLOOR_CONCURRENCY at once
 * (a refused one throws: a bench's items never collide). Seconds taken.
 */
export function transactWriteAll(transactions: TransactWriteItem[][]): Promise<number> {
  return sendAll(transactions, async (items) => {
    await dynamoClient().send(new TransactWriteItemsCommand({ TransactItems: items }));
  });
}

async function sendAll<T>(requests: T[], send: (request: T) => Promise<void>): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: FLOOR_CONCURRENCY }, async () => {
      while (next < requests.length) {
        const request = requests[next];
        next += 1;
        await send(request);
      }
    }),
  );
  return (performance.now() - started) / 1000;
}

/**
 * The floor of `count` items made by `itemAt(i)` (a partition of the run's own, `<prefix>#<run>`, and
 * a sort key per item), cut into BatchWriteItem requests of 25.
 */
export function batchWriteFloorOf(
  count: number,
  prefix: string,
  itemAt: (i: number) => Record<string, AttributeValue>,
): Promise<{ items: number; seconds: number; itemsPerSecond: number }> {
  const run = Date.now().toString(36);
  const requests: WriteRequest[][] = [];
  for (let i = 0; i < count; i += 25) {
    requests.push(
      Array.from({ length: Math.min(25, count - i) }, (_, k) => ({
        PutRequest: {
          Item: {
            pk: { S: `${prefix}#${run}` },
            sk: { S: `ITEM#${String(i + k).padStart(8, '0')}` },
            ...itemAt(i + k),
          },
        },
      })),
    );
  }
  return batchWriteFloor(requests);
}
