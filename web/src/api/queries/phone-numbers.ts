import { queryOptions } from '@tanstack/preact-query';
import { api, ok } from '../client';
import { pagedList } from './paged';

/** The phone numbers' query keys and fetchers; ['phone-numbers', workspace] prefixes every list of them. */

const lists = (workspace_id: string) => ['phone-numbers', workspace_id] as const;

export const phoneNumberQueries = {
  lists,

  /** The phone numbers page's paged list. */
  list: (workspace_id: string) =>
    pagedList(lists(workspace_id), (cursor) =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/phone-numbers', {
          params: { path: { workspace_id }, query: { cursor } },
        }),
      ),
    ),

  /** The first 100, for the "From number" picker. */
  all: (workspace_id: string) =>
    queryOptions({
      queryKey: [...lists(workspace_id), 'all'],
      queryFn: () =>
        ok(
          api().GET('/api/v1/workspaces/{workspace_id}/phone-numbers', {
            params: { path: { workspace_id }, query: { limit: 100 } },
          }),
        ),
    }),
};
