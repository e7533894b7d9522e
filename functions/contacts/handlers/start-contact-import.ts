import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { importView, startImport } from '../imports.js';
import { contactRoutes } from '../routes.js';

/** POST /api/v1/workspaces/{workspace_id}/contacts/imports/{job_id}/start — workspace member (API key: contacts:write). */
export const handler = implement(contactRoutes.startContactImport, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'contacts:write');
  const job = await startImport(access.workspace.workspaceId, req.params.job_id);
  return { status: 202, body: importView(job) };
});
