import { requireWorkspace } from '../../access/workspace-access.js';
import { implement } from '../../platform/http/index.js';
import { knowledgeRoutes } from '../routes.js';
import { searchBase } from '../search-index.js';
import { requireKnowledgeBase } from '../service.js';

/** GET /api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id}/search?q= — any workspace role (API key: knowledge:read). */
export const handler = implement(knowledgeRoutes.searchKnowledgeBase, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'workspace:read');
  const kb = await requireKnowledgeBase(access.workspace.workspaceId, req.params.kb_id);
  const items = await searchBase(kb, req.query.q, req.query.limit);
  return { status: 200, body: { items, next_cursor: null } };
});
