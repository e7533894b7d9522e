import { queryOptions } from '@tanstack/preact-query';
import { api, ok } from '../client';
import { pagedList } from './paged';
import { resourceQueries } from './resource';

/**
 * The call campaigns' query keys and fetchers; ['campaigns', workspace] is their list (invalidated
 * after a create); ['campaign', workspace, id] one campaign, and its contacts under it.
 */

const getCampaign = (workspace_id: string, campaign_id: string) =>
  ok(
    api().GET('/api/v1/workspaces/{workspace_id}/campaigns/{campaign_id}', {
      params: { path: { workspace_id, campaign_id } },
    }),
  );

/** One campaign: its settings, status, progress, next dial and upload warnings. */
export type Campaign = Awaited<ReturnType<typeof getCampaign>>;

export const campaignQueries = {
  ...resourceQueries('/api/v1/workspaces/{workspace_id}/campaigns', 'campaigns'),

  /** The campaign's batch contacts in upload order: state, attempts (each with its outcome). */
  contacts: (workspace_id: string, campaign_id: string) =>
    pagedList(['campaign', workspace_id, campaign_id, 'contacts'], (cursor) =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/campaigns/{campaign_id}/contacts', {
          params: { path: { workspace_id, campaign_id }, query: { cursor } },
        }),
      ),
    ),

  detail: (workspace_id: string, campaign_id: string) =>
    queryOptions({
      queryKey: ['campaign', workspace_id, campaign_id],
      queryFn: () => getCampaign(workspace_id, campaign_id),
    }),
};
