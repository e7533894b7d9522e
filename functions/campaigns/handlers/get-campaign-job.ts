import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { campaignRoutes } from '../routes.js';
import { requireImport } from '../../contacts/imports.js';
import { readProgress, requireCampaign } from '../service.js';
import { runJobView, uploadJobView } from '../uploads.js';

/** GET /api/v1/workspaces/{workspace_id}/campaigns/{campaign_id}/jobs/{job_id} — any workspace role. */
export const handler = implement(campaignRoutes.getCampaignJob, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const campaign = await requireCampaign(access.workspace.workspaceId, req.params.campaign_id);
  if (campaign.runJobId && campaign.runJobId === req.params.job_id)
    return {
      status: 200,
      body: runJobView(campaign, await readProgress(campaign.workspaceId, campaign.campaignId)),
    };
  const job = await requireImport(campaign.workspaceId, req.params.job_id, {
    campaignId: campaign.campaignId,
  });
  return { status: 200, body: await uploadJobView(job, true) };
});
