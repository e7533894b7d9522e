import { requireOrganisation } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { contactRoutes } from '../routes.js';
import { suppressedPhoneFromPath, unsuppressNumber } from '../suppression.js';

/** DELETE /api/v1/organisations/{organisation_id}/suppression-list/{phone} — organisation owner or admin (users only). */
export const handler = implement(contactRoutes.deleteSuppressionEntry, async (req) => {
  const access = await requireOrganisation(
    req.principal,
    req.params.organisation_id,
    'suppression_list:manage',
  );
  await unsuppressNumber(access.organisationId, suppressedPhoneFromPath(req.params.phone));
  return { status: 204 };
});
