import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { knowledgeRoutes } from '../routes.js';
import { createKnowledgeBase } from '../service.js';
import { knowledgeBaseView } from '../views.js';

/** POST /api/v1/workspaces/{workspace_id}/knowledge-bases — workspace member (API key: knowledge:write). */
export const handler = implement(knowledgeRoutes.createKnowledgeBase, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'knowledge:write');
  const kb = await createKnowledgeBase(access.workspace.workspaceId, req.body);
  return { status: 201, body: knowledgeBaseView(kb) };
});
