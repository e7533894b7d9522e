import { queryOptions } from '@tanstack/preact-query';
import { api, ok } from '../client';
import { resourceQueries } from './resource';

/** The call campaigns' query keys and fetchers; ['campaigns', workspace] is their list (invalidated after a create). */

export const campaignQueries = {
  ...resourceQueries('/api/v1/workspaces/{workspace_id}/campaigns', 'campaigns'),

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
