import { isOpenIn, nextOpening, recipientZones } from '../../functions/campaigns/window.js';
import type { CallingWindow } from '../../functions/campaigns/model.js';

/**
 * The calling window in the recipient's local time (functions/campaigns/window.ts): whose zone is
 * used (the contact's, else its number's country's, else the workspace's), whether the window is
 * open, and when it next opens — across a daylight-saving change too.
 */

const recipient: CallingWindow = {
  timezone: 'recipient',
  days: ['mon', 'tue', 'wed', 'thu', 'fri'],
  start: '09:00',
  end: '17:00',
};

describe('recipientZones', () => {
  test('the contact’s timezone first', () => {
    expect(
      recipientZones({
        window: recipient,
        contactTimezone: 'Europe/London',
        phone: '+61491570156',
        workspaceTimezone: 'Australia/Sydney',
      }),
    ).toEqual(['Europe/London']);
  });

  test('else the number’s country when it has one zone', () => {
    expect(
      recipientZones({ window: recipient, phone: '+819012345678', workspaceTimezone: 'Australia/Sydney' }),
    ).toEqual(['Asia/Tokyo']);
  });

  test('a country of several zones: the workspace’s when it is one of them, else all of them', () => {
    expect(
      recipientZones({ window: recipient, phone: '+61491570156', workspaceTimezone: 'Australia/Perth' }),
    ).toEqual(['Australia/Perth']);
    const all = recipientZones({ window: recipient, phone: '+61491570156', workspaceTimezone: 'UTC' });
    expect(all.length).toBeGreaterThan(1);
    expect(all).toEqual(expect.arrayContaining(['Australia/Sydney', 'Australia/Perth']));
  });

  test('else the workspace’s; a window with a named timezone ignores the recipient', () => {
    expect(
      recipientZones({ window: recipient, phone: 'not a number', workspaceTimezone: 'Asia/Tokyo' }),
    ).toEqual(['Asia/Tokyo']);
    expect(
      recipientZones({
        window: { ...recipient, timezone: 'America/New_York' },
        contactTimezone: 'Europe/London',
        phone: '+61491570156',
        workspaceTimezone: 'UTC',
      }),
    ).toEqual(['America/New_York']);
  });
});

describe('nextOpening', () => {
  // Wednesday 2026-11-25 at 08:00 UTC = 19:00 in Sydney (AEDT, UTC+11), 16:00 in Perth (UTC+8).
  const wednesday = new Date('2026-11-25T08:00:00Z');

  test('open in the zone: null', () => {
    expect(isOpenIn(recipient, 'Australia/Perth', wednesday)).toBe(true);
    expect(nextOpening(recipient, ['Australia/Perth'], wednesday)).toBeNull();
  });

  test('closed: the next local opening (Sydney 09:00 on Thursday = 22:00 UTC on Wednesday)', () => {
    expect(isOpenIn(recipient, 'Australia/Sydney', wednesday)).toBe(false);
    expect(nextOpening(recipient, ['Australia/Sydney'], wednesday)?.toISOString()).toBe(
      '2026-11-25T22:00:00.000Z',
    );
  });

  test('several zones: the first instant open in all of them', () => {
    // Sydney opens 22:00 UTC (Perth 06:00: closed); Perth opens 01:00 UTC (Sydney 12:00: open).
    expect(nextOpening(recipient, ['Australia/Sydney', 'Australia/Perth'], wednesday)?.toISOString()).toBe(
      '2026-11-26T01:00:00.000Z',
    );
  });

  test('Friday evening: Monday’s opening', () => {
    const friday = new Date('2026-11-27T07:00:00Z'); // 18:00 in Sydney
    expect(nextOpening(recipient, ['Australia/Sydney'], friday)?.toISOString()).toBe(
      '2026-11-29T22:00:00.000Z',
    );
  });

  test('across a daylight-saving change: the wall-clock opening in the new offset', () => {
    // New York leaves DST on Sunday 2026-11-01: Friday 09:00 EDT is 13:00 UTC, Monday 09:00 EST is 14:00 UTC.
    const window = { ...recipient, timezone: 'America/New_York' };
    const fridayEvening = new Date('2026-10-30T22:00:00Z');
    expect(nextOpening(window, ['America/New_York'], fridayEvening)?.toISOString()).toBe(
      '2026-11-02T14:00:00.000Z',
    );
  });
});
