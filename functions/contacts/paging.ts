import { queryPage, type Page } from '../platform/pagination.js';

export type { Page };

/**
 * One page of a list from ONE DynamoDB Query (ElectroDB's `pages: 1`): the query reads at most `read`
 * items (DynamoDB's Limit, counted before the filter expression), and the page keeps the first
 * `limit` of those that match. When more matched, the cursor points just after the last item kept
 * (`cursorAfter`, ElectroDB's cursor of that item's key); otherwise it is DynamoDB's own (null when
 * the query reached the end). Reading `limit + 1` items without a filter tells whether more follow,
 * so the last full page of a list does not hand out a cursor to an empty one.
 */
export async function onePage<T>(options: {
  cursor: string | undefined;
  limit: number;
  read: number;
  order?: 'asc' | 'desc';
  run: (query: {
    cursor: string | null;
    limit: number;
    order?: 'asc' | 'desc';
  }) => Promise<{ data: T[]; cursor: string | null }>;
  cursorAfter: (item: T) => string;
}): Promise<Page<T>> {
  const page = await queryPage(options.cursor, (cursor) =>
    options.run({
      cursor,
      limit: Math.max(options.read, options.limit + 1),
      ...(options.order ? { order: options.order } : {}),
    }),
  );
  if (page.items.length <= options.limit) return page;
  const items = page.items.slice(0, options.limit);
  return { items, nextCursor: options.cursorAfter(items[items.length - 1]) };
}
