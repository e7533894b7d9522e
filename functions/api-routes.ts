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

/** Each domain's tag in the OpenAPI document and the reference: named for people, not for folders. */
export const apiTags: Record<ApiDomain, { name: string; description: string }> = {
  public: { name: 'Service', description: 'Health, this reference, and the pricing model (no credential).' },
  access: {
    name: 'Organisations and workspaces',
    description: 'You, your organisations and their members, invitations, workspaces and their members.',
  },
  developer: { name: 'API keys', description: "A workspace's API keys: made with scopes, shown once." },
  agents: { name: 'Agents', description: 'Voice agents: prompt, voice, settings and post-call actions.' },
  startCall: { name: 'Calls', description: 'Start calls, read the call log, hang up, get recordings.' },
  numbers: { name: 'Phone numbers', description: "Buy, connect and release the organisation's numbers." },
  calling: { name: 'Calls', description: 'Start calls, read the call log, hang up, get recordings.' },
  contacts: {
    name: 'Contacts',
    description: 'Contacts, their notes, CSV and vCard imports, and the do-not-call list.',
  },
  campaigns: {
    name: 'Campaigns',
    description: 'Batch outbound calling: a campaign, its contacts and uploads.',
  },
  sms: { name: 'SMS', description: 'Send SMS, SMS campaigns, and the inbox of replies.' },
  knowledge: {
    name: 'Knowledge bases',
    description: 'Listings and documents agents can search during a call.',
  },
  integrations: {
    name: 'CRM integrations',
    description: 'Connect a CRM and sync its listings and contacts.',
  },
  billing: { name: 'Billing', description: 'Plan, subscription, credits and the ledger.' },
  webhookDeliveries: {
    name: 'Webhooks',
    description: 'Webhook endpoints, the signing secret, deliveries and resends.',
  },
  workflows: {
    name: 'Workflows',
    description: 'Automations: a trigger, then Signal, Task and Outcome stages.',
  },
  analytics: { name: 'Analytics', description: 'Call counts, durations and outcomes over time.' },
  evaluations: { name: 'Evaluations', description: 'Scripted test calls of an agent, judged.' },
  recordings: { name: 'Recordings', description: 'The public recording page a call-in link opens.' },
};
