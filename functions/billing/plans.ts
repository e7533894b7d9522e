import { creditsToUnits } from './credits.js';
import type { PlanId } from './model.js';

/**
 * The plans. Prices are AUD per month; included credits renew each monthly period (unused included
 * credits expire at renewal, purchased ones are kept). Feature gates are read by the services that own
 * the features (API keys, workflows, batch outbound, integrations) through `requireFeature`.
 */
export interface Plan {
  id: PlanId;
  name: string;
  monthlyPriceAud: number;
  includedCredits: number;
  /** Phone numbers included; each extra number costs EXTRA_NUMBER_PRICE_CENTS per monthly cycle. */
  includedNumbers: number;
  features: PlanFeatures;
  /** The Free plan turns agents off when its credits run out, instead of running a negative balance. */
  suspendAgentsWhenExhausted: boolean;
}

export interface PlanFeatures {
  apiKeys: boolean;
  workflows: boolean;
  batchOutbound: boolean;
  integrations: boolean;
}
export type Feature = keyof PlanFeatures;

export const PLANS: Record<PlanId, Plan> = {
  free: {
    id: 'free',
    name: 'Free',
    monthlyPriceAud: 0,
    includedCredits: 500,
    includedNumbers: 0,
    features: { apiKeys: true, workflows: false, batchOutbound: false, integrations: false },
    suspendAgentsWhenExhausted: true,
  },
  starter: {
    id: 'starter',
    name: 'Starter',
    monthlyPriceAud: 99,
    includedCredits: 10_000,
    includedNumbers: 1,
    features: { apiKeys: true, workflows: false, batchOutbound: true, integrations: false },
    suspendAgentsWhenExhausted: false,
  },
  growth: {
    id: 'growth',
    name: 'Growth',
    monthlyPriceAud: 500,
    includedCredits: 64_000,
    includedNumbers: 3,
    features: { apiKeys: true, workflows: true, batchOutbound: true, integrations: true },
    suspendAgentsWhenExhausted: false,
  },
  scale: {
    id: 'scale',
    name: 'Scale',
    monthlyPriceAud: 1_500,
    includedCredits: 220_000,
    includedNumbers: 10,
    features: { apiKeys: true, workflows: true, batchOutbound: true, integrations: true },
    suspendAgentsWhenExhausted: false,
  },
};

/** Plans bought through the payment provider (every plan but Free). */
export const PAID_PLAN_IDS = ['starter', 'growth', 'scale'] as const satisfies readonly PlanId[];
export type PaidPlanId = (typeof PAID_PLAN_IDS)[number];
export const isPaidPlan = (plan: string): plan is PaidPlanId =>
  (PAID_PLAN_IDS as readonly string[]).includes(plan);

/** The provider's price of a paid plan is found by this lookup key (no price ids in configuration). */
export const priceLookupKey = (plan: PaidPlanId): string => `voice-agent-plan-${plan}`;
export function planFromLookupKey(key: string | null | undefined): PaidPlanId | undefined {
  const plan = key?.startsWith('voice-agent-plan-') ? key.slice('voice-agent-plan-'.length) : undefined;
  return plan && isPaidPlan(plan) ? plan : undefined;
}

/** A paid plan as the payment port names it: its id and its price's lookup key. */
export const providerPlan = (plan: PaidPlanId) => ({ id: plan, priceLookupKey: priceLookupKey(plan) });

/** The plan of a provider's subscription: its price's lookup key, else the plan its metadata names. */
export function subscriptionPlan(reported: {
  priceLookupKey?: string;
  metadataPlan?: string;
}): PaidPlanId | undefined {
  return (
    planFromLookupKey(reported.priceLookupKey) ??
    (reported.metadataPlan !== undefined && isPaidPlan(reported.metadataPlan)
      ? reported.metadataPlan
      : undefined)
  );
}

export const includedUnits = (plan: PlanId): number => creditsToUnits(PLANS[plan].includedCredits);

/** The monthly period containing `at` (UTC calendar month). */
export function periodOf(at: Date): { start: string; end: string } {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { start: start.toISOString(), end: end.toISOString() };
}

/** The cause key of a period's included-credit grant: one grant per plan period. */
export const periodGrantKey = (periodStart: string): string => `grant:period:${periodStart.slice(0, 10)}`;
/** The cause key of the expiry of a period's unused included credits. */
export const periodExpiryKey = (periodStart: string): string => `expiry:period:${periodStart.slice(0, 10)}`;
/**
 * The cause key of the extra included credits granted when a plan with more credits starts mid-period:
 * once per plan, period and subscription (a new subscription after one ended is a new cause).
 */
export const planUpgradeGrantKey = (plan: PlanId, periodStart: string, subscriptionId: string): string =>
  `grant:plan:${plan}:${periodStart.slice(0, 10)}:${subscriptionId}`;
/** The cause key of the expiry of a plan's unused included credits when its subscription ended. */
export const subscriptionEndExpiryKey = (subscriptionId: string): string =>
  `expiry:subscription:${subscriptionId}`;
/** The cause key of the Free plan's included credits granted when a subscription ended. */
export const subscriptionEndGrantKey = (subscriptionId: string): string =>
  `grant:subscription-end:${subscriptionId}`;
