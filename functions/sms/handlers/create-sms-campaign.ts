import { requireWorkspace } from '../../access/workspace-access.js';
import { actorId } from '../../platform/auth/principal.js';
import { implement } from '../../platform/http/index.js';
import { createCampaign } from '../campaigns.js';
import { smsRoutes } from '../routes.js';
import { campaignView } from '../views.js';

/** POST /api/v1/workspaces/{workspace_id}/sms-campaigns — workspace member (API key: sms:write). */
export const handler = implement(smsRoutes.createSmsCampaign, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'sms:write');
  const campaign = await createCampaign(
    access.workspace.workspaceId,
    access.organisationId,
    req.body,
    actorId(req.principal),
  );
  return { status: 201, body: campaignView(campaign) };
});
