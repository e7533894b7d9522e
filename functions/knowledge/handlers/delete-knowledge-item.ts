import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { knowledgeRoutes } from '../routes.js';
import { deleteItem, requireKnowledgeBase } from '../service.js';

/** DELETE /api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id}/items/{item_id} — workspace member (API key: knowledge:write). */
export const handler = implement(knowledgeRoutes.deleteKnowledgeItem, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'knowledge:write');
  const kb = await requireKnowledgeBase(access.workspace.workspaceId, req.params.kb_id);
  await deleteItem(kb.workspaceId, kb.knowledgeBaseId, req.params.item_id);
  return { status: 204 };
});
