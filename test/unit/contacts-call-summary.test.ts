import fc from 'fast-check';
import {
  afterCall,
  callFieldsOf,
  laterOf,
  listedWithCallSummary,
  withCallSummary,
  type CallFields,
} from '../../functions/contacts/call-summary.js';
import type { Contact, ContactCallSummary } from '../../functions/contacts/entities.js';

/**
 * A contact's calls in its call summary (functions/contacts/call-summary.ts): how a call changes it,
 * whatever the order calls are recorded in, and how a contact is shown with it — the summary over the
 * contact's own call fields, `last_contacted_at` the later of the two.
 */

const contact = (fields: Partial<Contact> = {}): Contact => ({
  workspaceId: 'ws_1',
  contactId: 'ct_1',
  source: 'Call',
  contactability: 'Contactable',
  callCount: 0,
  createdAt: '2026-01-01T00:00:00.000Z',
  ...fields,
});

const summary = (fields: Partial<ContactCallSummary>): ContactCallSummary => ({
  workspaceId: 'ws_1',
  contactId: 'ct_1',
  callCount: 1,
  updatedAt: '2026-02-01T00:00:00.000Z',
  version: 1,
  ...fields,
});

describe('a call recorded', () => {
  it('counts one more and becomes the last call when it is the latest', () => {
    const after = afterCall(callFieldsOf(contact()), {
      callId: 'ca_1',
      at: '2026-02-01T00:00:00.000Z',
      sentiment: 'positive',
      summary: 'x'.repeat(1200),
    });
    expect(after).toEqual({
      callCount: 1,
      lastCallId: 'ca_1',
      lastCallAt: '2026-02-01T00:00:00.000Z',
      lastCallSentiment: 'positive',
      lastCallSummary: 'x'.repeat(1000),
      lastContactedAt: '2026-02-01T00:00:00.000Z',
    });
  });

  it('an older call is counted and leaves the last call; a later one without sentiment keeps the previous', () => {
    const base: CallFields = {
      callCount: 3,
      lastCallId: 'ca_2',
      lastCallAt: '2026-02-02T00:00:00.000Z',
      lastCallSentiment: 'negative',
      lastCallSummary: 'two',
      lastContactedAt: '2026-02-03T00:00:00.000Z',
    };
    expect(
      afterCall(base, { callId: 'ca_1', at: '2026-02-01T00:00:00.000Z', sentiment: 'positive' }),
    ).toEqual({
      ...base,
      callCount: 4,
    });
    expect(afterCall(base, { callId: 'ca_3', at: '2026-02-04T00:00:00.000Z' })).toEqual({
      ...base,
      callCount: 4,
      lastCallId: 'ca_3',
      lastCallAt: '2026-02-04T00:00:00.000Z',
      lastContactedAt: '2026-02-04T00:00:00.000Z',
    });
  });

  it('a contact written before seeds the count and its last contact from its own fields', () => {
    expect(
      callFieldsOf(contact({ callCount: 7, lastCallId: 'ca_9', lastCallAt: '2026-01-09T00:00:00.000Z' })),
    ).toEqual({
      callCount: 7,
      lastCallId: 'ca_9',
      lastCallAt: '2026-01-09T00:00:00.000Z',
      lastCallSentiment: undefined,
      lastCallSummary: undefined,
      lastContactedAt: '2026-01-09T00:00:00.000Z',
    });
  });

  it('in any order, ends with the count of calls and the latest call last', () => {
    const call = fc.record({
      callId: fc.uuid(),
      at: fc
        .integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2026, 11, 31) })
        .map((ms) => new Date(ms).toISOString()),
    });
    const callsInSomeOrder = fc
      .array(call, { minLength: 1, maxLength: 12 })
      .chain((calls) =>
        fc.tuple(
          fc.constant(calls),
          fc.shuffledSubarray(calls, { minLength: calls.length, maxLength: calls.length }),
        ),
      );
    fc.assert(
      fc.property(callsInSomeOrder, ([calls, order]) => {
        const end = order.reduce(afterCall, callFieldsOf(contact()));
        const latest = calls.reduce((a, b) => (b.at > a.at ? b : a));
        expect(end.callCount).toBe(calls.length);
        expect(end.lastCallAt).toBe(latest.at);
        expect(end.lastContactedAt).toBe(latest.at);
      }),
    );
  });
});

describe('a contact shown', () => {
  it('without a summary: as stored (last_contacted_at from its last call if need be)', () => {
    const stored = contact({ callCount: 2, lastCallAt: '2026-01-02T00:00:00.000Z' });
    expect(withCallSummary(stored, undefined)).toBe(stored);
    expect(listedWithCallSummary(stored, undefined)).toBe(stored);
  });

  it('with a summary: its call fields, and the later last_contacted_at of the two', () => {
    const stored = contact({
      callCount: 2,
      lastCallId: 'ca_old',
      lastCallAt: '2026-01-02T00:00:00.000Z',
      lastContactedAt: '2026-03-01T00:00:00.000Z', // set by another path, after the last call
    });
    const calls = summary({
      callCount: 3,
      lastCallId: 'ca_new',
      lastCallAt: '2026-02-01T00:00:00.000Z',
      lastContactedAt: '2026-02-01T00:00:00.000Z',
    });
    expect(withCallSummary(stored, calls)).toMatchObject({
      callCount: 3,
      lastCallId: 'ca_new',
      lastCallAt: '2026-02-01T00:00:00.000Z',
      lastContactedAt: '2026-03-01T00:00:00.000Z',
    });
    expect(listedWithCallSummary(stored, calls).lastContactedAt).toBe('2026-03-01T00:00:00.000Z');
    const later = summary({ lastContactedAt: '2026-04-01T00:00:00.000Z' });
    expect(withCallSummary(stored, later).lastContactedAt).toBe('2026-04-01T00:00:00.000Z');
    expect(listedWithCallSummary(stored, later).lastContactedAt).toBe('2026-04-01T00:00:00.000Z');
  });

  it('laterOf takes the later time, either absent', () => {
    expect(laterOf(undefined, undefined)).toBeUndefined();
    expect(laterOf('2026-01-01T00:00:00.000Z', undefined)).toBe('2026-01-01T00:00:00.000Z');
    expect(laterOf(undefined, '2026-01-01T00:00:00.000Z')).toBe('2026-01-01T00:00:00.000Z');
    expect(laterOf('2026-01-02T00:00:00.000Z', '2026-01-01T00:00:00.000Z')).toBe('2026-01-02T00:00:00.000Z');
  });
});
