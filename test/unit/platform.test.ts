import { isE164, toE164 } from '../../functions/platform/phone.js';
import { isId, newId } from '../../functions/platform/ids.js';
import {
  formatApiKey,
  hashSecret,
  newSecret,
  parseApiKey,
  secretMatches,
} from '../../functions/platform/auth/api-key-secret.js';
import { clock, resetClock, setClock } from '../../functions/platform/clock.js';

describe('E.164 normalisation', () => {
  it.each([
    ['+61491570156', '+61491570156'],
    ['+61 491 570 156', '+61491570156'],
    ['+1 (415) 555-2671', '+14155552671'],
    ['+44 20 7946 0958', '+442079460958'],
  ])('normalises %s', (input, expected) => {
    expect(toE164(input)).toBe(expected);
  });

  it.each(['0491570156', '61491570156', '+0491570156', '+61', 'hello', '', '+614915701561234567'])(
    'rejects %s',
    (input) => {
      expect(toE164(input)).toBeUndefined();
    },
  );

  it('accepts only canonical E.164 as E.164', () => {
    expect(isE164('+61491570156')).toBe(true);
    expect(isE164('+61 491 570 156')).toBe(false);
  });
});

describe('ids', () => {
  it('are a prefix and a ULID, and sort by creation', () => {
    const a = newId('agent');
    const b = newId('agent');
    expect(a).toMatch(/^ag_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(a < b).toBe(true);
    expect(isId('agent', a)).toBe(true);
    expect(isId('call', a)).toBe(false);
    expect(isId('agent', 'ag_123')).toBe(false);
  });
});

describe('API key secrets', () => {
  it('round-trips the key format and matches only the right secret', () => {
    const keyId = newId('apiKey');
    const secret = newSecret();
    const parsed = parseApiKey(formatApiKey(keyId, secret));
    expect(parsed).toEqual({ keyId, secret });
    const stored = hashSecret(secret);
    expect(stored).not.toContain(secret);
    expect(secretMatches(secret, stored)).toBe(true);
    expect(secretMatches(newSecret(), stored)).toBe(false);
  });

  it.each(['vak_', 'vak_key_123_abc', `vak_${'x'.repeat(80)}`, 'sk_live_123'])(
    'rejects the malformed key %s',
    (token) => {
      expect(parseApiKey(token)).toBeUndefined();
    },
  );
});

describe('the clock', () => {
  afterEach(() => resetClock());
  it('can be fixed by tests', () => {
    setClock(new Date('2026-11-22T01:30:00.000Z'));
    expect(clock.now().toISOString()).toBe('2026-11-22T01:30:00.000Z');
  });
});
