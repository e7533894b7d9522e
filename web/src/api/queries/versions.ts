import { queryOptions } from '@tanstack/preact-query';
import { api, ok } from '../client';
import { pagedList } from './paged';

/**
 * An agent's versions: ['agent-versions', workspace, agent] is the prefix of its list and of each
 * version (invalidated after a save or a restore makes a new one).
 */

const prefix = (workspace_id: string, agent_id: string) =>
  ['agent-versions', workspace_id, agent_id] as const;

const getVersion = (workspace_id: string, agent_id: string, version: number) =>
  ok(
    api().GET('/api/v1/workspaces/{workspace_id}/agents/{agent_id}/versions/{version}', {
      params: { path: { workspace_id, agent_id, version: String(version) } },
    }),
  );

/** One version: when, by whom, what changed, and the whole agent as it was. */
export type AgentVersion = Awaited<ReturnType<typeof getVersion>>;

/** Makes a new version equal to `version`; the answer is the agent as it now is. */
export const restoreVersion = (workspace_id: string, agent_id: string, version: number) =>
  ok(
    api().POST('/api/v1/workspaces/{workspace_id}/agents/{agent_id}/versions/{version}/restore', {
      params: { path: { workspace_id, agent_id, version: String(version) } },
    }),
  );

/** The agent page with one version open (its Versions section); the call detail links to it. */
export const versionHref = (agent_id: string, version: number): string =>
  `/agents/${agent_id}?version=${version}#versions`;

export const versionQueries = {
  prefix,

  /** The paged list, newest first. */
  list: (workspace_id: string, agent_id: string) =>
    pagedList([...prefix(workspace_id, agent_id), 'list'], (cursor) =>
      ok(
        api().GET('/api/v1/workspaces/{workspace_id}/agents/{agent_id}/versions', {
          params: { path: { workspace_id, agent_id }, query: { cursor } },
        }),
      ),
    ),

  /**
   * Who made a version: the organisation's members' emails by user id (its first 100; a version made
   * by someone else, or by an API key, shows its id).
   */
  authors: (organisation_id: string) =>
    queryOptions({
      queryKey: ['version-authors', organisation_id],
      queryFn: async () => {
        const members = await ok(
          api().GET('/api/v1/organisations/{organisation_id}/members', {
            params: { path: { organisation_id }, query: { limit: 100 } },
          }),
        );
        return new Map(members.items.flatMap((m) => (m.user_id ? [[m.user_id, m.email] as const] : [])));
      },
      staleTime: 60_000,
    }),

  detail: (workspace_id: string, agent_id: string, version: number) =>
    queryOptions({
      queryKey: [...prefix(workspace_id, agent_id), version],
      queryFn: () => getVersion(workspace_id, agent_id, version),
      // A version never changes.
      staleTime: Infinity,
    }),
};
