import type { z } from 'zod';
import {
  CURRENCY,
  centsToAud,
  displayCredits,
  EXTRA_CREDIT_PRICE_CENTS,
  EXTRA_NUMBER_PRICE_CENTS,
  UNITS_PER_CREDIT,
} from './credits.js';
import { PLAN_IDS, USAGE_KINDS, type BillingAccount, type LedgerEntry } from './entities.js';
import { USAGE_COUNTERS } from './ledger.js';
import { includedUnits, PLANS, type Plan } from './plans.js';
import { FREE_OF_CHARGE, METERING_RULES } from './rules.js';
import {
  MAX_CREDIT_PURCHASE,
  MIN_CREDIT_PURCHASE,
  type BillingResponse,
  type LedgerEntryResponse,
  type PlanResponse,
  type PricingModelResponse,
} from './schemas.js';

export function toPlanResponse(plan: Plan): z.infer<typeof PlanResponse> {
  return {
    id: plan.id,
    name: plan.name,
    monthly_price_aud: plan.monthlyPriceAud,
    included_credits: plan.includedCredits,
    included_numbers: plan.includedNumbers,
    features: {
      api_keys: plan.features.apiKeys,
      workflows: plan.features.workflows,
      batch_outbound: plan.features.batchOutbound,
      integrations: plan.features.integrations,
    },
    agents_turn_off_when_credits_run_out: plan.suspendAgentsWhenExhausted,
  };
}

export function toBillingResponse(account: BillingAccount): z.infer<typeof BillingResponse> {
  return {
    organisation_id: account.organisationId,
    plan: account.plan,
    plan_details: toPlanResponse(PLANS[account.plan]),
    requested_plan: account.requestedPlan ?? null,
    status: account.subscriptionStatus,
    in_good_standing: account.subscriptionStatus !== 'past_due',
    credit_balance: displayCredits(account.balanceUnits),
    balance_units: account.balanceUnits,
    units_per_credit: UNITS_PER_CREDIT,
    agents_suspended: account.agentsSuspended ?? false,
    period: { start: account.periodStart, end: account.periodEnd },
    included_credits_this_period: displayCredits(account.periodIncludedUnits ?? includedUnits(account.plan)),
    credits_used_this_period: displayCredits(account.spentUnits ?? 0),
    usage: USAGE_KINDS.map((kind) => {
      const counters = USAGE_COUNTERS[kind];
      return {
        kind,
        name: METERING_RULES[kind].name,
        quantity: account[counters.quantity] ?? 0,
        quantity_unit: METERING_RULES[kind].quantityUnit,
        credits: displayCredits(account[counters.units] ?? 0),
      };
    }),
  };
}

export function toLedgerEntryResponse(entry: LedgerEntry): z.infer<typeof LedgerEntryResponse> {
  return {
    id: entry.entryId,
    kind: entry.kind,
    credits: displayCredits(entry.amountUnits),
    units: entry.amountUnits,
    reason: entry.reason,
    source: entry.sourceKey,
    usage_kind: entry.usageKind ?? null,
    quantity: entry.quantity ?? null,
    created_at: entry.createdAt,
  };
}

/** The public pricing model, generated from the same plans and rules the meter charges with. */
export function pricingModel(): z.infer<typeof PricingModelResponse> {
  return {
    currency: CURRENCY.toUpperCase(),
    units_per_credit: UNITS_PER_CREDIT,
    plans: PLAN_IDS.map((id) => toPlanResponse(PLANS[id])),
    extra_credits: {
      price_aud: centsToAud(EXTRA_CREDIT_PRICE_CENTS),
      min_quantity: MIN_CREDIT_PURCHASE,
      max_quantity: MAX_CREDIT_PURCHASE,
    },
    extra_phone_number: { price_aud_per_month: centsToAud(EXTRA_NUMBER_PRICE_CENTS) },
    credits_renew:
      'monthly, on the first day of each calendar month (UTC): unused included credits expire and the plan grants ' +
      'its included credits again; purchased credits do not expire',
    metering_rules: USAGE_KINDS.map((kind) => {
      const rule = METERING_RULES[kind];
      return {
        kind,
        name: rule.name,
        credits: rule.credits,
        per: rule.per,
        billed_in: rule.quantityUnit,
        units_per_quantity: rule.unitsPerQuantity,
        description: rule.description,
      };
    }),
    free_of_charge: [...FREE_OF_CHARGE],
  };
}
