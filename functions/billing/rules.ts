import { UNITS_PER_CREDIT } from './credits.js';
import type { UsageKind } from './model.js';

/**
 * The metering rules of docs/billing.md, declared once: the meter (metering.ts) charges with them and
 * the public pricing model (`GET /api/v1/payment/pricing-model`) is generated from them, so the two
 * cannot disagree. Every rule is pure arithmetic on integer units (1 credit = 60 units).
 */
export interface MeteringRule {
  kind: UsageKind;
  name: string;
  /** Credits per `per`. */
  credits: number;
  per: 'minute' | 'segment' | 'run';
  /** What the quantity of a charge counts: billed seconds, SMS segments or runs. */
  quantityUnit: 'second' | 'segment' | 'run';
  /** Units charged per quantity unit (an integer: the unit is fine enough for every rule). */
  unitsPerQuantity: number;
  description: string;
}

function rule(input: Omit<MeteringRule, 'unitsPerQuantity'>): MeteringRule {
  const perQuantity = input.per === 'minute' ? 60 : 1;
  const unitsPerQuantity = (input.credits * UNITS_PER_CREDIT) / perQuantity;
  if (!Number.isInteger(unitsPerQuantity))
    throw new Error(`rule ${input.kind} is not a whole number of units`);
  return { ...input, unitsPerQuantity };
}

export const METERING_RULES: Record<UsageKind, MeteringRule> = {
  call: rule({
    kind: 'call',
    name: 'Call handling',
    credits: 20,
    per: 'minute',
    quantityUnit: 'second',
    description: '20 credits per minute, rounded at second level: every started second costs 1/3 credit.',
  }),
  memories: rule({
    kind: 'memories',
    name: 'Conversation memories',
    credits: 5,
    per: 'minute',
    quantityUnit: 'second',
    description:
      '+5 credits per call minute when conversation memories are used in the call, rounded at second level.',
  }),
  sms: rule({
    kind: 'sms',
    name: 'SMS (campaigns and direct replies)',
    credits: 5,
    per: 'segment',
    quantityUnit: 'segment',
    description:
      '5 credits per segment. GSM-7 text: 160 characters in one segment, 153 per segment when longer; ' +
      'any other character makes the message UCS-2: 70 in one segment, 67 per segment when longer.',
  }),
  evaluation: rule({
    kind: 'evaluation',
    name: 'Evaluation run',
    credits: 20,
    per: 'run',
    quantityUnit: 'run',
    description: '20 credits per run, charged when the run starts and not refunded when it is cancelled.',
  }),
};

/** What is never charged. */
export const FREE_OF_CHARGE = ['recordings', 'transcripts', 'contact creation', 'contact updates'] as const;

/** Billed seconds of a call: a started second counts (rounding at second level), never negative. */
export function billedSeconds(durationSeconds: number): number {
  if (!Number.isFinite(durationSeconds) || durationSeconds <= 0) return 0;
  return Math.ceil(durationSeconds);
}

export const callUnits = (durationSeconds: number): number =>
  billedSeconds(durationSeconds) * METERING_RULES.call.unitsPerQuantity;
export const memoriesUnits = (durationSeconds: number): number =>
  billedSeconds(durationSeconds) * METERING_RULES.memories.unitsPerQuantity;

export const smsUnits = (segments: number): number => segments * METERING_RULES.sms.unitsPerQuantity;
export const evaluationUnits = (): number => METERING_RULES.evaluation.unitsPerQuantity;
