import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { importIssues, importView, requireImport } from '../imports.js';
import { contactRoutes } from '../routes.js';

/** GET /api/v1/workspaces/{workspace_id}/contacts/imports/{job_id} — any workspace role (API key: contacts:read). */
export const handler = implement(contactRoutes.getContactImport, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const job = await requireImport(access.workspace.workspaceId, req.params.job_id);
  const { errors, warnings } = await importIssues(job);
  return { status: 200, body: importView(job, errors, warnings) };
});
