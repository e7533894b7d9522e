import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { parseOrThrow } from '../../platform/validation.js';
import { createDocument } from '../documents.js';
import { knowledgeRoutes } from '../routes.js';
import { DocumentBody, ListingBody } from '../schemas.js';
import { createListing, requireKnowledgeBase } from '../service.js';
import { itemView } from '../views.js';

/**
 * POST /api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id}/items — workspace member (API key:
 * knowledge:write). A listing (201) or a document (202, processing; upload_url for a file), by the
 * base's kind.
 */
export const handler = implement(knowledgeRoutes.createKnowledgeItem, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'knowledge:write');
  const kb = await requireKnowledgeBase(access.workspace.workspaceId, req.params.kb_id);
  if (kb.kind === 'listings') {
    const item = await createListing(kb, parseOrThrow(ListingBody, req.body, 'body'));
    return { status: 201, body: itemView(item) };
  }
  const { item, uploadUrl } = await createDocument(kb, parseOrThrow(DocumentBody, req.body, 'body'));
  return { status: 202, body: { ...itemView(item), ...(uploadUrl ? { upload_url: uploadUrl } : {}) } };
});
