import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { displayCredits, UNITS_PER_CREDIT, unitsToCredits } from '../../functions/billing/credits.js';
import { toItem } from '../../functions/analytics/service.js';
import type { Call } from '../../functions/calling/entities.js';
import { toCallSummary } from '../../functions/calling/call-log.js';
import { progressView, type Progress } from '../../functions/campaigns/service.js';
import {
  includedUnits,
  periodGrantKey,
  periodOf,
  planFromLookupKey,
  PLANS,
  priceLookupKey,
} from '../../functions/billing/plans.js';
import {
  billedSeconds,
  callUnits,
  evaluationUnits,
  memoriesUnits,
  METERING_RULES,
  smsUnits,
} from '../../functions/billing/rules.js';
import { smsSegmentation } from '../../functions/billing/sms-segments.js';

/** Credits of a number of units, exactly (the ledger keeps units; 1 credit = 60 units). */
const credits = (units: number) => units / UNITS_PER_CREDIT;

describe('call handling: 20 credits per minute, rounded at second level', () => {
  test.each([
    [1, 20, 1 / 3],
    [59, 1180, 59 / 3],
    [60, 1200, 20],
    [61, 1220, 61 / 3],
    [120, 2400, 40],
    [1800, 36000, 600],
  ])('%i s costs %i units', (seconds, units, creditCount) => {
    expect(callUnits(seconds)).toBe(units);
    expect(credits(callUnits(seconds))).toBeCloseTo(creditCount, 10);
  });

  test('a started second is billed; nothing is billed for no time', () => {
    expect(callUnits(0)).toBe(0);
    expect(callUnits(-5)).toBe(0);
    expect(callUnits(Number.NaN)).toBe(0);
    expect(billedSeconds(0.2)).toBe(1);
    expect(billedSeconds(59.01)).toBe(60);
    expect(callUnits(59.5)).toBe(callUnits(60));
  });

  test('every whole number of seconds is an exact whole number of units, additive over seconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 100_000 }), (a, b) => {
        expect(Number.isInteger(callUnits(a))).toBe(true);
        expect(callUnits(a) + callUnits(b)).toBe(callUnits(a + b));
        expect(callUnits(a * 60)).toBe(a * 20 * UNITS_PER_CREDIT);
      }),
    );
  });
});

describe('conversation memories: +5 credits per call minute when used', () => {
  test.each([
    [1, 5],
    [59, 295],
    [60, 300],
    [61, 305],
  ])('%i s of memories costs %i units', (seconds, units) => {
    expect(memoriesUnits(seconds)).toBe(units);
  });

  test('a minute with memories costs 25 credits in all, without them 20', () => {
    expect(credits(callUnits(60) + memoriesUnits(60))).toBe(25);
    expect(credits(callUnits(60))).toBe(20);
  });
});

describe('SMS: 5 credits per segment, GSM-7 or UCS-2', () => {
  test.each([
    ['160 GSM-7 characters', 'a'.repeat(160), 'GSM-7', 1],
    ['161 GSM-7 characters', 'a'.repeat(161), 'GSM-7', 2],
    ['306 GSM-7 characters (2 × 153)', 'a'.repeat(306), 'GSM-7', 2],
    ['307 GSM-7 characters', 'a'.repeat(307), 'GSM-7', 3],
    ['70 UCS-2 characters', 'ж'.repeat(70), 'UCS-2', 1],
    ['71 UCS-2 characters', 'ж'.repeat(71), 'UCS-2', 2],
    ['one emoji makes it UCS-2', `${'a'.repeat(69)}😀`, 'UCS-2', 2],
    ['80 euro signs (GSM-7 extension: 2 septets each)', '€'.repeat(80), 'GSM-7', 1],
    ['81 euro signs', '€'.repeat(81), 'GSM-7', 2],
  ])('%s', (_label, text, encoding, segments) => {
    const segmentation = smsSegmentation(text);
    expect(segmentation.encoding).toBe(encoding);
    expect(segmentation.segments).toBe(segments);
    expect(credits(smsUnits(segmentation.segments))).toBe(5 * segments);
  });

  test('a 2-segment message costs 10 credits, a 3-segment one 15 (docs/billing.md)', () => {
    expect(credits(smsUnits(2))).toBe(10);
    expect(credits(smsUnits(3))).toBe(15);
  });

  test('an SMS without text is refused', () => {
    expect(() => smsSegmentation('')).toThrow('an SMS needs text');
  });
});

describe('evaluation run: 20 credits', () => {
  test('is 20 credits, charged whole', () => {
    expect(credits(evaluationUnits())).toBe(20);
  });
});

describe('units and credits', () => {
  test('every rule is a whole number of units per quantity', () => {
    for (const rule of Object.values(METERING_RULES)) {
      expect(Number.isInteger(rule.unitsPerQuantity)).toBe(true);
      const perRule = rule.per === 'minute' ? 60 : 1;
      expect((rule.unitsPerQuantity * perRule) / UNITS_PER_CREDIT).toBe(rule.credits);
    }
  });

  test('display rounds to 2 decimals; the units stay exact', () => {
    expect(displayCredits(1180)).toBe(19.67);
    expect(displayCredits(-20)).toBe(-0.33);
    expect(unitsToCredits(30_000)).toBe(500);
  });
});

describe('credits in responses: 2 decimals, the figure the ledger shows', () => {
  // 80 units are 1.3333… credits (60 units a credit): the ledger shows 1.33.
  const units = 80;

  test("a call's credits", () => {
    const call = { callId: 'call_1', workspaceId: 'ws_1', agentId: 'agt_1', chargedUnits: units } as Call;
    expect(toCallSummary(call).credits).toBe(1.33);
  });

  test("a campaign's progress", () => {
    const progress = { creditsUnits: units } as Progress;
    expect(progressView('cmp_1', progress).credits_used).toBe(1.33);
  });

  test('an analytics item', () => {
    const totals = { calls: 1, answered: 1, completed: 1, failed: 0, seconds: 80, units };
    expect(
      toItem('2026-11-27', {
        ...totals,
        positive: 0,
        neutral: 0,
        negative: 0,
        analysed: 0,
        successful: 0,
        handoffs: 0,
        latency: [],
      }).credits,
    ).toBe(1.33);
  });
});

describe('plans', () => {
  test('Free has 500 credits a month and turns agents off when they run out; the 500 AUD tier has 64,000', () => {
    expect(PLANS.free.includedCredits).toBe(500);
    expect(PLANS.free.suspendAgentsWhenExhausted).toBe(true);
    const tier = Object.values(PLANS).find((plan) => plan.monthlyPriceAud === 500);
    expect(tier?.includedCredits).toBe(64_000);
    expect(tier?.suspendAgentsWhenExhausted).toBe(false);
    expect(includedUnits('free')).toBe(30_000);
  });

  test('paid plans map to and from their provider price lookup keys', () => {
    expect(planFromLookupKey(priceLookupKey('growth'))).toBe('growth');
    expect(planFromLookupKey('voice-agent-plan-free')).toBeUndefined();
    expect(planFromLookupKey('something-else')).toBeUndefined();
    expect(planFromLookupKey(null)).toBeUndefined();
  });

  test('periods are UTC calendar months, across the year end', () => {
    expect(periodOf(new Date('2026-12-31T23:59:59.999Z'))).toEqual({
      start: '2026-12-01T00:00:00.000Z',
      end: '2027-01-01T00:00:00.000Z',
    });
    expect(periodOf(new Date('2027-01-01T00:00:00.000Z')).start).toBe('2027-01-01T00:00:00.000Z');
    expect(periodGrantKey('2027-01-01T00:00:00.000Z')).toBe('grant:period:2027-01-01');
  });
});
