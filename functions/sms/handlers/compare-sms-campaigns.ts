import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { compareCampaigns } from '../campaigns.js';
import { smsRoutes } from '../routes.js';
import { comparisonView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/sms-campaigns/compare?ids=a,b — any workspace role (API key: sms:read). */
export const handler = implement(smsRoutes.compareSmsCampaigns, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const campaigns = await compareCampaigns(access.workspace.workspaceId, req.query.ids);
  return { status: 200, body: { items: campaigns.map(comparisonView), next_cursor: null } };
});
