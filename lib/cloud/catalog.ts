import type { FunctionSpec, StackGroup } from './catalog-types.js';
import { apiRoutes, type ApiDomain } from '../../functions/api-routes.js';
import { unionAccess } from '../../functions/platform/http/route.js';
import { VIEWER } from '../../functions/public/docs-viewer.js';
import { takesCursor } from '../../functions/platform/pagination.js';

export type { FunctionSpec, HttpRoute, HttpMethod, StackGroup } from './catalog-types.js';

/** A domain's one HTTP function: its routes from the domain's routes.ts, its grants their union. */
function domainApi(
  id: string,
  domain: ApiDomain,
  entry: string,
  group: StackGroup,
  options: Pick<FunctionSpec, 'timeoutSeconds' | 'memoryMb' | 'bundleFiles'> = {},
): FunctionSpec {
  const http = Object.values(apiRoutes[domain]);
  // A list's cursors are sealed with the cursor-key secret (the HTTP kernel opens and seals them).
  const accesses = http.map((route) => route.access);
  if (http.some((route) => takesCursor(route.query))) accesses.push({ secrets: ['cursor-key'] });
  return { id, entry, group, http, access: unionAccess(accesses), ...options };
}

/**
 * Every function of the service, declared once: its handler file, its triggers and what it may touch.
 * The CDK stack (lib/cloud/stack.ts) and the local stack (lib/local/) are both built from this list. HTTP
 * routes are declared in each domain's routes.ts (functions/api-routes.ts lists them); a domain's
 * routes are served by one function. Start-call keeps its own (hot path); queue consumers, schedules
 * and provider webhooks one each. A test fails when a handler file is not named here.
 */
export const catalog: FunctionSpec[] = [
  // ── Public: health, OpenAPI, API reference ───────────────────────────────────────────────────
  // The API reference's viewer script (redoc) is copied into this function's asset only.
  domainApi('PublicApi', 'public', 'functions/public/http.ts', 'public', { bundleFiles: [VIEWER] }),
  // The public recording page and its JSON (recordings/): no auth, the short code is the secret.
  domainApi('RecordingsApi', 'recordings', 'functions/recordings/http.ts', 'public'),
  // ── Identity, organisations, workspaces, members (access/); API keys (developer/) ─────────────
  domainApi('AccessApi', 'access', 'functions/access/http.ts', 'access', { timeoutSeconds: 20 }),
  domainApi('DeveloperApi', 'developer', 'functions/developer/http.ts', 'access'),
  // ── Agents, numbers, calls (agents/, numbers/, calling/) ─────────────────────────────────────
  domainApi('AgentsApi', 'agents', 'functions/agents/http.ts', 'agents'),
  domainApi('StartCall', 'startCall', 'functions/calling/handlers/start-call.ts', 'calling'),
  domainApi('NumbersApi', 'numbers', 'functions/numbers/http.ts', 'numbers', { timeoutSeconds: 20 }),
  domainApi('CallingApi', 'calling', 'functions/calling/http.ts', 'calling', { timeoutSeconds: 20 }),
  // Call analytics (analytics/): read from the counters calling keeps on write.
  domainApi('AnalyticsApi', 'analytics', 'functions/analytics/http.ts', 'calling'),
  // Agent evaluations (evaluations/): routes, and each scenario played as a scripted call and judged.
  domainApi('EvaluationsApi', 'evaluations', 'functions/evaluations/http.ts', 'agents'),
  {
    id: 'RunEvaluationScenario',
    group: 'agents',
    entry: 'functions/evaluations/handlers/run-evaluation-scenario.ts',
    queue: { name: 'evaluations', batchSize: 5 },
    // The scenario's caller talks to the agent through the conversation engine (its model, its
    // knowledge bases).
    access: { table: 'readwrite', bucket: 'read', languageModel: true, secrets: ['tool-headers-key'] },
    // A scenario's turns each ask the model (a real one takes seconds a turn).
    timeoutSeconds: 150,
  },
  {
    // Sends the scenario messages of runs whose start stopped between the charge and the send.
    id: 'SweepEvaluations',
    group: 'agents',
    entry: 'functions/evaluations/handlers/sweep-evaluations.ts',
    schedule: { expression: 'rate(1 minute)', localEverySeconds: 5 },
    access: { table: 'readwrite', sendsTo: ['evaluations'] },
    timeoutSeconds: 60,
  },
  {
    id: 'DispatchCalls',
    group: 'calling',
    entry: 'functions/calling/handlers/dispatch-calls.ts',
    queue: { name: 'calls', batchSize: 10 },
    access: { table: 'readwrite', sendsTo: ['postCall', 'workspaceEvents'], secrets: ['telephony'] },
  },
  {
    id: 'SweepCalls',
    group: 'calling',
    entry: 'functions/calling/handlers/sweep-calls.ts',
    schedule: { expression: 'rate(1 minute)', localEverySeconds: 5 },
    access: {
      table: 'readwrite',
      sendsTo: ['calls', 'postCall', 'workspaceEvents'],
      secrets: ['telephony'],
    },
    timeoutSeconds: 60,
  },
  // ── The voice relay (conversation/): Twilio ConversationRelay's WebSocket, the agent's side ──
  {
    // Each frame one invocation: the setup, a caller's prompt (a whole turn: the model streamed, tools,
    // the words posted back), an interruption, a key press; the end writes the conversation to the call.
    id: 'ConversationRelay',
    group: 'conversation',
    entry: 'functions/conversation/handlers/relay.ts',
    webSocket: { routes: ['$connect', '$default', '$disconnect'] },
    access: {
      table: 'readwrite',
      bucket: 'read',
      sendsTo: ['postCall', 'workspaceEvents'],
      secrets: ['telephony', 'tool-headers-key'],
      manageConnections: true,
      languageModel: true,
    },
    // API Gateway ends an integration at 29 s; a turn is bounded at 24 s (conversation/engine/turn.ts).
    timeoutSeconds: 28,
    memoryMb: 1024,
  },
  // ── Billing (billing/) ────────────────────────────────────────────────────────────────────────
  domainApi('BillingApi', 'billing', 'functions/billing/http.ts', 'billing', { timeoutSeconds: 20 }),
  {
    id: 'RenewCredits',
    group: 'billing',
    entry: 'functions/billing/handlers/renew-credits.ts',
    schedule: { expression: 'rate(1 hour)', localEverySeconds: 5 },
    access: { table: 'readwrite' },
    timeoutSeconds: 300,
  },
  {
    id: 'BillExtraNumbers',
    group: 'billing',
    entry: 'functions/billing/handlers/bill-extra-numbers.ts',
    schedule: { expression: 'rate(1 hour)', localEverySeconds: 10 },
    access: { table: 'readwrite', secrets: ['payments'] },
    timeoutSeconds: 300,
  },
  // ── Contacts, their notes, the organisations' suppression lists (contacts/) ───────────────────
  domainApi('ContactsApi', 'contacts', 'functions/contacts/http.ts', 'contacts', { timeoutSeconds: 20 }),
  {
    // Contact imports: the plan and chunk steps (each chunk its own message; imports.ts), and the purge
    // of a deleted contact's notes and call links past what its request deletes (purge.ts).
    id: 'ProcessContactImport',
    group: 'contacts',
    entry: 'functions/contacts/handlers/process-contact-import.ts',
    queue: { name: 'imports', batchSize: 4 },
    access: { table: 'readwrite', bucket: 'readwrite', sendsTo: ['imports'] },
    timeoutSeconds: 150,
    memoryMb: 1024,
  },
  // ── Knowledge bases (knowledge/): routes, document extraction and index builds ─────────────────
  domainApi('KnowledgeApi', 'knowledge', 'functions/knowledge/http.ts', 'knowledge', { timeoutSeconds: 30 }),
  {
    // A document's extraction (PDF, DOCX, text) and a base's search-index build (documents.ts, search-index.ts).
    id: 'ProcessKnowledge',
    group: 'knowledge',
    entry: 'functions/knowledge/handlers/process-knowledge.ts',
    queue: { name: 'knowledge', batchSize: 2 },
    access: { table: 'readwrite', bucket: 'readwrite', sendsTo: ['knowledge'] },
    timeoutSeconds: 150,
    memoryMb: 1536,
  },
  // ── CRM integrations (integrations/): routes, sync jobs page by page, the schedule ──────────────
  domainApi('IntegrationsApi', 'integrations', 'functions/integrations/http.ts', 'integrations', {
    timeoutSeconds: 20,
  }),
  {
    id: 'SyncIntegrationPage',
    group: 'integrations',
    entry: 'functions/integrations/handlers/sync-integration-page.ts',
    queue: { name: 'integrations', batchSize: 2 },
    access: {
      table: 'readwrite',
      sendsTo: ['integrations', 'knowledge', 'workspaceEvents'],
      secrets: ['crm'],
    },
    timeoutSeconds: 150,
  },
  {
    id: 'ScheduleIntegrationSyncs',
    group: 'integrations',
    entry: 'functions/integrations/handlers/schedule-integration-syncs.ts',
    schedule: { expression: 'rate(15 minutes)', localEverySeconds: 60 },
    access: { table: 'readwrite', sendsTo: ['integrations'] },
    timeoutSeconds: 60,
  },
  // ── Batch outbound campaigns (campaigns/): routes, uploads and dialer passes, the dialer's tick ──
  domainApi('CampaignsApi', 'campaigns', 'functions/campaigns/http.ts', 'campaigns', { timeoutSeconds: 30 }),
  {
    // Dialer passes (start-call inside: the calls queue) and uploads' plan/chunk steps (imports.ts).
    id: 'ProcessCampaignMessages',
    group: 'campaigns',
    entry: 'functions/campaigns/handlers/process-campaign-messages.ts',
    queue: { name: 'campaigns', batchSize: 4 },
    access: { table: 'readwrite', bucket: 'readwrite', sendsTo: ['campaigns', 'calls', 'workspaceEvents'] },
    // An upload chunk (250 rows, each a contact and a batch contact) takes as long as a contact import's.
    timeoutSeconds: 150,
    memoryMb: 1024,
  },
  {
    // One dialer pass per campaign with work, each tick.
    id: 'TickCampaigns',
    group: 'campaigns',
    entry: 'functions/campaigns/handlers/tick-campaigns.ts',
    schedule: { expression: 'rate(1 minute)', localEverySeconds: 1 },
    access: { table: 'readwrite', sendsTo: ['campaigns'] },
    timeoutSeconds: 30,
  },
  // ── SMS (sms/): direct messages, campaigns, the inbox; campaign sends and held sends on their queue ─
  domainApi('SmsApi', 'sms', 'functions/sms/http.ts', 'sms', { timeoutSeconds: 30 }),
  {
    // Campaign audience pages and send chunks; messages held while billing was past due.
    id: 'ProcessSms',
    group: 'sms',
    entry: 'functions/sms/handlers/process-sms.ts',
    queue: { name: 'sms', batchSize: 4 },
    access: { table: 'readwrite', sendsTo: ['sms'], secrets: ['telephony'] },
    // A chunk is 50 sends; one cut short is received again and resumes where each recipient stood.
    timeoutSeconds: 60,
  },
  // ── Workflows (workflows/): routes and the external trigger, runs advanced on their queue ───────
  domainApi('WorkflowsApi', 'workflows', 'functions/workflows/http.ts', 'workflows', { timeoutSeconds: 20 }),
  {
    // Advances a run stage by stage; a task goes through start-call (the calls queue), the SMS service
    // (the telephony provider; held sends on the sms queue), email, contacts.
    id: 'AdvanceWorkflowRuns',
    group: 'workflows',
    entry: 'functions/workflows/handlers/advance-workflow-runs.ts',
    queue: { name: 'workflowRuns', batchSize: 5 },
    access: {
      table: 'readwrite',
      sendsTo: ['calls', 'sms', 'workspaceEvents'],
      secrets: ['telephony'],
      email: true,
    },
    timeoutSeconds: 30,
  },
  {
    // Puts running runs whose advance message was lost or dead-lettered back on their queue.
    id: 'SweepWorkflowRuns',
    group: 'workflows',
    entry: 'functions/workflows/handlers/sweep-workflow-runs.ts',
    schedule: { expression: 'rate(1 minute)', localEverySeconds: 5 },
    access: { table: 'readwrite', sendsTo: ['workflowRuns'] },
    timeoutSeconds: 60,
  },
  // ── Post-call pipeline (post-call/) and webhook deliveries to customers (webhook-deliveries/) ──
  {
    id: 'ProcessCallEnded',
    group: 'post-call',
    entry: 'functions/post-call/handlers/process-call-ended.ts',
    queue: { name: 'postCall', batchSize: 5 },
    // Post-call analysis asks the language model (twice at most per call); PII redaction's
    // `recordings: "drop"` deletes the call's recording once analysed.
    access: { table: 'readwrite', bucket: 'readwrite', sendsTo: ['postCallActions'], languageModel: true },
    timeoutSeconds: 120,
  },
  {
    id: 'RunPostCallAction',
    group: 'post-call',
    entry: 'functions/post-call/handlers/run-post-call-action.ts',
    queue: { name: 'postCallActions', batchSize: 5 },
    access: {
      table: 'readwrite',
      sendsTo: ['postCallActions', 'webhookDelivery'],
      secrets: ['telephony'],
      email: true,
    },
    timeoutSeconds: 60,
  },
  domainApi(
    'WebhookDeliveriesApi',
    'webhookDeliveries',
    'functions/webhook-deliveries/http.ts',
    'webhook-deliveries',
    {
      timeoutSeconds: 30,
    },
  ),
  {
    id: 'DeliverWebhook',
    group: 'webhook-deliveries',
    entry: 'functions/webhook-deliveries/handlers/deliver-webhook.ts',
    queue: { name: 'webhookDelivery', batchSize: 5 },
    access: { table: 'readwrite', sendsTo: ['webhookDelivery'], email: true },
    timeoutSeconds: 30,
  },
  {
    // Workspace events (platform/workspace-events.ts): webhook endpoints' deliveries, then the
    // subscribers of functions/event-subscribers.ts. A subscriber's resources are declared here.
    id: 'RouteWorkspaceEvents',
    group: 'webhook-deliveries',
    entry: 'functions/webhook-deliveries/handlers/route-workspace-events.ts',
    queue: { name: 'workspaceEvents', batchSize: 5 },
    // campaigns: the campaigns subscriber nudges the dialer when a campaign's call ended.
    // workflowRuns: the workflows subscriber starts a run per matching workflow and event.
    access: { table: 'readwrite', sendsTo: ['webhookDelivery', 'campaigns', 'workflowRuns'] },
    timeoutSeconds: 60,
  },
  {
    // Workspace events recorded with their write (platform/outbox.ts) that their request could not send.
    id: 'SweepOutboxEvents',
    group: 'webhook-deliveries',
    entry: 'functions/webhook-deliveries/handlers/sweep-outbox-events.ts',
    schedule: { expression: 'rate(1 minute)', localEverySeconds: 5 },
    // An outbox item names its queue: workspace events, and a deleted contact's purge (imports).
    access: { table: 'readwrite', sendsTo: ['workspaceEvents', 'imports'] },
    timeoutSeconds: 60,
  },
  // ── Provider webhooks (inbound-webhooks/): each on its own function URL, signature checked first ──
  {
    id: 'IdentityWebhook',
    group: 'provider-webhooks',
    entry: 'functions/inbound-webhooks/identity.ts',
    functionUrl: { path: '/webhooks/identity' },
    access: { table: 'readwrite', secrets: ['identity-webhook'] },
  },
  {
    id: 'TelephonyVoiceWebhook',
    group: 'provider-webhooks',
    entry: 'functions/inbound-webhooks/telephony-voice.ts',
    functionUrl: { path: '/webhooks/telephony/voice' },
    access: {
      table: 'readwrite',
      bucket: 'readwrite',
      sendsTo: ['postCall', 'workspaceEvents'],
      secrets: ['telephony'],
    },
    timeoutSeconds: 30,
  },
  {
    // The provider asks what to do when a call's relay session ended: hang up, or dial the transfer number.
    id: 'TelephonyRelayEndedWebhook',
    group: 'provider-webhooks',
    entry: 'functions/inbound-webhooks/telephony-relay-ended.ts',
    // A warm transfer's TwiML names the whisper and transfer-status webhooks.
    functionUrl: {
      path: '/webhooks/telephony/relay-ended',
      handsOut: ['/webhooks/telephony/whisper', '/webhooks/telephony/transfer-status'],
    },
    // readwrite: a voicemail left, a transfer's outcome are recorded on the call.
    access: { table: 'readwrite', secrets: ['telephony'] },
  },
  {
    // The TwiML App's voice URL: a browser's web call (calling/web-call.ts) joins ConversationRelay.
    id: 'TelephonyWebCallWebhook',
    group: 'provider-webhooks',
    entry: 'functions/inbound-webhooks/telephony-web-call.ts',
    // Its TwiML names the voice webhook for the call's recording callback.
    functionUrl: { path: '/webhooks/telephony/web-call', handsOut: ['/webhooks/telephony/voice'] },
    access: { table: 'readwrite', secrets: ['telephony'] },
  },
  {
    // A warm transfer's person answered: what they hear first (the whisper stored on the call).
    id: 'TelephonyWhisperWebhook',
    group: 'provider-webhooks',
    entry: 'functions/inbound-webhooks/telephony-whisper.ts',
    functionUrl: { path: '/webhooks/telephony/whisper' },
    access: { table: 'read', secrets: ['telephony'] },
  },
  {
    // A warm transfer's `<Dial action>`: how the dial ended, recorded once; not connected, the caller is told.
    id: 'TelephonyTransferStatusWebhook',
    group: 'provider-webhooks',
    entry: 'functions/inbound-webhooks/telephony-transfer-status.ts',
    functionUrl: { path: '/webhooks/telephony/transfer-status' },
    access: { table: 'readwrite', secrets: ['telephony'] },
  },
  {
    // Answering-machine detection results of outbound calls: a machine stops the agent (its relay session ended).
    id: 'TelephonyAmdWebhook',
    group: 'provider-webhooks',
    entry: 'functions/inbound-webhooks/telephony-amd.ts',
    functionUrl: { path: '/webhooks/telephony/amd' },
    access: { table: 'readwrite', secrets: ['telephony'], manageConnections: true },
  },
  {
    // Inbound SMS and delivery status callbacks; hot replies are emailed, sms.received published.
    id: 'TelephonySmsWebhook',
    group: 'provider-webhooks',
    entry: 'functions/inbound-webhooks/telephony-sms.ts',
    functionUrl: { path: '/webhooks/telephony/sms' },
    access: { table: 'readwrite', sendsTo: ['workspaceEvents'], secrets: ['telephony'], email: true },
    timeoutSeconds: 30,
  },
  {
    // The voice runtime's knowledge tool: the call's agent's knowledge bases searched (knowledge/voice-tool.ts).
    id: 'TelephonyKnowledgeWebhook',
    group: 'provider-webhooks',
    entry: 'functions/inbound-webhooks/telephony-knowledge.ts',
    functionUrl: { path: '/webhooks/telephony/knowledge' },
    access: { table: 'read', bucket: 'read', secrets: ['telephony'] },
    timeoutSeconds: 20,
  },
  {
    id: 'BillingWebhook',
    group: 'provider-webhooks',
    entry: 'functions/inbound-webhooks/payments.ts',
    functionUrl: { path: '/webhooks/billing' },
    // Back in good standing: the held post-call actions and SMS sends go back on their queues.
    access: { table: 'readwrite', secrets: ['payments'], sendsTo: ['postCallActions', 'sms'] },
  },
];

export const httpFunctions = () => catalog.filter((f) => f.http && f.http.length > 0);
export const queueFunctions = () => catalog.filter((f) => f.queue);
export const scheduledFunctions = () => catalog.filter((f) => f.schedule);
export const urlFunctions = () => catalog.filter((f) => f.functionUrl);
export const webSocketFunctions = () => catalog.filter((f) => f.webSocket);
