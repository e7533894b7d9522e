import { queryOptions } from '@tanstack/preact-query';
import { api, ok } from '../client';
import type { operations } from '../schema';
import { resourceQueries } from './resource';

/**
 * The agents' query keys and fetchers. ['agents', workspace] is the prefix of every list of them
 * (invalidated after a create); ['agent', workspace, id] is one agent (set from a PATCH's answer).
 */

const getAgent = (workspace_id: string, agent_id: string) =>
  ok(
    api().GET('/api/v1/workspaces/{workspace_id}/agents/{agent_id}', {
      params: { path: { workspace_id, agent_id } },
    }),
  );

export type Agent = Awaited<ReturnType<typeof getAgent>>;

/** What a PATCH of an agent takes (any of its fields). */
export type AgentBody = NonNullable<operations['updateAgent']['requestBody']>['content']['application/json'];

/** The PATCH of an agent; its answer is the saved agent (set as `agentQueries.detail`'s data). */
export const updateAgent = (workspace_id: string, agent_id: string, body: AgentBody) =>
  ok(
    api().PATCH('/api/v1/workspaces/{workspace_id}/agents/{agent_id}', {
      params: { path: { workspace_id, agent_id } },
      body,
    }),
  );

export const agentQueries = {
  /** `lists(ws)` is the key prefix; `list` the agents page's paged list; `all` the first 100, for pickers. */
  ...resourceQueries('/api/v1/workspaces/{workspace_id}/agents', 'agents'),

  detail: (workspace_id: string, agent_id: string) =>
    queryOptions({
      queryKey: ['agent', workspace_id, agent_id],
      queryFn: () => getAgent(workspace_id, agent_id),
    }),
};
