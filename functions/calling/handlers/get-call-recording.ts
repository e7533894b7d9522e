import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { callRoutes } from '../routes.js';
import { recordingDownloadUrl } from '../call-log.js';

/** GET /api/v1/workspaces/{workspace_id}/calls/{call_id}/recording — 302 to a short-lived signed URL. */
export const handler = implement(callRoutes.getCallRecording, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const url = await recordingDownloadUrl(access.workspace.workspaceId, req.params.call_id);
  return { status: 302, headers: { location: url, 'cache-control': 'no-store' } };
});
