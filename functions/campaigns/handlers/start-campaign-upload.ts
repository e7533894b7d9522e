import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { campaignRoutes } from '../routes.js';
import { startImport } from '../../contacts/imports.js';
import { requireCampaign } from '../service.js';
import { campaignPipeline, requireOpenForUploads, uploadJobView } from '../uploads.js';

/** POST /api/v1/workspaces/{workspace_id}/campaigns/{campaign_id}/uploads/{job_id}/start — member. */
export const handler = implement(campaignRoutes.startCampaignUpload, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'campaigns:write');
  const workspaceId = access.workspace.workspaceId;
  const campaign = await requireCampaign(workspaceId, req.params.campaign_id);
  requireOpenForUploads(campaign);
  const job = await startImport(
    workspaceId,
    req.params.job_id,
    campaignPipeline(workspaceId, campaign.campaignId),
  );
  return { status: 202, body: await uploadJobView(job, false) };
});
