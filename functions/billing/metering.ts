import { displayCredits } from './credits.js';
import type { PlanId } from './model.js';
import {
  getBillingAccount,
  recordMovement,
  writeLedger,
  writeLedgerReporting,
  type EntryDraft,
  type MovementResult,
  type TransactionCommit,
} from './ledger.js';
import { billedSeconds, callUnits, evaluationUnits, memoriesUnits, smsUnits } from './rules.js';
import type { SmsSegmentation } from './sms-segments.js';
import { PLANS } from './plans.js';
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
    // The call is marked counted in the same transaction, on condition (call-stats.ts): once.
    causeGuarded: input.alsoWrite !== undefined,
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

export type SmsChargeOutcome =
  | { status: 'charged'; units: number }
  /** Charged already under this SMS's cause (a redelivery): nothing changed now. */
  | { status: 'duplicate'; units: number }
  /** The balance does not cover it: nothing written. */
  | { status: 'insufficient'; units: number }
  /** One of the caller's items was refused (its cancellation code, in order): nothing written. */
  | { status: 'refused'; units: number; codes: string[] };

/**
 * Charges one SMS (5 credits a segment, prepaid, once per SMS id) in ONE transaction with the
 * caller's own items (`alsoWrite`: the message created, its recipient claimed, a condition that the
 * number is not suppressed…): the charge and the claim happen together or not at all. `plan` is the
 * plan the caller read on the account (a consistent read): the write expects it, and a plan that does
 * not switch agents off when credits run out needs no suspension check after the charge (the read it
 * costs is saved); without it the check is made as for any movement.
 */
export async function chargeSmsWith(input: {
  organisationId: string;
  smsId: string;
  text: string;
  alsoWrite: TransactionCommit[];
  plan?: PlanId;
  /** `alsoWrite` creates the message on condition (it cannot be charged twice): LedgerWrite's. */
  causeGuarded?: boolean;
}): Promise<SmsChargeOutcome> {
  const { smsSegmentation } = await import('./sms-segments.js');
  const segmentation = smsSegmentation(input.text);
  const units = smsUnits(segmentation.segments);
  let plan = input.plan;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const outcome = await writeLedgerReporting({
      organisationId: input.organisationId,
      entries: [
        {
          kind: 'charge',
          amountUnits: -units,
          reason: `SMS ${input.smsId}: ${segmentation.segments} segment${segmentation.segments === 1 ? '' : 's'} (${segmentation.encoding})`,
          sourceKey: `sms:${input.smsId}`,
          usage: { kind: 'sms', quantity: segmentation.segments },
        },
      ],
      requireFunds: true,
      ...(plan ? { expect: { plan } } : {}),
      alsoWrite: input.alsoWrite,
      ...(input.causeGuarded ? { causeGuarded: true } : {}),
    });
    if (outcome.status === 'duplicate') return { status: 'duplicate', units };
    if (outcome.status === 'refused') return { status: 'refused', units, codes: outcome.codes };
    if (outcome.status === 'applied') {
      if (!plan || PLANS[plan].suspendAgentsWhenExhausted) await reconcileAgents(input.organisationId);
      return { status: 'charged', units };
    }
    // Refused by the account: no account, short of funds, or the plan changed since it was read.
    const account = await getBillingAccount(input.organisationId, { consistent: true });
    if (!account) throw new Error(`no billing account for ${input.organisationId}`);
    if (account.balanceUnits < units) return { status: 'insufficient', units };
    plan = account.plan;
  }
  throw new Error(`SMS ${input.smsId}: the billing account kept changing; try again`);
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
