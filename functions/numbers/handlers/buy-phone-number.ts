import { requireWorkspace } from '../../access/workspace-access.js';
import { actorId } from '../../platform/auth/principal.js';
import { implement } from '../../platform/http/index.js';
import { numberRoutes } from '../routes.js';
import { provisionNumber, toNumberResponse } from '../service.js';

/** POST /api/v1/workspaces/{workspace_id}/phone-numbers — organisation owner or admin, active paid subscription. */
export const handler = implement(numberRoutes.buyPhoneNumber, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'numbers:buy');
  const number = await provisionNumber({
    workspaceId: access.workspace.workspaceId,
    organisationId: access.organisationId,
    country: req.body.country,
    areaCode: req.body.area_code,
    phoneNumber: req.body.phone_number,
    createdBy: actorId(req.principal),
  });
  return { status: 201, body: toNumberResponse(number) };
});
