import { mutationOptions } from '@tanstack/preact-query';
import { api, ok } from '../client';
import type { operations } from '../schema';

/**
 * An agent's own tools (docs/tools.md): trying one (`…/tools/{name}/test`) and listing an MCP server's
 * tools (`…/tools/{name}/list`). Both are POSTs that change nothing, so they are mutations, keyed by
 * the tool; the tools themselves are the agent's `tools` field (saved with the agent's PATCH).
 */

/** What a tool's test answers: `status`, `http_status`, `duration_ms` and the `result` the model would read. */
export type ToolTestResult = operations['testAgentTool']['responses'][200]['content']['application/json'];
/** An MCP server's tools, each with whether the agent offers it to the model. */
export type ToolListResult =
  operations['listAgentToolTools']['responses'][200]['content']['application/json'];

export const agentToolMutations = {
  /** Runs the saved tool `name` once with `arguments` (at most 10 tests a minute an agent: 429). */
  test: (workspace_id: string, agent_id: string, name: string) =>
    mutationOptions({
      mutationKey: ['agent-tool-test', workspace_id, agent_id, name],
      mutationFn: (args: Record<string, unknown>) =>
        ok(
          api().POST('/api/v1/workspaces/{workspace_id}/agents/{agent_id}/tools/{name}/test', {
            params: { path: { workspace_id, agent_id, name } },
            body: { arguments: args },
          }),
        ),
    }),

  /** The tools the saved MCP server `name` offers (`error` and none when it cannot be reached). */
  list: (workspace_id: string, agent_id: string, name: string) =>
    mutationOptions({
      mutationKey: ['agent-tool-list', workspace_id, agent_id, name],
      mutationFn: () =>
        ok(
          api().POST('/api/v1/workspaces/{workspace_id}/agents/{agent_id}/tools/{name}/list', {
            params: { path: { workspace_id, agent_id, name } },
          }),
        ),
    }),
};
