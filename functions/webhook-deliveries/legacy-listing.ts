import { invalidCursor, type Page } from '../platform/pagination.js';
import { legacyLayoutInUse } from '../platform/key-moves.js';
import { queryStoredItems, type StoredItem } from '../platform/table.js';
import { WebhookDeliveryEntity, type WebhookDelivery } from './entities.js';

/**
 * The workspace's deliveries listing until `npm run cli -- migrate calls` has run: deliveries made
 * before they had keys of their own are still at the workspace's key (`WS#<ws>` / `WHDELIVERY#<dlv>`)
 * and not in the listing's index (gsi2). Every one of them is older than any delivery made since, so
 * the listing goes on with them, newest first, once the index's are all listed: a page that reaches
 * the index's end is filled from the old key, and its cursor then is the old key's.
 */

/** The cursor of a listing that continues at the old key: the old key's last item read (none: from its top). */
interface OldKeyCursor {
  oldKey: true;
  after?: StoredItem;
}

const encode = (cursor: OldKeyCursor): string =>
  Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');

/** The old key's position a cursor carries, or undefined for a cursor of the index. */
export function oldKeyPosition(workspaceId: string, cursor: string | undefined): OldKeyCursor | undefined {
  if (cursor === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== 'object' || (parsed as OldKeyCursor).oldKey !== true) return undefined;
  const after = (parsed as OldKeyCursor).after;
  if (after === undefined) return { oldKey: true };
  const { pk, sk } = (after ?? {}) as StoredItem;
  if (pk !== `WS#${workspaceId}` || typeof sk !== 'string' || !sk.startsWith('WHDELIVERY#'))
    throw invalidCursor(cursor);
  return { oldKey: true, after: { pk, sk } };
}

/** The index's page, continued at the old key when it reached the index's end and old keys may hold deliveries. */
export async function continuedAtOldKey(
  workspaceId: string,
  page: Page<WebhookDelivery>,
  options: { limit: number; endpointId?: string },
): Promise<Page<WebhookDelivery>> {
  if (page.nextCursor !== null || !(await legacyLayoutInUse())) return page;
  if (page.items.length >= options.limit) return { items: page.items, nextCursor: encode({ oldKey: true }) };
  const rest = await oldKeyPage(
    workspaceId,
    { oldKey: true },
    { ...options, limit: options.limit - page.items.length },
  );
  return { items: [...page.items, ...rest.items], nextCursor: rest.nextCursor };
}

/** Up to `limit` deliveries at the old key below the cursor's position, newest first (the endpoint's only, if given). */
export async function oldKeyPage(
  workspaceId: string,
  position: OldKeyCursor,
  options: { limit: number; endpointId?: string },
): Promise<Page<WebhookDelivery>> {
  const items: WebhookDelivery[] = [];
  let start = position.after;
  for (;;) {
    const page = await queryStoredItems({
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
      ExpressionAttributeNames: {
        '#pk': 'pk',
        '#sk': 'sk',
        ...(options.endpointId ? { '#endpoint': 'endpointId' } : {}),
      },
      ExpressionAttributeValues: {
        ':pk': `WS#${workspaceId}`,
        ':prefix': 'WHDELIVERY#',
        ...(options.endpointId ? { ':endpoint': options.endpointId } : {}),
      },
      ...(options.endpointId ? { FilterExpression: '#endpoint = :endpoint' } : {}),
      ScanIndexForward: false,
      Limit: options.limit + 1 - items.length,
      ...(start ? { ExclusiveStartKey: { pk: start.pk, sk: start.sk } } : {}),
    });
    for (const item of page.items) {
      const delivery = WebhookDeliveryEntity.parse({ Item: item }).data as WebhookDelivery | null;
      if (!delivery) continue;
      if (items.length === options.limit) {
        // One more matched: the page ends at the last one kept.
        const last = items[items.length - 1];
        return {
          items,
          nextCursor: encode({
            oldKey: true,
            after: { pk: `WS#${workspaceId}`, sk: `WHDELIVERY#${last.deliveryId}` },
          }),
        };
      }
      items.push(delivery);
    }
    if (!page.next) return { items, nextCursor: null };
    start = page.next as StoredItem;
  }
}
