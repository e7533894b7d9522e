import { Service } from 'electrodb';
import { clock } from '../platform/clock.js';
import { notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { entityConfig } from '../platform/table.js';
import type { UserPrincipal } from '../platform/auth/principal.js';
import { BillingAccountEntity, LedgerEntryEntity, LedgerKeyEntity } from '../billing/entities.js';
import { includedUnits, periodGrantKey, periodOf, PLANS } from '../billing/plans.js';
import { OrganisationEntity, OrgMemberEntity, WorkspaceEntity } from './entities.js';
import { ORGANISATION_NOT_FOUND, type OrganisationAccess } from './workspace-access.js';

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

export const DEFAULT_WORKSPACE_NAME = 'Default';

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

/** An organisation as its member sees it, with their role and the organisation's plan and balance. */
export async function getOrganisation(
  access: Pick<OrganisationAccess, 'organisationId' | 'organisationRole'>,
) {
  const [{ data: organisation }, { data: account }] = await Promise.all([
    OrganisationEntity.get({ organisationId: access.organisationId }).go({ consistent: true }),
    BillingAccountEntity.get({ organisationId: access.organisationId }).go({ consistent: true }),
  ]);
  if (!organisation) throw notFound(ORGANISATION_NOT_FOUND);
  return { organisation, role: access.organisationRole, account };
}

/** Renames an organisation (owner or admin; the caller was authorised for `organisation:update`). */
export async function updateOrganisation(access: OrganisationAccess, changes: { name?: string }) {
  if (changes.name !== undefined) {
    await OrganisationEntity.patch({ organisationId: access.organisationId })
      .set({ name: changes.name, updatedAt: clock.now().toISOString() })
      .go();
  }
  return getOrganisation(access);
}

/** The organisations the user is an accepted member of, with their role in each. */
export async function listMyOrganisations(userId: string) {
  const { data: memberships } = await OrgMemberEntity.query.byUser({ userId }).go({ pages: 'all' });
  const accepted = memberships.filter((m) => m.status === 'accepted');
  if (accepted.length === 0) return [];
  const { data: organisations } = await OrganisationEntity.get(
    accepted.map((m) => ({ organisationId: m.organisationId })),
  ).go();
  const byId = new Map(organisations.map((o) => [o.organisationId, o]));
  return accepted.flatMap((m) => {
    const organisation = byId.get(m.organisationId);
    return organisation ? [{ organisation, role: m.role }] : [];
  });
}
