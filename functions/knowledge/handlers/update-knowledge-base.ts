import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { knowledgeRoutes } from '../routes.js';
import { renameKnowledgeBase } from '../service.js';
import { knowledgeBaseView } from '../views.js';

/** PATCH /api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id} — workspace member (API key: knowledge:write). */
export const handler = implement(knowledgeRoutes.updateKnowledgeBase, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'knowledge:write');
  const kb = await renameKnowledgeBase(access.workspace.workspaceId, req.params.kb_id, req.body.name);
  return { status: 200, body: knowledgeBaseView(kb) };
});
