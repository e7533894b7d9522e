import * as z from 'zod';
import { ValidationError } from './errors.js';
import { schemaOnFirstUse } from './first-use.js';

/**
 * Pages of a list, the `?limit=&cursor=` → `{ items, next_cursor }` convention of docs/api.md. Cursors are
 * opaque; one that is not ours, or belongs to another list, is a 422 on `query.cursor`.
 */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
/** Long enough for ElectroDB's cursors (an encoded start key with GSI keys), which are the longest. */
const MAX_CURSOR_LENGTH = 2048;

/**
 * The query of every list: `limit` (1–100, default 50) and an opaque `cursor`. A list with filters
 * extends it: `ListQuery.extend({ status: … })` (still strict: an unknown parameter is a 422).
 */
export const ListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  cursor: z.string().min(1).max(MAX_CURSOR_LENGTH).optional(),
});
export type ListQuery = z.infer<typeof ListQuery>;

/** The response of a list: one page of `item` and the cursor of the next page (null at the end). */
export const pageOf = <T extends z.ZodType>(item: T) =>
  schemaOnFirstUse(() => z.object({ items: z.array(item), next_cursor: z.string().nullable() }));

export const invalidCursor = (cursor: string) =>
  new ValidationError([
    { type: 'value_error', loc: ['query', 'cursor'], msg: 'Value error, invalid cursor', input: cursor },
  ]);

const encode = (key: string): string => Buffer.from(key, 'utf8').toString('base64url');

/** The key a cursor of `encodeCursor` carries, or 422. */
export function decodeCursor(cursor: string): string {
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (cursor === '' || encode(key) !== cursor) throw invalidCursor(cursor);
  return key;
}

export const encodeCursor = encode;

/**
 * Pages of a list read whole (members, workspaces, keys: small per tenant). Items are ordered by
 * `key`; the cursor is the encoded key of the last item of the previous page.
 */
export function paginate<T>(
  items: T[],
  key: (item: T) => string,
  options: { limit: number; cursor?: string },
): Page<T> {
  const sorted = [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
  const rest = after === undefined ? sorted : sorted.filter((item) => key(item) > after);
  const pageItems = rest.slice(0, options.limit);
  const more = rest.length > options.limit;
  return { items: pageItems, nextCursor: more ? encode(key(pageItems[pageItems.length - 1])) : null };
}

/**
 * Runs one page of a DynamoDB query with ElectroDB's own cursor. A cursor ElectroDB cannot decode,
 * or that DynamoDB rejects as a start key, is 422.
 */
export async function queryPage<T>(
  cursor: string | undefined,
  run: (cursor: string | null) => Promise<{ data: T[]; cursor: string | null }>,
): Promise<Page<T>> {
  if (cursor !== undefined && !/^[A-Za-z0-9_=+/-]+$/.test(cursor)) throw invalidCursor(cursor);
  try {
    const page = await run(cursor ?? null);
    return { items: page.data, nextCursor: page.cursor ?? null };
  } catch (error) {
    if (cursor !== undefined && isBadCursorError(error)) throw invalidCursor(cursor);
    throw error;
  }
}

function isBadCursorError(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth += 1) {
    const { name, message, cause } = current as { name?: string; message?: string; cause?: unknown };
    if (name === 'ValidationException') return true;
    if (
      typeof message === 'string' &&
      /cursor|starting key|ExclusiveStartKey|Unexpected token|JSON|Invalid/i.test(message)
    )
      return true;
    current = cause;
  }
  return false;
}
