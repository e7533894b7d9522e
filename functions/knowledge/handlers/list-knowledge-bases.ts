import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { knowledgeRoutes } from '../routes.js';
import { listKnowledgeBases } from '../service.js';
import { knowledgeBaseView } from '../views.js';

/** GET /api/v1/workspaces/{workspace_id}/knowledge-bases — any workspace role (API key: knowledge:read). */
export const handler = implement(knowledgeRoutes.listKnowledgeBases, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const page = await listKnowledgeBases(access.workspace.workspaceId, req.query);
  return { status: 200, body: { items: page.items.map(knowledgeBaseView), next_cursor: page.nextCursor } };
});
