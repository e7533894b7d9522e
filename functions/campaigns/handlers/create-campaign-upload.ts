import { workspaceCountry } from '../../access/entities.js';
import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { campaignRoutes } from '../routes.js';
import { requireFeature } from '../../billing/features.js';
import { createDirectImport, createUploadImport } from '../../contacts/imports.js';
import { actorId } from '../../platform/auth/principal.js';
import { requireCampaign } from '../service.js';
import { campaignPipeline, requireOpenForUploads, uploadJobView } from '../uploads.js';

/**
 * POST /api/v1/workspaces/{workspace_id}/campaigns/{campaign_id}/uploads — member (API key:
 * campaigns:write); batch_outbound. A text/csv body starts at once; JSON {format} gives upload_url.
 */
export const handler = implement(campaignRoutes.createCampaignUpload, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'campaigns:write');
  await requireFeature(access.organisationId, 'batchOutbound');
  const workspaceId = access.workspace.workspaceId;
  const campaign = await requireCampaign(workspaceId, req.params.campaign_id);
  requireOpenForUploads(campaign);
  const pipeline = campaignPipeline(workspaceId, campaign.campaignId);
  const common = { country: workspaceCountry(access.workspace), createdBy: actorId(req.principal) };
  if (req.raw) {
    const fileName = req.event.queryStringParameters?.file_name?.trim().slice(0, 255) || undefined;
    const job = await createDirectImport(
      workspaceId,
      { ...common, format: 'csv', fileName, bytes: req.raw.bytes },
      pipeline,
    );
    return { status: 202, body: await uploadJobView(job, false) };
  }
  const { job, uploadUrl } = await createUploadImport(
    workspaceId,
    { ...common, format: 'csv', fileName: req.body.file_name },
    pipeline,
  );
  return { status: 202, body: { ...(await uploadJobView(job, false)), upload_url: uploadUrl } };
});
