import { queryOptions, type QueryKey } from '@tanstack/preact-query';
import { api, ok } from '../client';
import type { paths } from '../schema';
import { pagedList, type Page } from './paged';

/** A workspace's list route: GET, path `{workspace_id}` only, paged by `cursor` and `limit`. */
type ListGet = {
  parameters: { path: { workspace_id: string }; query?: { cursor?: string; limit?: number } };
  responses: { 200: { content: { 'application/json': { items: unknown[]; next_cursor?: string | null } } } };
};
export type ListPath = {
  [P in keyof paths]: paths[P] extends { get: ListGet }
    ? keyof paths[P]['get']['parameters']['path'] extends 'workspace_id'
      ? P
      : never
    : never;
}[keyof paths];

type ListBody<P extends ListPath> = paths[P] extends { get: infer G }
  ? G extends { responses: { 200: { content: { 'application/json': infer B } } } }
    ? B
    : never
  : never;
export type ListItem<P extends ListPath> = ListBody<P> extends { items: (infer T)[] } ? T : never;

/**
 * The list queries of one kind of workspace resource: the list page's paged list and the first 100
 * for pickers, both under the key prefix `[key, workspace]` (invalidate it after a create).
 */
export function resourceQueries<P extends ListPath>(path: P, key: string) {
  const lists = (workspace_id: string) => [key, workspace_id] as const;
  const fetchPage = (workspace_id: string, query: { cursor?: string; limit?: number }) =>
    // One call for every list path: openapi-fetch cannot narrow a union of paths, so the path is
    // given as one of them (they share the parameters' shape, ListGet); the answer is typed by P.
    ok(
      api().GET(path as '/api/v1/workspaces/{workspace_id}/agents', {
        params: { path: { workspace_id }, query },
      }),
    ) as unknown as Promise<Page<ListItem<P>>>;
  return {
    lists,
    /** The resource's page: its paged list. */
    list: (workspace_id: string) =>
      pagedList(lists(workspace_id), (cursor) => fetchPage(workspace_id, { cursor })),
    /** The first 100, for pickers. */
    all: (workspace_id: string) =>
      queryOptions({
        queryKey: [...lists(workspace_id), 'all'] as QueryKey,
        queryFn: () => fetchPage(workspace_id, { limit: 100 }),
      }),
  };
}
