import { isConditionFailure } from '../platform/table.js';
import { BillingAccountEntity, type BillingAccount } from './entities.js';
import { PLANS } from './plans.js';

/** Whether the organisation's agents must be off: a plan that suspends them, with no credits left. */
export const shouldSuspendAgents = (account: Pick<BillingAccount, 'plan' | 'balanceUnits'>): boolean =>
  PLANS[account.plan].suspendAgentsWhenExhausted && account.balanceUnits <= 0;

const MAX_ROUNDS = 5;

/**
 * Brings the account's `agentsSuspended` flag in line with its credits: a Free organisation that spent
 * its last credit has its agents switched off (`answering_calls` false, start-call 402, inbound calls
 * refused); when credits come back (a purchase, the monthly grant, a paid plan) they are on again.
 *
 * The flag is the one record of the suspension: the agents domain reads it (`agentsSuspended`) when it
 * shows an agent, and the call paths read it with the balance. Billing sits below agents and never
 * writes agents (docs/architecture.md). The flag is flipped with a condition on what was read; a
 * movement that lands in between makes the condition fail and the decision is taken again.
 */
export async function reconcileAgents(organisationId: string): Promise<{ suspended: boolean } | undefined> {
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const { data: account } = await BillingAccountEntity.get({ organisationId }).go({ consistent: true });
    if (!account) return undefined;
    const suspended = account.agentsSuspended ?? false;
    const wanted = shouldSuspendAgents(account);
    if (wanted === suspended) return { suspended };
    const flipped = await BillingAccountEntity.patch({ organisationId })
      .set({ agentsSuspended: wanted })
      .where((attr, op) =>
        [
          suspended
            ? op.eq(attr.agentsSuspended, true)
            : `(${op.notExists(attr.agentsSuspended)} OR ${op.eq(attr.agentsSuspended, false)})`,
          op.eq(attr.balanceUnits, account.balanceUnits),
          op.eq(attr.plan, account.plan),
        ].join(' AND '),
      )
      .go()
      .then(
        () => true,
        (error: unknown) => {
          if (isConditionFailure(error)) return false;
          throw error;
        },
      );
    if (flipped) return { suspended: wanted };
    // The account moved meanwhile: decide again on a fresh read.
  }
  return undefined;
}

/**
 * Whether billing has switched the organisation's agents off (a Free plan out of credits). Agents show
 * it as `suspended_by_billing` and `answering_calls` false; an agent the user switched off stays off
 * when billing switches them back on.
 */
export async function agentsSuspended(organisationId: string): Promise<boolean> {
  const { data: account } = await BillingAccountEntity.get({ organisationId }).go({ consistent: true });
  return account?.agentsSuspended ?? false;
}
