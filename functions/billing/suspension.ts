import { isConditionFailure } from '../platform/table.js';
import { setAnsweringForOrganisation } from '../agents/answering.js';
import { BillingAccountEntity, type BillingAccount } from './entities.js';
import { PLANS } from './plans.js';

/** Whether the organisation's agents must be off: a plan that suspends them, with no credits left. */
export const shouldSuspendAgents = (account: Pick<BillingAccount, 'plan' | 'balanceUnits'>): boolean =>
  PLANS[account.plan].suspendAgentsWhenExhausted && account.balanceUnits <= 0;

const MAX_ROUNDS = 5;

/**
 * Brings the organisation's agents in line with its credits: a Free organisation that spent its last
 * credit has every agent switched off (`answering_calls` false, start-call 402); when credits come
 * back (a purchase, the monthly grant, a paid plan) they are switched back on.
 *
 * The account's `agentsSuspended` flag is flipped with a condition on what was read, then the agents
 * are switched to match the flag, then the flag is read again: if another movement flipped it in
 * between, the agents are switched again, so the last word is always the account's.
 */
export async function reconcileAgents(organisationId: string): Promise<{ suspended: boolean } | undefined> {
  let applied: boolean | undefined;
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const { data: account } = await BillingAccountEntity.get({ organisationId }).go({ consistent: true });
    if (!account) return undefined;
    const suspended = account.agentsSuspended ?? false;
    const wanted = shouldSuspendAgents(account);
    if (wanted !== suspended) {
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
      if (!flipped) continue; // the account moved meanwhile: decide again on a fresh read
      await setAnsweringForOrganisation(organisationId, !wanted);
      applied = wanted;
      continue; // read again: the flag must still be what the agents were just switched to
    }
    if (applied !== undefined && applied !== suspended) {
      // Another movement flipped the flag after this one switched the agents: switch them to match.
      await setAnsweringForOrganisation(organisationId, !suspended);
      applied = suspended;
      continue;
    }
    return { suspended };
  }
  return undefined;
}
