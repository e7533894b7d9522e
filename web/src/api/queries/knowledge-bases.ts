import { queryOptions } from '@tanstack/preact-query';
import { api, ok } from '../client';
import { pagedList } from './paged';
import { resourceQueries } from './resource';

/**
 * The knowledge bases' query keys and fetchers: ['knowledge-bases', workspace] prefixes every list of
 * them, ['knowledge-base', …] is one base and ['knowledge-items', …] its items (both refreshed after
 * an item is written).
 */

async function allKnowledgeBases(workspace_id: string) {
  const bases = [];
  let cursor: string | undefined;
  do {
    const page = await ok(
      api().GET('/api/v1/workspaces/{workspace_id}/knowledge-bases', {
        params: { path: { workspace_id }, query: { limit: 100, cursor } },
      }),
    );
    bases.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return bases;
}

const bases = resourceQueries('/api/v1/workspaces/{workspace_id}/knowledge-bases', 'knowledge-bases');
const { lists } = bases;

export const knowledgeBaseQueries = {
  lists,

  /** The knowledge page's paged list. */
  list: bases.list,

  /** Every base of the workspace (all pages), for the agent's picker. */
  all: (workspace_id: string) =>
    queryOptions({
      queryKey: [...lists(workspace_id), 'all'],
      queryFn: () => allKnowledgeBases(workspace_id),
    }),

  detail: (workspace_id: string, kb_id: string) =>
    queryOptions({
      queryKey: ['knowledge-base', workspace_id, kb_id],
      queryFn: () =>
        ok(
          api().GET('/api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id}', {
            params: { path: { workspace_id, kb_id } },
          }),
        ),
    }),

  /** A base's items, paged. */
  items: (workspace_id: string, kb_id: string) =>
    pagedList(['knowledge-items', workspace_id, kb_id], (cursor) =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id}/items', {
          params: { path: { workspace_id, kb_id }, query: { cursor } },
        }),
      ),
    ),

  /** A search of a base (`asked.at` makes the same question asked again a new query). */
  search: (workspace_id: string, kb_id: string, asked: { q: string; at: number } | undefined) =>
    queryOptions({
      queryKey: ['knowledge-search', workspace_id, kb_id, asked],
      enabled: asked !== undefined,
      queryFn: () =>
        ok(
          api().GET('/api/v1/workspaces/{workspace_id}/knowledge-bases/{kb_id}/search', {
            params: { path: { workspace_id, kb_id }, query: { q: asked?.q ?? '', limit: 10 } },
          }),
        ),
    }),
};
