import { requireOrganisation } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { billingRoutes } from '../routes.js';
import { listLedger } from '../history.js';
import { toLedgerEntryResponse } from '../views.js';

/** `GET /api/v1/organisations/{organisation_id}/billing/ledger`: every credit movement, newest first (members). */
export const handler = implement(billingRoutes.listLedger, async ({ principal, params, query }) => {
  const { organisationId } = await requireOrganisation(principal, params.organisation_id, 'billing:read');
  const page = await listLedger(organisationId, query);
  return {
    status: 200,
    body: { items: page.items.map(toLedgerEntryResponse), next_cursor: page.nextCursor },
  };
});
