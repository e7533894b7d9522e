import { domainHandler } from '../platform/http/index.js';
import { knowledgeRoutes } from './routes.js';

/** The knowledge domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(knowledgeRoutes, {
  createKnowledgeBase: () => import('./handlers/create-knowledge-base.js'),
  listKnowledgeBases: () => import('./handlers/list-knowledge-bases.js'),
  getKnowledgeBase: () => import('./handlers/get-knowledge-base.js'),
  updateKnowledgeBase: () => import('./handlers/update-knowledge-base.js'),
  deleteKnowledgeBase: () => import('./handlers/delete-knowledge-base.js'),
  createKnowledgeItem: () => import('./handlers/create-knowledge-item.js'),
  listKnowledgeItems: () => import('./handlers/list-knowledge-items.js'),
  getKnowledgeItem: () => import('./handlers/get-knowledge-item.js'),
  updateKnowledgeItem: () => import('./handlers/update-knowledge-item.js'),
  deleteKnowledgeItem: () => import('./handlers/delete-knowledge-item.js'),
  searchKnowledgeBase: () => import('./handlers/search-knowledge-base.js'),
});
