import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { campaignRoutes } from '../routes.js';
import { listImports } from '../../contacts/imports.js';
import { readProgress, requireCampaign } from '../service.js';
import { runJobView, uploadJobView } from '../uploads.js';

/** GET /api/v1/workspaces/{workspace_id}/campaigns/{campaign_id}/jobs — any workspace role (campaigns:read). */
export const handler = implement(campaignRoutes.listCampaignJobs, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const campaign = await requireCampaign(access.workspace.workspaceId, req.params.campaign_id);
  const uploads: Awaited<ReturnType<typeof uploadJobView>>[] = [];
  let cursor: string | undefined;
  do {
    const page = await listImports(
      campaign.workspaceId,
      { limit: 100, cursor },
      { campaignId: campaign.campaignId },
    );
    uploads.push(...(await Promise.all(page.items.map((job) => uploadJobView(job, false)))));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  const run = campaign.runJobId
    ? [runJobView(campaign, await readProgress(campaign.workspaceId, campaign.campaignId))]
    : [];
  return { status: 200, body: { items: [...run, ...uploads], next_cursor: null } };
});
