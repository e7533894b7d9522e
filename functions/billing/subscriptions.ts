import { Service } from '../platform/entity.js';
import { OrganisationEntity, OrgMemberEntity } from '../access/entities.js';
import { clock } from '../platform/clock.js';
import { config } from '../platform/config.js';
import { conflict, notFound } from '../platform/errors.js';
import { logger } from '../platform/logger.js';
import { entityConfig } from '../platform/table.js';
import { paymentsProvider, type ProviderSubscriptionStatus } from '../providers/payments/index.js';
import {
  BillingAccountEntity,
  PaymentCustomerEntity,
  shardOf,
  type BillingAccount,
  type PlanId,
  type SubscriptionStatus,
} from './entities.js';
import { getBillingAccount, writeLedger } from './ledger.js';
import { isLive, planChangeCredits } from './plan-changes.js';
import { periodOf, PLANS, providerPlan, type PaidPlanId } from './plans.js';
import type { StandingListener } from './standing.js';
import { reconcileAgents } from './suspension.js';

export const ORGANISATION_NOT_FOUND = 'Organisation not found';
export const NO_SUBSCRIPTION = 'No active subscription';

export { isLive } from './plan-changes.js';

const customerService = new Service(
  { billingAccount: BillingAccountEntity, paymentCustomer: PaymentCustomerEntity },
  entityConfig(),
);

async function requireAccount(organisationId: string): Promise<BillingAccount> {
  const account = await getBillingAccount(organisationId, { consistent: true });
  if (!account) throw notFound(ORGANISATION_NOT_FOUND);
  return account;
}

const defaultReturnUrl = (): string => config().PUBLIC_BASE_URL;

/**
 * The organisation's customer at the payment provider, created on first use (named after the
 * organisation, billed to its owner's email) and remembered on the account with a customer →
 * organisation record, in one transaction.
 */
export async function ensureCustomer(
  organisationId: string,
): Promise<{ account: BillingAccount; customerId: string }> {
  const account = await requireAccount(organisationId);
  if (account.providerCustomerId) return { account, customerId: account.providerCustomerId };
  const { data: organisation } = await OrganisationEntity.get({ organisationId }).go();
  if (!organisation) throw notFound(ORGANISATION_NOT_FOUND);
  const { data: owner } = await OrgMemberEntity.get({
    organisationId,
    userId: organisation.ownerUserId,
  }).go();
  const { customerId } = await paymentsProvider().createCustomer({
    organisationId,
    name: organisation.name,
    email: owner?.email ?? '',
  });
  const createdAt = clock.now().toISOString();
  const result = await customerService.transaction
    .write(({ billingAccount, paymentCustomer }) => [
      billingAccount
        .patch({ organisationId })
        .set({ providerCustomerId: customerId, updatedAt: createdAt })
        .where(
          (attr, op) =>
            `(${op.notExists(attr.providerCustomerId)} OR ${op.eq(attr.providerCustomerId, customerId)})`,
        )
        .commit(),
      paymentCustomer.put({ customerId, organisationId, createdAt }).commit(),
    ])
    .go();
  if (result.canceled) {
    // Another request recorded a customer first: use the one on the account.
    const current = await requireAccount(organisationId);
    if (!current.providerCustomerId)
      throw new Error(`could not record the payment customer of ${organisationId}`);
    return { account: current, customerId: current.providerCustomerId };
  }
  return { account: { ...account, providerCustomerId: customerId }, customerId };
}

async function setRequestedPlan(organisationId: string, plan: PlanId | undefined): Promise<void> {
  const update = BillingAccountEntity.patch({ organisationId });
  await (plan ? update.set({ requestedPlan: plan }) : update.remove(['requestedPlan'])).go({
    response: 'none',
  });
}

export interface SubscriptionRequest {
  organisationId: string;
  plan: PlanId;
  requestedPlan: PlanId | null;
  subscriptionStatus: SubscriptionStatus;
  /** Set when a new subscription needs the customer at the provider's checkout. */
  checkoutUrl: string | null;
}

/**
 * Subscribes to a paid plan, or moves a live subscription to another one, through the payment port.
 * Nothing changes here but the requested plan: the provider confirms by webhook, and only then does
 * the plan change (and its included credits arrive). A new subscription gets a checkout URL; locally
 * the simulated customer pays at once (see `waitForSubscriptionActive`).
 */
export async function startSubscription(
  organisationId: string,
  plan: PaidPlanId,
  options: { returnUrl?: string } = {},
): Promise<SubscriptionRequest> {
  const account = await requireAccount(organisationId);
  const provider = paymentsProvider();
  const live = isLive(account.subscriptionStatus) && account.providerSubscriptionId;
  if (live && account.plan === plan) throw conflict(`Already subscribed to the ${PLANS[plan].name} plan`);
  await setRequestedPlan(organisationId, plan);
  try {
    if (live) {
      await provider.changeSubscriptionPlan({
        subscriptionId: account.providerSubscriptionId!,
        organisationId,
        plan: providerPlan(plan),
      });
      return {
        organisationId,
        plan: account.plan,
        requestedPlan: plan,
        subscriptionStatus: account.subscriptionStatus,
        checkoutUrl: null,
      };
    }
    const { customerId } = await ensureCustomer(organisationId);
    const checkout = await provider.createSubscriptionCheckout({
      customerId,
      organisationId,
      plan: providerPlan(plan),
      returnUrl: options.returnUrl ?? defaultReturnUrl(),
      // Subscription cycles start on the first of the month, as the credit periods do.
      cycleAnchor: Math.floor(new Date(periodOf(clock.now()).end).getTime() / 1000),
    });
    return {
      organisationId,
      plan: account.plan,
      requestedPlan: plan,
      subscriptionStatus: account.subscriptionStatus,
      checkoutUrl: checkout.url,
    };
  } catch (error) {
    await setRequestedPlan(organisationId, account.requestedPlan);
    throw error;
  }
}

/** Ends the live subscription through the payment port; the provider's webhook moves the account to Free. */
export async function cancelSubscription(organisationId: string): Promise<BillingAccount> {
  const account = await requireAccount(organisationId);
  if (!isLive(account.subscriptionStatus) || !account.providerSubscriptionId) throw conflict(NO_SUBSCRIPTION);
  await paymentsProvider().cancelSubscription({ subscriptionId: account.providerSubscriptionId });
  return account;
}

/** A session of the provider's customer portal (payment method, invoices). */
export async function createPortalSession(
  organisationId: string,
  options: { returnUrl?: string } = {},
): Promise<{ url: string }> {
  const { customerId } = await ensureCustomer(organisationId);
  return paymentsProvider().createPortalSession({
    customerId,
    returnUrl: options.returnUrl ?? defaultReturnUrl(),
  });
}

/**
 * Resolves once the organisation is on `plan` with an active subscription (the provider's webhook
 * has arrived), or throws after `timeoutMs`. The CLI seed awaits it after `startSubscription`.
 */
export async function waitForSubscriptionActive(
  organisationId: string,
  plan: PaidPlanId,
  timeoutMs = 15_000,
): Promise<BillingAccount> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const account = await requireAccount(organisationId);
    if (account.plan === plan && account.subscriptionStatus === 'active') return account;
    if (Date.now() > deadline) {
      throw new Error(
        `${organisationId} is not on an active ${plan} subscription after ${timeoutMs} ms (plan ${account.plan}, ${account.subscriptionStatus})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export type SubscriptionChangeOutcome = 'applied' | 'stale' | 'ignored';

/**
 * Applies what the provider says about a subscription: plan and status (active, past_due, canceled →
 * back to Free). Events apply in the order they happened (an older one changes nothing). The credits
 * move with the plan in the same transaction (`planChangeCredits`, docs/billing.md "Plan changes"): a
 * plan with more included credits than this period has had grants the difference at once; when a live
 * subscription ends, its unused included credits expire and the Free plan's are granted, once per
 * subscription (purchased credits stay). Leaving past_due tells the listener (post-call releases the
 * actions it held back meanwhile).
 */
export async function applySubscriptionChange(
  input: {
    organisationId: string;
    customerId: string;
    subscriptionId: string;
    status: ProviderSubscriptionStatus;
    plan?: PaidPlanId;
    eventCreated: number;
  },
  listener: StandingListener,
): Promise<SubscriptionChangeOutcome> {
  const { organisationId, subscriptionId, eventCreated } = input;
  if (input.status === 'pending') return 'ignored';
  const status: SubscriptionStatus = input.status;
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const account = await getBillingAccount(organisationId, { consistent: true });
    if (!account) return 'ignored';
    if (account.statusEventAt !== undefined && eventCreated < account.statusEventAt) return 'stale';
    const current = account.providerSubscriptionId;
    // Events about another subscription than the live one (an old, ended one) change nothing.
    if (
      current &&
      current !== subscriptionId &&
      (isLive(account.subscriptionStatus) || status !== 'active')
    ) {
      if (status === 'active')
        logger.warn('a second live subscription: the first one stays in effect', {
          organisationId,
          current,
          subscriptionId,
        });
      return 'ignored';
    }
    if (!current && status !== 'active') return 'ignored';

    const plan: PlanId = status === 'canceled' ? 'free' : (input.plan ?? account.plan);
    if (plan === 'free' && status !== 'canceled') {
      logger.error('a live subscription without a known paid plan: nothing changed', {
        organisationId,
        subscriptionId,
      });
      return 'ignored';
    }
    const credits = planChangeCredits(account, { plan, status, subscriptionId });
    const outcome = await writeLedger({
      organisationId,
      entries: credits.entries,
      expect: {
        plan: account.plan,
        subscriptionStatus: account.subscriptionStatus,
        periodStart: account.periodStart,
        periodIncludedUnits: account.periodIncludedUnits ?? null,
        statusEventAtMost: eventCreated,
        // What expires was decided on this balance: a charge landing meanwhile makes us decide again.
        ...(credits.dependsOnBalance ? { balanceUnits: account.balanceUnits } : {}),
      },
      changes: {
        plan,
        subscriptionStatus: status,
        providerSubscriptionId: subscriptionId,
        providerCustomerId: input.customerId,
        statusEventAt: eventCreated,
        periodIncludedUnits: credits.periodIncludedUnits,
        clearRequestedPlan:
          account.requestedPlan !== undefined && (account.requestedPlan === plan || status === 'canceled'),
      },
      subscribed:
        status === 'canceled'
          ? { remove: { shard: shardOf(organisationId) } }
          : { put: { shard: shardOf(organisationId), subscriptionId, customerId: input.customerId } },
    });
    if (outcome.status === 'rejected') continue; // the account moved since it was read: decide again
    if (outcome.status === 'duplicate') {
      logger.warn('plan change credits already applied', {
        organisationId,
        plan,
        subscriptionId,
        periodStart: account.periodStart,
      });
      return 'ignored';
    }
    logger.info('subscription changed', {
      organisationId,
      // Not `from`/`to`: those keys are phone fields to the redactor (platform/logger.ts).
      from_plan: account.plan,
      from_status: account.subscriptionStatus,
      to_plan: plan,
      to_status: status,
    });
    if (account.subscriptionStatus === 'past_due' && status !== 'past_due')
      await listener.goodStandingRestored(organisationId);
    await reconcileAgents(organisationId);
    return 'applied';
  }
  throw new Error(`subscription change of ${organisationId} did not settle`);
}

/**
 * What an invoice says about standing: a failed payment of the live subscription makes it past due;
 * a paid invoice of a past-due subscription makes it active again.
 */
export async function applyInvoiceOutcome(
  input: {
    organisationId: string;
    customerId: string;
    subscriptionId?: string;
    outcome: 'paid' | 'payment_failed';
    eventCreated: number;
  },
  listener: StandingListener,
): Promise<SubscriptionChangeOutcome> {
  const account = await getBillingAccount(input.organisationId, { consistent: true });
  if (!account?.providerSubscriptionId || !isLive(account.subscriptionStatus)) return 'ignored';
  if (input.subscriptionId && input.subscriptionId !== account.providerSubscriptionId) return 'ignored';
  const status = input.outcome === 'paid' ? 'active' : 'past_due';
  if (account.subscriptionStatus === status) return 'ignored';
  return applySubscriptionChange(
    {
      organisationId: input.organisationId,
      customerId: input.customerId,
      subscriptionId: account.providerSubscriptionId,
      status,
      eventCreated: input.eventCreated,
    },
    listener,
  );
}

/** The organisation a provider customer belongs to (recorded when the customer was created). */
export async function organisationOfCustomer(customerId: string): Promise<string | undefined> {
  const { data } = await PaymentCustomerEntity.get({ customerId }).go();
  return data?.organisationId;
}
