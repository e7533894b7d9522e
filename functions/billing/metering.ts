import { displayCredits } from './credits.js';
import {
  recordMovement,
  writeLedger,
  type EntryDraft,
  type MovementResult,
  type TransactionCommit,
} from './ledger.js';
import { billedSeconds, callUnits, evaluationUnits, memoriesUnits, smsUnits } from './rules.js';
import type { SmsSegmentation } from './sms-segments.js';
import { reconcileAgents } from './suspension.js';

export {
  METERING_RULES,
  billedSeconds,
  callUnits,
  memoriesUnits,
  smsUnits,
  evaluationUnits,
} from './rules.js';

/**
 * The meter: applies the rules of rules.ts through the ledger, each charge under its idempotency id
 * (call id + kind, SMS id, evaluation id), so a retried or redelivered charge applies once.
 */

/**
 * Charges a finished call, and its conversation memories when used, in one ledger transaction. Usage
 * that already happened is charged in full, even below zero. Safe to call again: it applies once.
 * `alsoWrite`: the caller's items, written with the charge or not at all (nothing is written when
 * there is nothing to charge).
 */
export async function chargeCallUsage(input: {
  organisationId: string;
  callId: string;
  billableSeconds: number;
  memoriesUsed?: boolean;
  alsoWrite?: TransactionCommit[];
}): Promise<{ call: MovementResult; memories?: MovementResult; units: number }> {
  const seconds = billedSeconds(input.billableSeconds);
  const entries: EntryDraft[] = [];
  const units = callUnits(seconds);
  if (units > 0) {
    entries.push({
      kind: 'charge',
      amountUnits: -units,
      reason: `Call ${input.callId}: ${seconds} s`,
      sourceKey: `${input.callId}:call`,
      usage: { kind: 'call', quantity: seconds },
    });
  }
  const memoryUnits = input.memoriesUsed ? memoriesUnits(seconds) : 0;
  if (memoryUnits > 0) {
    entries.push({
      kind: 'charge',
      amountUnits: -memoryUnits,
      reason: `Conversation memories on call ${input.callId}: ${seconds} s`,
      sourceKey: `${input.callId}:memories`,
      usage: { kind: 'memories', quantity: seconds },
    });
  }
  if (entries.length === 0) return { call: { applied: false, duplicate: false }, units: 0 };
  const outcome = await writeLedger({
    organisationId: input.organisationId,
    entries,
    ...(input.alsoWrite ? { alsoWrite: input.alsoWrite } : {}),
  });
  if (outcome.status === 'rejected') throw new Error(`no billing account for ${input.organisationId}`);
  const applied = outcome.status === 'applied';
  const result = (i: number): MovementResult =>
    applied
      ? { applied: true, duplicate: false, entryId: outcome.entryIds[i] }
      : { applied: false, duplicate: true };
  if (applied) await reconcileAgents(input.organisationId);
  return {
    call: units > 0 ? result(0) : { applied: false, duplicate: false },
    memories: memoryUnits > 0 ? result(units > 0 ? 1 : 0) : undefined,
    units: units + memoryUnits,
  };
}

export interface SmsCharge extends MovementResult, SmsSegmentation {
  units: number;
  credits: number;
}

/**
 * Charges one SMS (campaign or direct reply): 5 credits per segment. Prepaid: a balance that does not
 * cover it is 402 `Insufficient credits` and nothing is charged. Idempotent per SMS id.
 */
export async function chargeSms(input: {
  organisationId: string;
  smsId: string;
  text: string;
}): Promise<SmsCharge> {
  const { smsSegmentation } = await import('./sms-segments.js');
  const segmentation = smsSegmentation(input.text);
  const units = smsUnits(segmentation.segments);
  const result = await recordMovement({
    organisationId: input.organisationId,
    kind: 'charge',
    amountUnits: -units,
    reason: `SMS ${input.smsId}: ${segmentation.segments} segment${segmentation.segments === 1 ? '' : 's'} (${segmentation.encoding})`,
    sourceKey: `sms:${input.smsId}`,
    requireFunds: true,
    usage: { kind: 'sms', quantity: segmentation.segments },
  });
  return { ...result, ...segmentation, units, credits: displayCredits(units) };
}

/**
 * Charges an evaluation run when it starts: 20 credits, never refunded (a cancelled run keeps its
 * charge). Prepaid (402 when the balance does not cover it); idempotent per evaluation id.
 */
export async function chargeEvaluationRun(input: {
  organisationId: string;
  evaluationId: string;
  /** The run's own items, created in the same transaction as its charge (no charge, no run). */
  alsoWrite?: TransactionCommit[];
}): Promise<MovementResult & { units: number }> {
  const units = evaluationUnits();
  const result = await recordMovement({
    organisationId: input.organisationId,
    kind: 'charge',
    amountUnits: -units,
    reason: `Evaluation run ${input.evaluationId}`,
    // The run's id (`evl_…`) is the cause: charged once per run, never refunded.
    sourceKey: input.evaluationId,
    requireFunds: true,
    usage: { kind: 'evaluation', quantity: 1 },
    alsoWrite: input.alsoWrite,
  });
  return { ...result, units };
}
