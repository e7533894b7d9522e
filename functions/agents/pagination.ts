import { ValidationError } from '../platform/errors.js';

/**
 * Pages of a DynamoDB query (agents, numbers, calls): the cursor is ElectroDB's opaque cursor of the
 * last item returned. A cursor that is not one of ours, or that belongs to another list, is 422.
 */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export const invalidCursor = (cursor: string) =>
  new ValidationError([{ type: 'value_error', loc: ['query', 'cursor'], msg: 'Value error, invalid cursor', input: cursor }]);

/** Runs a query page; a bad cursor (ElectroDB cannot decode it, or DynamoDB rejects the start key) → 422. */
export async function queryPage<T>(
  cursor: string | undefined,
  run: (cursor: string | null) => Promise<{ data: T[]; cursor: string | null }>,
): Promise<{ data: T[]; cursor: string | null }> {
  if (cursor !== undefined && !/^[A-Za-z0-9_=+/-]+$/.test(cursor)) throw invalidCursor(cursor);
  try {
    return await run(cursor ?? null);
  } catch (error) {
    if (cursor !== undefined && isBadCursorError(error)) throw invalidCursor(cursor);
    throw error;
  }
}

function isBadCursorError(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth += 1) {
    const { name, message, cause } = current as { name?: string; message?: string; cause?: unknown };
    if (name === 'ValidationException') return true;
    if (typeof message === 'string' && /cursor|starting key|ExclusiveStartKey|Unexpected token|JSON/i.test(message)) return true;
    current = cause;
  }
  return false;
}
