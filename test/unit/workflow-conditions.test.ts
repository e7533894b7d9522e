import { describe, expect, it } from '@jest/globals';
import { evaluate, evaluateAll, lookup, render } from '../../functions/workflows/conditions.js';
import type { Condition } from '../../functions/workflows/schemas.js';

/** The Signal stage's conditions and the task's {{placeholders}} (functions/workflows/conditions.ts). */
const facts = {
  event: {
    sentiment: 'Positive',
    hot: true,
    budget: '750000',
    listing: { suburb: 'Bondi Beach' },
    tags: ['a'],
  },
  contact: {
    first_name: 'Sam',
    tags: ['VIP', 'buyer'],
    attributes: { suburb: 'Manly' },
    last_call: { sentiment: 'negative' },
  },
};

describe('workflow conditions', () => {
  it('reads the event (bare or event.) and the contact (contact.)', () => {
    expect(lookup(facts, 'sentiment')).toBe('Positive');
    expect(lookup(facts, 'event.listing.suburb')).toBe('Bondi Beach');
    expect(lookup(facts, 'listing.suburb')).toBe('Bondi Beach');
    expect(lookup(facts, 'contact.attributes.suburb')).toBe('Manly');
    expect(lookup(facts, 'contact.last_call.sentiment')).toBe('negative');
    expect(lookup(facts, 'contact.nope.deeper')).toBeUndefined();
    expect(lookup({ event: {} }, 'contact.first_name')).toBeUndefined();
  });

  it.each<[string, Condition['op'], Condition['value'], boolean]>([
    ['sentiment', 'eq', 'positive', true],
    ['sentiment', 'neq', 'positive', false],
    ['sentiment', 'neq', 'negative', true],
    ['missing', 'neq', 'x', false],
    ['missing', 'eq', 'x', false],
    ['hot', 'eq', true, true],
    ['hot', 'eq', 'true', true],
    ['budget', 'gt', 500000, true],
    ['budget', 'lt', 500000, false],
    ['sentiment', 'gt', 1, false],
    ['listing.suburb', 'contains', 'bondi', true],
    ['contact.tags', 'contains', 'vip', true],
    ['contact.tags', 'contains', 'seller', false],
    ['contact.first_name', 'contains', 'x', false],
  ])('%s %s %p → %p', (field, op, value, passed) => {
    expect(evaluate({ field, op, value }, facts).passed).toBe(passed);
  });

  it('every condition must hold; none always holds', () => {
    expect(evaluateAll([], facts).matched).toBe(true);
    const both = evaluateAll(
      [
        { field: 'hot', op: 'eq', value: true },
        { field: 'contact.attributes.suburb', op: 'eq', value: 'Bondi' },
      ],
      facts,
    );
    expect(both.matched).toBe(false);
    expect(both.conditions.map((c) => c.passed)).toEqual([true, false]);
    expect(both.conditions[1]).toMatchObject({ actual: 'Manly' });
  });

  it('fills {{placeholders}}; a missing field is empty', () => {
    expect(render('Hi {{contact.first_name}}, {{ listing.suburb }} sold{{nope}}!', facts)).toBe(
      'Hi Sam, Bondi Beach sold!',
    );
    expect(render('{{contact.tags}}', facts)).toBe('["VIP","buyer"]');
  });
});
