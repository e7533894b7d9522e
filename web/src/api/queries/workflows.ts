import { queryOptions } from '@tanstack/preact-query';
import { api, ok } from '../client';
import { pagedList } from './paged';

/** The workflows' query keys and fetchers: their list, one workflow, and its runs. */

const lists = (workspace_id: string) => ['workflows', workspace_id] as const;

export const workflowQueries = {
  lists,

  list: (workspace_id: string) =>
    pagedList(lists(workspace_id), (cursor) =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/workflows', {
          params: { path: { workspace_id }, query: { cursor } },
        }),
      ),
    ),

  detail: (workspace_id: string, workflow_id: string) =>
    queryOptions({
      queryKey: ['workflow', workspace_id, workflow_id],
      queryFn: () =>
        ok(
          api().GET('/api/v1/workspaces/{workspace_id}/workflows/{workflow_id}', {
            params: { path: { workspace_id, workflow_id } },
          }),
        ),
    }),

  runs: (workspace_id: string, workflow_id: string) =>
    pagedList(['runs', workspace_id, workflow_id], (cursor) =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/workflows/{workflow_id}/runs', {
          params: { path: { workspace_id, workflow_id }, query: { cursor } },
        }),
      ),
    ),
};
