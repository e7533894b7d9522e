import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { parseOrThrow } from '../../platform/validation.js';
import { knowledgeRoutes } from '../routes.js';
import { DocumentPatch, ListingPatch } from '../schemas.js';
import { patchItem, requireItem, requireKnowledgeBase, updateListing } from '../service.js';
import { itemView } from '../views.js';

/** PATCH /api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id}/items/{item_id} — workspace member (API key: knowledge:write). */
export const handler = implement(knowledgeRoutes.updateKnowledgeItem, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'knowledge:write');
  const kb = await requireKnowledgeBase(access.workspace.workspaceId, req.params.kb_id);
  const item = await requireItem(kb.workspaceId, kb.knowledgeBaseId, req.params.item_id);
  if (item.type === 'listing') {
    const updated = await updateListing(item, parseOrThrow(ListingPatch, req.body, 'body'));
    return { status: 200, body: itemView(updated) };
  }
  const { title } = parseOrThrow(DocumentPatch, req.body, 'body');
  const updated = await patchItem(item, { title, updatedAt: new Date().toISOString() });
  return { status: 200, body: itemView(updated) };
});
