import { isId } from '../platform/ids.js';
import {
  decodeCursor,
  encodeCursor,
  invalidCursor,
  type ListQuery,
  type Page,
} from '../platform/pagination.js';
import { LedgerEntryEntity, type LedgerEntry } from './entities.js';

/**
 * The organisation's ledger, newest first, a page at a time. The cursor is the encoded id of the last
 * entry of the previous page; the next page is read by key from there, within this organisation's
 * partition only.
 */
export async function listLedger(organisationId: string, options: ListQuery): Promise<Page<LedgerEntry>> {
  const before = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
  if (before !== undefined && !isId('ledgerEntry', before)) throw invalidCursor(options.cursor!);
  const query = LedgerEntryEntity.query.byOrganisation({ organisationId });
  // BETWEEN is inclusive: read one more for the cursor's own entry, and one more to know if there are more.
  const { data } = await (before ? query.between({ entryId: '' }, { entryId: before }) : query).go({
    order: 'desc',
    limit: options.limit + 2,
  });
  const rest = data.filter((entry) => entry.entryId !== before);
  const items = rest.slice(0, options.limit);
  return {
    items,
    nextCursor: rest.length > options.limit ? encodeCursor(items[items.length - 1].entryId) : null,
  };
}
