import * as z from 'zod';
import { pageOf } from '../platform/pagination.js';
import { LEDGER_KINDS, PLAN_IDS, SUBSCRIPTION_STATUSES, USAGE_KINDS } from './model.js';
import { PAID_PLAN_IDS } from './plans.js';
import { schemaOnFirstUse } from '../platform/first-use.js';

/**
 * Request and response shapes of the billing routes. Request bodies are strict: an unknown field is
 * 422 `extra_forbidden` and changes nothing.
 */

export const MIN_CREDIT_PURCHASE = 100;
export const MAX_CREDIT_PURCHASE = 1_000_000;

/** Where the provider's hosted pages send the user back to (http only for the local machine). */
const returnUrl = () =>
  z
    .string()
    .max(2048)
    .refine(
      (value) => {
        try {
          const url = new URL(value);
          return (
            url.protocol === 'https:' ||
            (url.protocol === 'http:' && ['127.0.0.1', 'localhost'].includes(url.hostname))
          );
        } catch {
          return false;
        }
      },
      { message: 'return_url must be an https URL' },
    );

// ── Requests ───────────────────────────────────────────────────────────────────────────────────────

export const SubscriptionBody = schemaOnFirstUse(() =>
  z.strictObject({
    plan: z.enum(PAID_PLAN_IDS),
    return_url: returnUrl().optional(),
  }),
);
export type SubscriptionBody = z.infer<typeof SubscriptionBody>;

export const CreditsBody = schemaOnFirstUse(() =>
  z.strictObject({
    quantity: z.number().int().min(MIN_CREDIT_PURCHASE).max(MAX_CREDIT_PURCHASE),
    return_url: returnUrl().optional(),
  }),
);
export type CreditsBody = z.infer<typeof CreditsBody>;

export const PortalSessionBody = schemaOnFirstUse(() =>
  z.strictObject({ return_url: returnUrl().optional() }).optional(),
);
export type PortalSessionBody = z.infer<typeof PortalSessionBody>;

// ── Responses (documentation: the OpenAPI document is generated from these) ──────────────────────

const Features = schemaOnFirstUse(() =>
  z.object({
    api_keys: z.boolean(),
    workflows: z.boolean(),
    batch_outbound: z.boolean(),
    integrations: z.boolean(),
  }),
);

export const PlanResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.enum(PLAN_IDS),
    name: z.string(),
    monthly_price_aud: z.number(),
    included_credits: z.number(),
    included_numbers: z.number(),
    features: Features,
    agents_turn_off_when_credits_run_out: z.boolean(),
  }),
);

export const UsageResponse = schemaOnFirstUse(() =>
  z.object({
    kind: z.enum(USAGE_KINDS),
    name: z.string(),
    quantity: z.number(),
    quantity_unit: z.enum(['second', 'segment', 'run']),
    credits: z.number(),
  }),
);

export const BillingResponse = schemaOnFirstUse(() =>
  z.object({
    organisation_id: z.string(),
    plan: z.enum(PLAN_IDS),
    plan_details: PlanResponse,
    /** A plan asked for and not confirmed by the payment provider yet. */
    requested_plan: z.enum(PLAN_IDS).nullable(),
    status: z.enum(SUBSCRIPTION_STATUSES),
    in_good_standing: z.boolean(),
    credit_balance: z.number(),
    balance_units: z.number(),
    units_per_credit: z.number(),
    agents_suspended: z.boolean(),
    period: z.object({ start: z.string(), end: z.string() }),
    included_credits_this_period: z.number(),
    credits_used_this_period: z.number(),
    usage: z.array(UsageResponse),
  }),
);

export const LedgerEntryResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    kind: z.enum(LEDGER_KINDS),
    credits: z.number(),
    units: z.number(),
    reason: z.string(),
    source: z.string(),
    usage_kind: z.enum(USAGE_KINDS).nullable(),
    quantity: z.number().nullable(),
    created_at: z.string(),
  }),
);
export const LedgerPage = pageOf(LedgerEntryResponse);

export const SubscriptionResponse = schemaOnFirstUse(() =>
  z.object({
    organisation_id: z.string(),
    plan: z.enum(PLAN_IDS),
    requested_plan: z.enum(PLAN_IDS).nullable(),
    status: z.enum(SUBSCRIPTION_STATUSES),
    /** The provider's hosted checkout, when a new subscription needs a payment method; else null. */
    checkout_url: z.string().nullable(),
  }),
);

export const CancelSubscriptionResponse = schemaOnFirstUse(() =>
  z.object({
    organisation_id: z.string(),
    plan: z.enum(PLAN_IDS),
    status: z.enum(SUBSCRIPTION_STATUSES),
    cancel_requested: z.boolean(),
  }),
);

export const PortalSessionResponse = schemaOnFirstUse(() => z.object({ url: z.string() }));

export const CreditPurchaseResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    purchase_id: z.string(),
    quantity: z.number(),
    amount_aud: z.number(),
    currency: z.string(),
    status: z.literal('pending'),
    checkout_url: z.string(),
  }),
);

export const PricingModelResponse = schemaOnFirstUse(() =>
  z.object({
    currency: z.string(),
    units_per_credit: z.number(),
    plans: z.array(PlanResponse),
    extra_credits: z.object({ price_aud: z.number(), min_quantity: z.number(), max_quantity: z.number() }),
    extra_phone_number: z.object({ price_aud_per_month: z.number() }),
    credits_renew: z.string(),
    metering_rules: z.array(
      z.object({
        kind: z.enum(USAGE_KINDS),
        name: z.string(),
        credits: z.number(),
        per: z.enum(['minute', 'segment', 'run']),
        billed_in: z.enum(['second', 'segment', 'run']),
        units_per_quantity: z.number(),
        description: z.string(),
      }),
    ),
    free_of_charge: z.array(z.string()),
  }),
);
