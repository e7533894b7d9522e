import { Service } from '../platform/entity.js';
import { OrganisationEntity, OrgMemberEntity, WorkspaceEntity } from '../access/entities.js';
import { DEFAULT_WORKSPACE_NAME } from '../access/organisations.js';
import type { UserPrincipal } from '../platform/auth/principal.js';
import { clock } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import { entityConfig } from '../platform/table.js';
import { displayCredits } from './credits.js';
import { BillingAccountEntity, LedgerEntryEntity, LedgerKeyEntity, type PlanId } from './entities.js';
import { includedUnits, periodGrantKey, periodOf, PLANS } from './plans.js';

/**
 * What billing adds to an organisation: its opening, and the plan and balance its view shows. Billing
 * sits above access (docs/architecture.md), so the one transaction that opens an organisation with its
 * billing account is written here, from both domains' entities; access knows nothing of billing.
 */
const openingService = new Service(
  {
    organisation: OrganisationEntity,
    orgMember: OrgMemberEntity,
    workspace: WorkspaceEntity,
    billingAccount: BillingAccountEntity,
    ledgerEntry: LedgerEntryEntity,
    ledgerKey: LedgerKeyEntity,
  },
  entityConfig(),
);

/**
 * Opens an organisation in one transaction: the organisation, its single owner (the caller), a
 * `Default` workspace, and a billing account on the Free plan with its first month's credits granted
 * through the ledger.
 */
export async function createOrganisation(owner: UserPrincipal, input: { name: string; timezone?: string }) {
  const now = clock.now();
  const createdAt = now.toISOString();
  const organisationId = newId('organisation');
  const workspaceId = newId('workspace');
  const entryId = newId('ledgerEntry');
  const period = periodOf(now);
  const grant = includedUnits('free');
  const sourceKey = periodGrantKey(period.start);
  const timezone = input.timezone ?? 'UTC';
  const result = await openingService.transaction
    .write(({ organisation, orgMember, workspace, billingAccount, ledgerEntry, ledgerKey }) => [
      organisation
        .create({ organisationId, name: input.name, ownerUserId: owner.userId, createdAt })
        .commit(),
      orgMember
        .create({
          organisationId,
          userId: owner.userId,
          email: owner.email,
          role: 'owner',
          status: 'accepted',
          joinedAt: createdAt,
        })
        .commit(),
      workspace
        .create({ workspaceId, organisationId, name: DEFAULT_WORKSPACE_NAME, timezone, createdAt })
        .commit(),
      billingAccount
        .create({
          organisationId,
          plan: 'free',
          subscriptionStatus: 'none',
          balanceUnits: grant,
          periodStart: period.start,
          periodEnd: period.end,
          createdAt,
        })
        .commit(),
      ledgerEntry
        .create({
          organisationId,
          entryId,
          kind: 'grant',
          amountUnits: grant,
          reason: `${PLANS.free.name} plan: included credits`,
          sourceKey,
          createdAt,
        })
        .commit(),
      ledgerKey.create({ organisationId, sourceKey, entryId }).commit(),
    ])
    .go();
  if (result.canceled)
    throw new Error(`could not open organisation: ${JSON.stringify(result.data.map((d) => d.code))}`);
  return { organisationId, workspaceId, createdAt };
}

/** The plan and credit balance an organisation's view shows; null when it has no billing account. */
export async function organisationBilling(
  organisationId: string,
): Promise<{ plan: PlanId; credit_balance: number } | null> {
  const { data: account } = await BillingAccountEntity.get({ organisationId }).go({ consistent: true });
  return account ? { plan: account.plan, credit_balance: displayCredits(account.balanceUnits) } : null;
}
