import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { knowledgeRoutes } from '../routes.js';
import { listItems, requireKnowledgeBase } from '../service.js';
import { itemView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id}/items — any workspace role (API key: knowledge:read). */
export const handler = implement(knowledgeRoutes.listKnowledgeItems, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const kb = await requireKnowledgeBase(access.workspace.workspaceId, req.params.kb_id);
  const page = await listItems(kb.workspaceId, kb.knowledgeBaseId, req.query);
  return { status: 200, body: { items: page.items.map(itemView), next_cursor: page.nextCursor } };
});
