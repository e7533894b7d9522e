import { workspaceCountry } from '../../access/entities.js';
import { requireWorkspace } from '../../access/workspace-access.js';
import { actorId } from '../../platform/auth/principal.js';
import { implement } from '../../platform/http/index.js';
import { createDirectImport, createUploadImport, importView } from '../imports.js';
import { contactRoutes } from '../routes.js';

/**
 * POST /api/v1/workspaces/{workspace_id}/contacts/imports — workspace member (API key: contacts:write).
 * JSON {format}: a pending job with upload_url; a text/csv or text/vcard body: the file, started at once.
 */
export const handler = implement(contactRoutes.createContactImport, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'contacts:write');
  const workspaceId = access.workspace.workspaceId;
  const common = { country: workspaceCountry(access.workspace), createdBy: actorId(req.principal) };
  if (req.raw) {
    const fileName = req.event.queryStringParameters?.file_name?.trim().slice(0, 255) || undefined;
    const format = req.raw.contentType === 'text/csv' ? 'csv' : 'vcf';
    const job = await createDirectImport(workspaceId, { ...common, format, fileName, bytes: req.raw.bytes });
    return { status: 202, body: importView(job) };
  }
  const { job, uploadUrl } = await createUploadImport(workspaceId, {
    ...common,
    format: req.body.format,
    fileName: req.body.file_name,
  });
  return { status: 202, body: { ...importView(job), upload_url: uploadUrl } };
});
