import fc from 'fast-check';
import {
  normaliseQuery,
  normaliseText,
  searchTokens,
  withPrefixLengths,
} from '../../functions/contacts/search.js';

/**
 * Search tokens of contacts (functions/contacts/search.ts): what a contact is found by, and the rule
 * that lists each contact once — of a contact's entries whose token starts with q, only the one whose
 * common prefix with the previous token is shorter than q passes the filter.
 */

describe('tokens', () => {
  it('names, full name, email and phone forms; no token that prefixes another', () => {
    expect(
      searchTokens({
        firstName: 'Sam',
        lastName: 'Smith',
        email: 'Sam.Smith@Example.com',
        phone: '+61491570156',
      }),
    ).toEqual(['0491570156', '491570156', '61491570156', 'sam smith', 'sam.smith@example.com', 'smith']);
    expect(searchTokens({ firstName: 'José', lastName: 'Álvarez' })).toEqual(['alvarez', 'jose alvarez']);
    expect(searchTokens({ name: 'Legacy Person' })).toEqual(['legacy person', 'person']);
    expect(searchTokens({ email: 'a#b@example.com' })).toEqual(['ab@example.com']);
    expect(searchTokens({})).toEqual([]);
  });

  it('queries: phone-like ones become digits, others are normalised like names', () => {
    expect(normaliseQuery('+61 (491) 570-156')).toBe('61491570156');
    expect(normaliseQuery('0491 570')).toBe('0491570');
    expect(normaliseQuery('  ÁLVAREZ  ')).toBe('alvarez');
    expect(normaliseQuery("O'Brien")).toBe("o'brien");
    expect(normaliseQuery('sam#ct_01')).toBe('samct_01');
    expect(normaliseQuery('+')).toBe('+'); // no token starts with it: nothing matches
    expect(normaliseText('a\u0000b\u200bc')).toBe('abc');
  });
});

describe('each contact once', () => {
  const word = fc.stringMatching(/^[a-c]{1,4}$/);
  const contact = fc.record({
    firstName: fc.option(word, { nil: undefined }),
    lastName: fc.option(word, { nil: undefined }),
    email: fc.option(
      word.map((w) => `${w}@x.io`),
      { nil: undefined },
    ),
  });

  it('for any contacts and any q, the entries that pass are one per contact that has a token starting with q', () => {
    fc.assert(
      fc.property(fc.array(contact, { minLength: 1, maxLength: 6 }), word, (contacts, raw) => {
        const q = normaliseQuery(raw);
        const entries = contacts.flatMap((c, id) =>
          withPrefixLengths(searchTokens(c)).map((entry) => ({ ...entry, id })),
        );
        // DynamoDB's order: by token, then contact id.
        entries.sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : a.id - b.id));
        const listed = entries.filter((e) => e.token.startsWith(q) && e.lcpPrev < q.length).map((e) => e.id);
        const matching = contacts
          .map((c, id) => ({ id, tokens: searchTokens(c) }))
          .filter(({ tokens }) => tokens.some((t) => t.startsWith(q)))
          .map(({ id }) => id);
        expect([...listed].sort()).toEqual(matching);
        // …and every contact whose name or email starts with q is among them.
        contacts.forEach((c, id) => {
          const fields = [c.firstName, c.lastName, c.email].filter((f): f is string => f !== undefined);
          if (fields.some((f) => normaliseText(f).startsWith(q))) expect(matching).toContain(id);
        });
      }),
      { numRuns: 500 },
    );
  });
});
