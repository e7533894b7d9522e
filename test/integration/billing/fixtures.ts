import { randomUUID } from 'node:crypto';
import { createOrganisation } from '../../../functions/billing/organisations.js';
import { recordMovement } from '../../../functions/billing/ledger.js';
import { LedgerEntryEntity } from '../../../functions/billing/entities.js';
import { findOrCreateUser } from '../../../functions/platform/auth/users.js';
import type { UserPrincipal } from '../../../functions/platform/auth/principal.js';
import { subjectFor } from '../../helpers/tokens.js';

/** Organisations opened through the tenancy kernel's own service (Free plan, 500 credits granted through the ledger). */
export async function newOrganisation(
  label = 'billing',
): Promise<{ organisationId: string; workspaceId: string; owner: UserPrincipal }> {
  const email = `${label}-${randomUUID().slice(0, 8)}@billing.test`;
  const subject = subjectFor(email);
  const userId = await findOrCreateUser(subject, email);
  const owner: UserPrincipal = { kind: 'user', userId, email, subject };
  const { organisationId, workspaceId } = await createOrganisation(owner, { name: `Billing ${label}` });
  return { organisationId, workspaceId, owner };
}

/** Adds credits the way a paid purchase does (a purchase movement under its own payment id). */
export async function topUp(organisationId: string, credits: number) {
  return recordMovement({
    organisationId,
    kind: 'purchase',
    amountUnits: credits * 60,
    reason: `test top-up of ${credits} credits`,
    sourceKey: `purchase:test-${randomUUID()}`,
  });
}

export async function ledgerEntries(organisationId: string) {
  return (
    await LedgerEntryEntity.query.byOrganisation({ organisationId }).go({ pages: 'all', consistent: true })
  ).data;
}
