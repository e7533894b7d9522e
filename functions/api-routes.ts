import { accessRoutes } from './access/routes.js';
import { agentRoutes } from './agents/routes.js';
import { analyticsRoutes } from './analytics/routes.js';
import { billingRoutes } from './billing/routes.js';
import { campaignRoutes } from './campaigns/routes.js';
import { callRoutes, startCallRoutes } from './calling/routes.js';
import { contactRoutes } from './contacts/routes.js';
import { developerRoutes } from './developer/routes.js';
import { evaluationRoutes } from './evaluations/routes.js';
import { integrationRoutes } from './integrations/routes.js';
import { knowledgeRoutes } from './knowledge/routes.js';
import { numberRoutes } from './numbers/routes.js';
import { publicRoutes } from './public/routes.js';
import { recordingRoutes } from './recordings/routes.js';
import { smsRoutes } from './sms/routes.js';
import { webhookDeliveryRoutes } from './webhook-deliveries/routes.js';
import { workflowRoutes } from './workflows/routes.js';

/**
 * Every HTTP route of the API, by domain, in the order of the API reference. The catalog gives each
 * domain its function, the OpenAPI document and the API reference are generated from it, and the
 * runtime middleware reads the same declarations: nothing about a route is written twice.
 */
export const apiRoutes = {
  public: publicRoutes,
  access: accessRoutes,
  developer: developerRoutes,
  agents: agentRoutes,
  startCall: startCallRoutes,
  numbers: numberRoutes,
  calling: callRoutes,
  contacts: contactRoutes,
  campaigns: campaignRoutes,
  sms: smsRoutes,
  knowledge: knowledgeRoutes,
  integrations: integrationRoutes,
  billing: billingRoutes,
  webhookDeliveries: webhookDeliveryRoutes,
  workflows: workflowRoutes,
  analytics: analyticsRoutes,
  evaluations: evaluationRoutes,
  recordings: recordingRoutes,
};

export type ApiDomain = keyof typeof apiRoutes;
