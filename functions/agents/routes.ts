import { defineRoute } from '../platform/http/route.js';
import * as pagination from '../platform/pagination.js';
import * as agents from './schemas.js';

export const agentRoutes = {
  createAgent: defineRoute({
    method: 'POST',
    path: '/api/v1/workspaces/{workspace_id}/agents',
    summary: 'Create an agent',
    description: 'Create an agent: prompt, greeting, runtime settings, post-call actions (member)',
    auth: 'user_or_api_key',
    scope: 'agents:write',
    body: agents.CreateAgentBody,
    response: agents.AgentResponse,
    access: { table: 'readwrite' },
  }),
  listAgents: defineRoute({
    method: 'GET',
    path: '/api/v1/workspaces/{workspace_id}/agents',
    summary: 'List agents',
    description: "The workspace's agents (viewer)",
    auth: 'user_or_api_key',
    scope: 'agents:read',
    query: pagination.ListQuery,
    response: agents.AgentList,
    access: { table: 'readwrite' },
  }),
  getAgent: defineRoute({
    method: 'GET',
    path: '/api/v1/workspaces/{workspace_id}/agents/{agent_id}',
    summary: 'Get an agent',
    description: 'An agent (viewer)',
    auth: 'user_or_api_key',
    scope: 'agents:read',
    response: agents.AgentResponse,
    access: { table: 'readwrite' },
  }),
  updateAgent: defineRoute({
    method: 'PATCH',
    path: '/api/v1/workspaces/{workspace_id}/agents/{agent_id}',
    summary: 'Update an agent',
    description: 'Change an agent; settings merge, post-call actions are replaced (member)',
    auth: 'user_or_api_key',
    scope: 'agents:write',
    body: agents.UpdateAgentBody,
    response: agents.AgentResponse,
    access: { table: 'readwrite' },
  }),
  deleteAgent: defineRoute({
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace_id}/agents/{agent_id}',
    summary: 'Delete an agent',
    description: 'Delete an agent; its number stays in the workspace, disconnected (member)',
    auth: 'user_or_api_key',
    scope: 'agents:write',
    successStatus: 204,
    access: { table: 'readwrite' },
  }),
};
