import { requireOrganisation } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { contactRoutes } from '../routes.js';
import { suppressedPhoneFromPath, suppressNumber } from '../suppression.js';
import { suppressionView } from '../views.js';

/** PUT /api/v1/organisations/{organisation_id}/suppression-list/{phone} — organisation owner or admin (users only). */
export const handler = implement(contactRoutes.putSuppressionEntry, async (req) => {
  const access = await requireOrganisation(
    req.principal,
    req.params.organisation_id,
    'suppression_list:manage',
  );
  const phone = suppressedPhoneFromPath(req.params.phone);
  const entry = await suppressNumber(access.organisationId, phone, req.body, access.principal.userId);
  return { status: 200, body: suppressionView(entry) };
});
