import { domainHandler } from '../platform/http/index.js';
import { knowledgeRoutes } from './routes.js';
import { handler as createKnowledgeBase } from './handlers/create-knowledge-base.js';
import { handler as listKnowledgeBases } from './handlers/list-knowledge-bases.js';
import { handler as getKnowledgeBase } from './handlers/get-knowledge-base.js';
import { handler as updateKnowledgeBase } from './handlers/update-knowledge-base.js';
import { handler as deleteKnowledgeBase } from './handlers/delete-knowledge-base.js';
import { handler as createKnowledgeItem } from './handlers/create-knowledge-item.js';
import { handler as listKnowledgeItems } from './handlers/list-knowledge-items.js';
import { handler as getKnowledgeItem } from './handlers/get-knowledge-item.js';
import { handler as updateKnowledgeItem } from './handlers/update-knowledge-item.js';
import { handler as deleteKnowledgeItem } from './handlers/delete-knowledge-item.js';
import { handler as searchKnowledgeBase } from './handlers/search-knowledge-base.js';

/** The knowledge domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(knowledgeRoutes, {
  createKnowledgeBase,
  listKnowledgeBases,
  getKnowledgeBase,
  updateKnowledgeBase,
  deleteKnowledgeBase,
  createKnowledgeItem,
  listKnowledgeItems,
  getKnowledgeItem,
  updateKnowledgeItem,
  deleteKnowledgeItem,
  searchKnowledgeBase,
});
