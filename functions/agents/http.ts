import { domainHandler } from '../platform/http/index.js';
import { agentRoutes } from './routes.js';

/** The agents domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(agentRoutes, {
  createAgent: () => import('./handlers/create-agent.js'),
  listAgents: () => import('./handlers/list-agents.js'),
  getAgent: () => import('./handlers/get-agent.js'),
  updateAgent: () => import('./handlers/update-agent.js'),
  deleteAgent: () => import('./handlers/delete-agent.js'),
  listAgentToolTools: () => import('./handlers/list-agent-tool-tools.js'),
  testAgentTool: () => import('./handlers/test-agent-tool.js'),
  listAgentVersions: () => import('./handlers/list-agent-versions.js'),
  getAgentVersion: () => import('./handlers/get-agent-version.js'),
  restoreAgentVersion: () => import('./handlers/restore-agent-version.js'),
  createTestChatTicket: () => import('./handlers/create-test-chat-ticket.js'),
});
