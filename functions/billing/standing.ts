import { getBillingAccount } from './ledger.js';

/**
 * Whether billing is in good standing: false while a subscription payment has failed (past due).
 * The post-call pipeline asks before every charged action (owner SMS, caller SMS, email) and holds
 * the action back while it is false; calls and free actions do not ask. An organisation without a
 * billing account is not in good standing.
 */
export async function isInGoodStanding(organisationId: string): Promise<boolean> {
  const account = await getBillingAccount(organisationId, { consistent: true });
  return account !== null && account.subscriptionStatus !== 'past_due';
}

/**
 * What billing tells the domains above it when an organisation's standing changes. Billing imports
 * none of them (docs/architecture.md): the composition point that feeds billing the provider's events
 * (the payments webhook handler) passes the listener in, e.g. post-call's `releaseHeldActions`.
 */
export interface StandingListener {
  /** The organisation left past_due (paid again, or canceled): work held back meanwhile may run. */
  goodStandingRestored(organisationId: string): Promise<unknown>;
}
