import { z } from 'zod';
import { ListQuery, pageOf } from '../../functions/platform/pagination.js';

/** The one list query and page envelope every list route uses (docs/conventions.md "Lists"). */
describe('list query', () => {
  /** The fields a query is refused on (an unknown parameter is refused on its own name). */
  const refusedOn = (schema: z.ZodType, query: unknown): PropertyKey[] =>
    schema
      .safeParse(query)
      .error?.issues.flatMap((i) => (i.code === 'unrecognized_keys' ? i.keys : i.path)) ?? [];

  it('defaults the limit to 50 and coerces it from the query string', () => {
    expect(ListQuery.parse({})).toEqual({ limit: 50 });
    expect(ListQuery.parse({ limit: '100', cursor: 'abc' })).toEqual({ limit: 100, cursor: 'abc' });
  });

  it.each([
    [{ limit: '0' }, 'limit'],
    [{ limit: '101' }, 'limit'],
    [{ limit: 'ten' }, 'limit'],
    [{ limit: '2.5' }, 'limit'],
    [{ cursor: '' }, 'cursor'],
    [{ cursor: 'x'.repeat(2049) }, 'cursor'],
    [{ colour: 'red' }, 'colour'],
  ])('%p is refused on %s', (query, field) => {
    expect(refusedOn(ListQuery, query)).toEqual([field]);
  });

  it('extends with a list’s own filters and stays strict', () => {
    const Filtered = ListQuery.extend({ status: z.enum(['open', 'closed']).optional() });
    expect(Filtered.parse({ status: 'open' })).toEqual({ limit: 50, status: 'open' });
    expect(refusedOn(Filtered, { colour: 'red' })).toEqual(['colour']);
  });

  it('a page is `{ items, next_cursor }`', () => {
    const Page = pageOf(z.object({ id: z.string() }));
    expect(Page.parse({ items: [{ id: 'a' }], next_cursor: null })).toEqual({
      items: [{ id: 'a' }],
      next_cursor: null,
    });
    expect(Page.safeParse({ items: [] }).success).toBe(false);
  });
});
