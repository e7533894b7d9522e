import { describe, expect, it } from '@jest/globals';
import { callAdds, localDay } from '../../functions/calling/call-stats.js';

/** The day a call is counted on: its creation instant's calendar day in the workspace's time zone. */
describe('analytics day boundaries', () => {
  it('the workspace time zone decides the day', () => {
    // 13:30 UTC on 1 March is already 2 March in Sydney (UTC+11 in summer) and still 1 March in New York.
    expect(localDay('2026-03-01T13:30:00Z', 'Australia/Sydney')).toBe('2026-03-02');
    expect(localDay('2026-03-01T13:30:00Z', 'America/New_York')).toBe('2026-03-01');
    expect(localDay('2026-03-01T23:59:59Z', 'UTC')).toBe('2026-03-01');
    // Half-hour offsets: India is UTC+5:30.
    expect(localDay('2026-03-01T18:29:00Z', 'Asia/Kolkata')).toBe('2026-03-01');
    expect(localDay('2026-03-01T18:30:00Z', 'Asia/Kolkata')).toBe('2026-03-02');
  });

  it('an unknown time zone falls back to UTC', () => {
    expect(localDay('2026-03-01T23:00:00Z', 'Not/AZone')).toBe('2026-03-01');
  });

  it('a call adds to its final status: calls, answered, seconds and units', () => {
    expect(callAdds({ status: 'completed', connectedAt: 'x', durationSeconds: 61.4 }, 1230)).toEqual({
      completedCalls: 1,
      completedAnswered: 1,
      completedSeconds: 61,
      completedUnits: 1230,
    });
    expect(callAdds({ status: 'failed' }, 0)).toEqual({
      failedCalls: 1,
      failedAnswered: 0,
      failedSeconds: 0,
      failedUnits: 0,
    });
  });
});
