import { ValidationError } from '../platform/errors.js';

/**
 * Pages of a list the service has read whole (members, workspaces, keys: small per tenant). Items are
 * ordered by `key`; the cursor is the opaque (base64url) key of the last item of the previous page.
 */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

const encode = (key: string): string => Buffer.from(key, 'utf8').toString('base64url');

function decode(cursor: string): string {
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (cursor === '' || encode(key) !== cursor) {
    throw new ValidationError([{ type: 'value_error', loc: ['query', 'cursor'], msg: 'Value error, invalid cursor', input: cursor }]);
  }
  return key;
}

export function paginate<T>(items: T[], key: (item: T) => string, options: { limit: number; cursor?: string }): Page<T> {
  const sorted = [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const after = options.cursor === undefined ? undefined : decode(options.cursor);
  const rest = after === undefined ? sorted : sorted.filter((item) => key(item) > after);
  const pageItems = rest.slice(0, options.limit);
  const more = rest.length > options.limit;
  return { items: pageItems, nextCursor: more ? encode(key(pageItems[pageItems.length - 1])) : null };
}
