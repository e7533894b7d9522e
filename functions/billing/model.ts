/** The names billing's records and routes share (no table access here: the catalog imports them). */
export const PLAN_IDS = ['free', 'starter', 'growth', 'scale'] as const;
export type PlanId = (typeof PLAN_IDS)[number];

export const SUBSCRIPTION_STATUSES = ['none', 'active', 'past_due', 'canceled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** What a charge was for: one counter per kind on the account (usage of the period). */
export const USAGE_KINDS = ['call', 'memories', 'sms', 'evaluation'] as const;
export type UsageKind = (typeof USAGE_KINDS)[number];

export const LEDGER_KINDS = ['grant', 'purchase', 'charge', 'refund', 'expiry'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];
