import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { knowledgeRoutes } from '../routes.js';
import { requireKnowledgeBase } from '../service.js';
import { knowledgeBaseView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id} — any workspace role (API key: knowledge:read). */
export const handler = implement(knowledgeRoutes.getKnowledgeBase, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const kb = await requireKnowledgeBase(access.workspace.workspaceId, req.params.kb_id);
  return { status: 200, body: knowledgeBaseView(kb) };
});
