import { requireOrganisation } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { contactRoutes } from '../routes.js';
import { listSuppressed } from '../suppression.js';
import { suppressionView } from '../views.js';

/** GET /api/v1/organisations/{organisation_id}/suppression-list — any organisation member (users only). */
export const handler = implement(contactRoutes.listSuppressionList, async (req) => {
  const access = await requireOrganisation(
    req.principal,
    req.params.organisation_id,
    'suppression_list:read',
  );
  const page = await listSuppressed(access.organisationId, req.query);
  return { status: 200, body: { items: page.items.map(suppressionView), next_cursor: page.nextCursor } };
});
