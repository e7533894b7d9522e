import { clock } from '../platform/clock.js';
import { notFound } from '../platform/errors.js';
import { OrganisationEntity, OrgMemberEntity } from './entities.js';
import { ORGANISATION_NOT_FOUND, type OrganisationAccess } from './workspace-access.js';

/**
 * Organisations. One is opened with its billing account in one transaction, so the opening lives in
 * billing (functions/billing/organisations.ts `createOrganisation`), which sits above access; the
 * plan and balance an organisation's view shows come from billing too (`organisationBilling`).
 */
export const DEFAULT_WORKSPACE_NAME = 'Default';

/** An organisation as its member sees it, with their role. */
export async function getOrganisation(
  access: Pick<OrganisationAccess, 'organisationId' | 'organisationRole'>,
) {
  const { data: organisation } = await OrganisationEntity.get({ organisationId: access.organisationId }).go({
    consistent: true,
  });
  if (!organisation) throw notFound(ORGANISATION_NOT_FOUND);
  return { organisation, role: access.organisationRole };
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
