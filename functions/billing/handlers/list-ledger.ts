import { requireOrganisation } from '../../access/workspace-access.js';
import { httpHandler } from '../../platform/http/index.js';
import { listLedger } from '../history.js';
import { LedgerQuery } from '../schemas.js';
import { toLedgerEntryResponse } from '../views.js';

/** `GET /api/v1/organisations/{organisation_id}/billing/ledger`: every credit movement, newest first (members). */
export const handler = httpHandler(
  { auth: 'user', query: LedgerQuery },
  async ({ principal, params, query }) => {
    const { organisationId } = await requireOrganisation(principal, params.organisation_id, 'billing:read');
    const page = await listLedger(organisationId, query);
    return {
      status: 200,
      body: { items: page.items.map(toLedgerEntryResponse), next_cursor: page.nextCursor },
    };
  },
);
