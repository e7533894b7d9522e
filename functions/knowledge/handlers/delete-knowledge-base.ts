import { requireWorkspace } from '../../access/workspace-access.js';
import { integrationUsesBase } from '../../integrations/service.js';
import { implement } from '../../platform/http/index.js';
import { knowledgeRoutes } from '../routes.js';
import { deleteKnowledgeBase } from '../service.js';

/**
 * DELETE /api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id} — workspace member (API key:
 * knowledge:write). 409 while an integration sends its listings there (integrations' check, handed in).
 */
export const handler = implement(knowledgeRoutes.deleteKnowledgeBase, async (req) => {
  const access = await requireWorkspace(req.principal, req.params.workspace_id, 'knowledge:write');
  await deleteKnowledgeBase(access.workspace.workspaceId, req.params.kb_id, integrationUsesBase);
  return { status: 204 };
});
