import { queryOptions } from '@tanstack/preact-query';
import { api, ok } from '../client';
import { pagedList } from './paged';

/** The call campaigns' query keys and fetchers; ['campaigns', workspace] is their list (invalidated after a create). */

const lists = (workspace_id: string) => ['campaigns', workspace_id] as const;

export const campaignQueries = {
  lists,

  list: (workspace_id: string) =>
    pagedList(lists(workspace_id), (cursor) =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/campaigns', {
          params: { path: { workspace_id }, query: { cursor } },
        }),
      ),
    ),

  detail: (workspace_id: string, campaign_id: string) =>
    queryOptions({
      queryKey: ['campaign', workspace_id, campaign_id],
      queryFn: () =>
        ok(
          api().GET('/api/v1/workspaces/{workspace_id}/campaigns/{campaign_id}', {
            params: { path: { workspace_id, campaign_id } },
          }),
        ),
    }),
};
