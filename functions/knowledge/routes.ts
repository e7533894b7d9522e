import { defineRoute } from '../platform/http/route.js';
import * as pagination from '../platform/pagination.js';
import * as kb from './schemas.js';

const BASES = '/api/v1/workspaces/{workspace_id}/knowledge-bases';
const BASE = `${BASES}/{kb_id}`;
const ITEMS = `${BASE}/items`;
const ITEM = `${ITEMS}/{item_id}`;

/**
 * Knowledge bases of listings and documents, their items and their search (workspace: any role
 * reads, members and admins write; API keys with `knowledge:read` / `knowledge:write`).
 */
export const knowledgeRoutes = {
  createKnowledgeBase: defineRoute({
    method: 'POST',
    path: BASES,
    summary: 'Create a knowledge base',
    description: 'Create a knowledge base: {name, kind: listings | documents} (member)',
    auth: 'user_or_api_key',
    scope: 'knowledge:write',
    body: kb.CreateKnowledgeBaseBody,
    response: kb.KnowledgeBaseResponse,
    access: { table: 'readwrite' },
  }),
  listKnowledgeBases: defineRoute({
    method: 'GET',
    path: BASES,
    summary: 'List knowledge bases',
    description: 'The workspace’s knowledge bases, oldest first (viewer)',
    auth: 'user_or_api_key',
    scope: 'knowledge:read',
    query: pagination.ListQuery,
    response: kb.KnowledgeBaseList,
    access: { table: 'readwrite' },
  }),
  getKnowledgeBase: defineRoute({
    method: 'GET',
    path: BASE,
    summary: 'Get a knowledge base',
    description: 'A knowledge base (viewer)',
    auth: 'user_or_api_key',
    scope: 'knowledge:read',
    response: kb.KnowledgeBaseResponse,
    access: { table: 'readwrite' },
  }),
  updateKnowledgeBase: defineRoute({
    method: 'PATCH',
    path: BASE,
    summary: 'Update a knowledge base',
    description: 'Rename a knowledge base: {name} (member)',
    auth: 'user_or_api_key',
    scope: 'knowledge:write',
    body: kb.UpdateKnowledgeBaseBody,
    response: kb.KnowledgeBaseResponse,
    access: { table: 'readwrite' },
  }),
  deleteKnowledgeBase: defineRoute({
    method: 'DELETE',
    path: BASE,
    summary: 'Delete a knowledge base',
    description:
      'Delete a knowledge base with its items (member); 409 while an integration sends its listings there ' +
      '(disconnect and delete the integration first)',
    auth: 'user_or_api_key',
    scope: 'knowledge:write',
    successStatus: 204,
    errors: { 409: 'An integration sends its listings to this knowledge base' },
    access: { table: 'readwrite', bucket: 'readwrite' },
  }),
  createKnowledgeItem: defineRoute({
    method: 'POST',
    path: ITEMS,
    summary: 'Create a knowledge item',
    description:
      'Add an item (member). A listings base takes a listing {external_id?, address, suburb?, state?, postcode?, ' +
      'price_text?, status: available | under_offer | sold, bedrooms?, bathrooms?, description?} → 201 (409 when ' +
      'another listing of the base has the external_id). A documents base takes {title, text} or {title, ' +
      'file_name, content_type} (PDF, DOCX, TXT, Markdown) → 202 with the item `processing` and, for a file, ' +
      'upload_url (a presigned PUT, one hour, up to 50 MB). A worker extracts the text, cuts it into passages and ' +
      'indexes them: the item becomes `ready` (searchable) or `failed` with failure_reason',
    auth: 'user_or_api_key',
    scope: 'knowledge:write',
    body: kb.CreateItemBody,
    response: kb.ItemResponse,
    errors: {
      409: {
        when: 'A listing with this external_id exists (its id in item_id)',
        body: kb.DuplicateListingBody,
      },
    },
    access: { table: 'readwrite', bucket: 'readwrite', sendsTo: ['knowledge'] },
  }),
  listKnowledgeItems: defineRoute({
    method: 'GET',
    path: ITEMS,
    summary: "List a knowledge base's items",
    description: 'A knowledge base’s items, oldest first (viewer)',
    auth: 'user_or_api_key',
    scope: 'knowledge:read',
    query: kb.ItemListQuery,
    response: kb.ItemList,
    access: { table: 'readwrite' },
  }),
  getKnowledgeItem: defineRoute({
    method: 'GET',
    path: ITEM,
    summary: 'Get a knowledge item',
    description: 'An item (viewer)',
    auth: 'user_or_api_key',
    scope: 'knowledge:read',
    response: kb.ItemResponse,
    access: { table: 'readwrite' },
  }),
  updateKnowledgeItem: defineRoute({
    method: 'PATCH',
    path: ITEM,
    summary: 'Update a knowledge item',
    description:
      'Change an item (member): a listing’s fields (null removes an optional one; external_id stays), a ' +
      'document’s title',
    auth: 'user_or_api_key',
    scope: 'knowledge:write',
    body: kb.UpdateItemBody,
    response: kb.ItemResponse,
    access: { table: 'readwrite', sendsTo: ['knowledge'] },
  }),
  deleteKnowledgeItem: defineRoute({
    method: 'DELETE',
    path: ITEM,
    summary: 'Delete a knowledge item',
    description: 'Delete an item; it leaves the search index within moments (member)',
    auth: 'user_or_api_key',
    scope: 'knowledge:write',
    successStatus: 204,
    access: { table: 'readwrite', sendsTo: ['knowledge'] },
  }),
  searchKnowledgeBase: defineRoute({
    method: 'GET',
    path: `${BASE}/search`,
    summary: 'Search a knowledge base',
    description:
      'Full-text search (BM25, with prefix and fuzzy matching): ?q= (1–1,000 characters, else 422), ?limit= (1–50, ' +
      'default 10) → items ranked best first, each with the passage that matched best (viewer)',
    auth: 'user_or_api_key',
    scope: 'knowledge:read',
    query: kb.SearchQuery,
    response: kb.SearchResponse,
    access: { table: 'readwrite', bucket: 'read' },
  }),
};
