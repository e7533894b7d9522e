import { z } from 'zod';
import { ValidationError } from '../../functions/platform/errors.js';
import {
  ListQuery,
  openCursor,
  pageOf,
  sealCursor,
  takesCursor,
} from '../../functions/platform/pagination.js';

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

/** Cursors on the wire are sealed (AES-256-GCM): opaque, and a changed one is refused with a 422. */
describe('sealed cursors', () => {
  const saved = process.env.CURSOR_SECRET;
  beforeAll(() => {
    process.env.CURSOR_SECRET = 'unit-test-cursor-key';
  });
  afterAll(() => {
    process.env.CURSOR_SECRET = saved;
  });

  const plain = Buffer.from(JSON.stringify({ pk: '$voice#workspaceid_ws_1', sk: '$agent#a_1' })).toString(
    'base64url',
  );

  it('opens what it sealed, and shows nothing of the key inside', async () => {
    const sealed = await sealCursor(plain);
    expect(sealed).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain('workspace');
    expect(sealed).not.toContain(plain.slice(0, 12));
    expect(await openCursor(sealed)).toBe(plain);
    // A fresh IV each time: two pages at the same place are two different strings.
    expect(await sealCursor(plain)).not.toBe(sealed);
  });

  it.each([
    ['a plain base64 key, as cursors were', plain],
    ['a changed byte', 'flip'],
    ['a cut tail', 'cut'],
    ['not base64url', '%%%'],
    ['too short', 'AAAA'],
  ])('refuses %s with a 422 on query.cursor', async (_what, kind) => {
    const sealed = await sealCursor(plain);
    const bytes = Buffer.from(sealed, 'base64url');
    if (kind === 'flip') bytes[20] ^= 1;
    const cursor =
      kind === 'flip' ? bytes.toString('base64url') : kind === 'cut' ? sealed.slice(0, -4) : kind;
    const refused = await openCursor(cursor).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).detail.map((i) => i.loc)).toEqual([['query', 'cursor']]);
  });

  it('is a list route when its query takes a cursor (its function gets the cursor-key secret)', () => {
    expect(takesCursor(ListQuery)).toBe(true);
    expect(takesCursor(z.lazy(() => ListQuery.extend({ q: z.string() })))).toBe(true);
    expect(takesCursor(z.strictObject({ v: z.string() }))).toBe(false);
    expect(takesCursor(undefined)).toBe(false);
  });
});
