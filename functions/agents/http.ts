import { domainHandler } from '../platform/http/index.js';
import { agentRoutes } from './routes.js';
import { handler as createAgent } from './handlers/create-agent.js';
import { handler as listAgents } from './handlers/list-agents.js';
import { handler as getAgent } from './handlers/get-agent.js';
import { handler as updateAgent } from './handlers/update-agent.js';
import { handler as deleteAgent } from './handlers/delete-agent.js';

/** The agents domain's one HTTP function: every route of ./routes.ts, dispatched on API Gateway's routeKey. */
export const handler = domainHandler(agentRoutes, {
  createAgent,
  listAgents,
  getAgent,
  updateAgent,
  deleteAgent,
});
