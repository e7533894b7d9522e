import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { knowledgeRoutes } from '../routes.js';
import { requireItem, requireKnowledgeBase } from '../service.js';
import { itemView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id}/items/{item_id} — any workspace role (API key: knowledge:read). */
export const handler = implement(knowledgeRoutes.getKnowledgeItem, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const kb = await requireKnowledgeBase(access.workspace.workspaceId, req.params.kb_id);
  const item = await requireItem(kb.workspaceId, kb.knowledgeBaseId, req.params.item_id);
  return { status: 200, body: itemView(item) };
});
