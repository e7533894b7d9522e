import type { FunctionSpec } from './catalog-types.js';
import * as access from '../functions/access/schemas.js';
import * as apiKeys from '../functions/developer/api-key-schemas.js';
import * as billing from '../functions/billing/schemas.js';
import * as agents from '../functions/agents/schemas.js';
import * as numbers from '../functions/numbers/schemas.js';
import * as calling from '../functions/calling/schemas.js';
import * as webhooks from '../functions/webhooks/schemas.js';

export type { FunctionSpec, HttpRoute, HttpMethod } from './catalog-types.js';

/**
 * Every function of the service, declared once: its handler file, its triggers and what it may touch.
 * The CDK stack (lib/stack.ts) and the local stack (lib/local/) are both built from this list, and the
 * OpenAPI document is generated from its routes. A test fails when a handler file is not named here.
 *
 * Keep entries grouped by domain, in the order of API.md.
 */
export const catalog: FunctionSpec[] = [
  // ── Health and description ────────────────────────────────────────────────────────────────
  {
    id: 'Health',
    entry: 'functions/public/handlers/health.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/health',
        summary: 'Health of the table, queues and bucket',
        auth: 'none',
      },
    ],
    access: { table: 'read', bucket: 'read', sendsTo: ['calls'] },
  },
  {
    id: 'OpenApi',
    entry: 'functions/public/handlers/openapi.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/openapi.json',
        summary: 'OpenAPI 3.1 description of every route',
        auth: 'none',
      },
    ],
    access: {},
  },
  // ── Identity, organisations, workspaces, members, API keys (access/, developer/) ─────────────
  // Every authenticated route may write: the first request of a user creates their profile, and an API
  // key's use records last_used_at. Organisation routes take a user's JWT only (an API key is 403).
  {
    id: 'VerifyAuth',
    entry: 'functions/access/handlers/verify-auth.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/auth/verify',
        summary: "The caller's user id and email",
        auth: 'user',
        response: access.VerifyResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'GetMe',
    entry: 'functions/access/handlers/get-me.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/me',
        summary: "The caller's profile and organisations",
        auth: 'user',
        response: access.MeResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'UpdateMe',
    entry: 'functions/access/handlers/update-me.ts',
    http: [
      {
        method: 'PATCH',
        path: '/api/v1/me',
        summary: 'Change your name',
        auth: 'user',
        body: access.UpdateMeBody,
        response: access.MeResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'CreateOrganisation',
    entry: 'functions/access/handlers/create-organisation.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/organisations',
        summary:
          'Create an organisation: you become its owner; a Default workspace; the Free plan with 500 credits',
        auth: 'user',
        body: access.CreateOrganisationBody,
        response: access.OrganisationResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'ListOrganisations',
    entry: 'functions/access/handlers/list-organisations.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/organisations',
        summary: 'Your organisations',
        auth: 'user',
        query: access.ListQuery,
        response: access.OrganisationList,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'GetOrganisation',
    entry: 'functions/access/handlers/get-organisation.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/organisations/{organisation_id}',
        summary: 'An organisation (members)',
        auth: 'user',
        response: access.OrganisationResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'UpdateOrganisation',
    entry: 'functions/access/handlers/update-organisation.ts',
    http: [
      {
        method: 'PATCH',
        path: '/api/v1/organisations/{organisation_id}',
        summary: 'Rename an organisation (owner, admin)',
        auth: 'user',
        body: access.UpdateOrganisationBody,
        response: access.OrganisationResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'ListOrganisationMembers',
    entry: 'functions/access/handlers/list-organisation-members.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/organisations/{organisation_id}/members',
        summary: 'Members and pending invitations (members)',
        auth: 'user',
        query: access.ListQuery,
        response: access.OrganisationMemberList,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'CreateInvitation',
    entry: 'functions/access/handlers/create-invitation.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/organisations/{organisation_id}/invitations',
        summary:
          'Invite an address as regular or admin (owner, admin); 200 when it was already pending (resent)',
        auth: 'user',
        body: access.InvitationBody,
        response: access.InvitationResponse,
      },
    ],
    access: { table: 'readwrite', email: true },
  },
  {
    id: 'ResendInvitation',
    entry: 'functions/access/handlers/resend-invitation.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/organisations/{organisation_id}/invitations/{invitation_id}/resend',
        summary: 'Send a pending invitation again (owner, admin)',
        auth: 'user',
        response: access.InvitationResponse,
        successStatus: 200,
      },
    ],
    access: { table: 'readwrite', email: true },
  },
  {
    id: 'AcceptInvitation',
    entry: 'functions/access/handlers/accept-invitation.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/invitations/{invitation_id}/accept',
        summary: 'Accept an invitation addressed to your email',
        auth: 'user',
        response: access.AcceptInvitationResponse,
        successStatus: 200,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'ListMyInvitations',
    entry: 'functions/access/handlers/list-my-invitations.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/invitations',
        summary: 'Pending invitations addressed to your email',
        auth: 'user',
        query: access.ListQuery,
        response: access.MyInvitationList,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'UpdateOrganisationMember',
    entry: 'functions/access/handlers/update-organisation-member.ts',
    http: [
      {
        method: 'PATCH',
        path: '/api/v1/organisations/{organisation_id}/members/{user_id}',
        summary: "Change a member's role to regular or admin (owner, admin)",
        auth: 'user',
        body: access.UpdateOrganisationMemberBody,
        response: access.OrganisationMemberResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'RemoveOrganisationMember',
    entry: 'functions/access/handlers/remove-organisation-member.ts',
    http: [
      {
        method: 'DELETE',
        path: '/api/v1/organisations/{organisation_id}/members/{user_id}',
        summary: 'Remove a member, or withdraw a pending one by invitation id (owner, admin)',
        auth: 'user',
        successStatus: 204,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'CreateWorkspace',
    entry: 'functions/access/handlers/create-workspace.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/organisations/{organisation_id}/workspaces',
        summary: 'Create a workspace (owner, admin)',
        auth: 'user',
        body: access.CreateWorkspaceBody,
        response: access.WorkspaceResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'ListWorkspaces',
    entry: 'functions/access/handlers/list-workspaces.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/organisations/{organisation_id}/workspaces',
        summary: 'Workspaces you have a role in (members)',
        auth: 'user',
        query: access.ListQuery,
        response: access.WorkspaceList,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'GetWorkspace',
    entry: 'functions/access/handlers/get-workspace.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/workspaces/{workspace_id}',
        summary: 'A workspace and its settings (workspace members, or an API key with workspace:read)',
        auth: 'user_or_api_key',
        response: access.WorkspaceResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'UpdateWorkspace',
    entry: 'functions/access/handlers/update-workspace.ts',
    http: [
      {
        method: 'PATCH',
        path: '/api/v1/workspaces/{workspace_id}',
        summary: 'Change workspace settings (workspace admin)',
        auth: 'user',
        body: access.UpdateWorkspaceBody,
        response: access.WorkspaceResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'DeleteWorkspace',
    entry: 'functions/access/handlers/delete-workspace.ts',
    http: [
      {
        method: 'DELETE',
        path: '/api/v1/workspaces/{workspace_id}',
        summary: 'Delete a workspace (workspace admin)',
        auth: 'user',
        successStatus: 204,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'ListWorkspaceMembers',
    entry: 'functions/access/handlers/list-workspace-members.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/workspaces/{workspace_id}/members',
        summary: 'Members with their effective roles (workspace members)',
        auth: 'user',
        query: access.ListQuery,
        response: access.WorkspaceMemberList,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'PutWorkspaceMember',
    entry: 'functions/access/handlers/put-workspace-member.ts',
    http: [
      {
        method: 'PUT',
        path: '/api/v1/workspaces/{workspace_id}/members/{user_id}',
        summary: "Set an organisation member's workspace role (workspace admin)",
        auth: 'user',
        body: access.PutWorkspaceMemberBody,
        response: access.WorkspaceMemberResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'RemoveWorkspaceMember',
    entry: 'functions/access/handlers/remove-workspace-member.ts',
    http: [
      {
        method: 'DELETE',
        path: '/api/v1/workspaces/{workspace_id}/members/{user_id}',
        summary: "Remove a user's workspace role (workspace admin)",
        auth: 'user',
        successStatus: 204,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'CreateApiKey',
    entry: 'functions/developer/handlers/create-api-key.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/workspaces/{workspace_id}/api-keys',
        summary: 'Create an API key; the whole key is in this response only (members, plan permitting)',
        auth: 'user',
        body: apiKeys.CreateApiKeyBody,
        response: apiKeys.ApiKeyWithSecretResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'ListApiKeys',
    entry: 'functions/developer/handlers/list-api-keys.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/workspaces/{workspace_id}/api-keys',
        summary: "The workspace's API keys, never their secrets (members)",
        auth: 'user',
        query: apiKeys.ApiKeyListQuery,
        response: apiKeys.ApiKeyList,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'RevokeApiKey',
    entry: 'functions/developer/handlers/revoke-api-key.ts',
    http: [
      {
        method: 'DELETE',
        path: '/api/v1/workspaces/{workspace_id}/api-keys/{key_id}',
        summary: 'Revoke an API key: 401 from now on (members)',
        auth: 'user',
        successStatus: 204,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'RotateApiKey',
    entry: 'functions/developer/handlers/rotate-api-key.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/workspaces/{workspace_id}/api-keys/{key_id}/rotate',
        summary: 'A new secret for an API key, shown once; the old one stops working (members)',
        auth: 'user',
        response: apiKeys.ApiKeyWithSecretResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'IdentityWebhook',
    entry: 'functions/webhooks/handlers/identity.ts',
    functionUrl: { path: '/webhooks/identity' },
    access: { table: 'readwrite', secrets: ['identity-webhook'] },
  },
  // (end of access)
  // ── Agents, numbers, calls, telephony webhook, call lifecycle (agents/, numbers/, calling/) ─────
  // JWT or an API key of the workspace (scopes: agents:read/agents:write, start_call, calls:read).
  // Routes that reach the telephony provider read the `telephony` secret (Twilio in the cloud; locally
  // the telephony simulator, lib/local/services/telephony-simulator.ts).
  {
    id: 'CreateAgent',
    entry: 'functions/agents/handlers/create-agent.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/workspaces/{workspace_id}/agents',
        summary: 'Create an agent: prompt, greeting, runtime settings, post-call actions (member)',
        auth: 'user_or_api_key',
        body: agents.CreateAgentBody,
        response: agents.AgentResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'ListAgents',
    entry: 'functions/agents/handlers/list-agents.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/workspaces/{workspace_id}/agents',
        summary: "The workspace's agents (viewer)",
        auth: 'user_or_api_key',
        query: agents.ListQuery,
        response: agents.AgentList,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'GetAgent',
    entry: 'functions/agents/handlers/get-agent.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/workspaces/{workspace_id}/agents/{agent_id}',
        summary: 'An agent (viewer)',
        auth: 'user_or_api_key',
        response: agents.AgentResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'UpdateAgent',
    entry: 'functions/agents/handlers/update-agent.ts',
    http: [
      {
        method: 'PATCH',
        path: '/api/v1/workspaces/{workspace_id}/agents/{agent_id}',
        summary: 'Change an agent; settings merge, post-call actions are replaced (member)',
        auth: 'user_or_api_key',
        body: agents.UpdateAgentBody,
        response: agents.AgentResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'DeleteAgent',
    entry: 'functions/agents/handlers/delete-agent.ts',
    http: [
      {
        method: 'DELETE',
        path: '/api/v1/workspaces/{workspace_id}/agents/{agent_id}',
        summary: 'Delete an agent; its number stays in the workspace, disconnected (member)',
        auth: 'user_or_api_key',
        successStatus: 204,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'StartCall',
    entry: 'functions/calling/handlers/start-call.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/workspaces/{workspace_id}/agents/{agent_id}/start-call',
        summary:
          'Start an outbound call (spec 4.1): member, or API key with scope start_call; Idempotency-Key supported',
        auth: 'user_or_api_key',
        body: calling.StartCallBody,
        response: calling.CallCreateResponse,
      },
    ],
    access: { table: 'readwrite', sendsTo: ['calls'] },
  },
  {
    id: 'ListPhoneNumbers',
    entry: 'functions/numbers/handlers/list-phone-numbers.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/workspaces/{workspace_id}/phone-numbers',
        summary: "The workspace's phone numbers (viewer)",
        auth: 'user_or_api_key',
        query: agents.ListQuery,
        response: numbers.PhoneNumberList,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'BuyPhoneNumber',
    entry: 'functions/numbers/handlers/buy-phone-number.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/workspaces/{workspace_id}/phone-numbers',
        summary:
          'Buy a number: {country:"AU", area_code?} or {phone_number} (organisation owner/admin, active paid subscription)',
        auth: 'user_or_api_key',
        body: numbers.BuyNumberBody,
        response: numbers.PhoneNumberResponse,
      },
    ],
    access: { table: 'readwrite', secrets: ['telephony'] },
    timeoutSeconds: 20,
  },
  {
    id: 'UpdatePhoneNumber',
    entry: 'functions/numbers/handlers/update-phone-number.ts',
    http: [
      {
        method: 'PATCH',
        path: '/api/v1/workspaces/{workspace_id}/phone-numbers/{number_id}',
        summary: 'Connect the number to an agent ({agent_id}) or disconnect it ({agent_id: null}) (member)',
        auth: 'user_or_api_key',
        body: numbers.UpdateNumberBody,
        response: numbers.PhoneNumberResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'ReleasePhoneNumber',
    entry: 'functions/numbers/handlers/release-phone-number.ts',
    http: [
      {
        method: 'DELETE',
        path: '/api/v1/workspaces/{workspace_id}/phone-numbers/{number_id}',
        summary: 'Release a number at the provider (organisation owner/admin)',
        auth: 'user_or_api_key',
        successStatus: 204,
      },
    ],
    access: { table: 'readwrite', secrets: ['telephony'] },
    timeoutSeconds: 20,
  },
  {
    id: 'ListCalls',
    entry: 'functions/calling/handlers/list-calls.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/workspaces/{workspace_id}/calls',
        summary: 'The call log, newest first; filters status, agent_id, direction, from, to (viewer)',
        auth: 'user_or_api_key',
        query: calling.ListCallsQuery,
        response: calling.CallList,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'GetCall',
    entry: 'functions/calling/handlers/get-call.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/workspaces/{workspace_id}/calls/{call_id}',
        summary: 'A call: status history, transcript, duration, credits, recording (viewer)',
        auth: 'user_or_api_key',
        response: calling.CallDetailResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'HangupCall',
    entry: 'functions/calling/handlers/hangup-call.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/workspaces/{workspace_id}/calls/{call_id}/hangup',
        summary: 'End a call that has not ended (member)',
        auth: 'user_or_api_key',
        successStatus: 200,
        response: calling.CallDetailResponse,
      },
    ],
    access: { table: 'readwrite', sendsTo: ['postCall'], secrets: ['telephony'] },
    timeoutSeconds: 20,
  },
  {
    id: 'GetCallRecording',
    entry: 'functions/calling/handlers/get-call-recording.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/workspaces/{workspace_id}/calls/{call_id}/recording',
        summary: 'Redirect (302) to a short-lived signed URL of the recording (viewer)',
        auth: 'user_or_api_key',
        successStatus: 302,
      },
    ],
    access: { table: 'readwrite', bucket: 'read' },
  },
  {
    id: 'DispatchCalls',
    entry: 'functions/calling/handlers/dispatch-calls.ts',
    queue: { name: 'calls', batchSize: 10 },
    access: { table: 'readwrite', sendsTo: ['postCall'], secrets: ['telephony'] },
  },
  {
    id: 'SweepCalls',
    entry: 'functions/calling/handlers/sweep-calls.ts',
    schedule: { expression: 'rate(1 minute)', localEverySeconds: 5 },
    access: { table: 'readwrite', sendsTo: ['calls', 'postCall'], secrets: ['telephony'] },
    timeoutSeconds: 60,
  },
  {
    id: 'TelephonyVoiceWebhook',
    entry: 'functions/webhooks/handlers/telephony-voice.ts',
    functionUrl: { path: '/webhooks/telephony/voice' },
    access: { table: 'readwrite', bucket: 'readwrite', sendsTo: ['postCall'], secrets: ['telephony'] },
    timeoutSeconds: 30,
  },
  // (end of calling)
  // ── Billing (billing/) ──────────────────────────────────────────────────────────────────────
  // Organisation routes take a user's JWT only. Routes that reach the payment provider read the
  // `payments` secret (Stripe in the cloud; locally the payments simulator, lib/local/services/).
  {
    id: 'GetBilling',
    entry: 'functions/billing/handlers/get-billing.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/organisations/{organisation_id}/billing',
        summary: 'Plan, subscription status, credit balance, period and usage by kind (members)',
        auth: 'user',
        response: billing.BillingResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'ListLedger',
    entry: 'functions/billing/handlers/list-ledger.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/organisations/{organisation_id}/billing/ledger',
        summary: 'Every credit movement, newest first (members)',
        auth: 'user',
        query: billing.LedgerQuery,
        response: billing.LedgerPage,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'StartSubscription',
    entry: 'functions/billing/handlers/start-subscription.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/organisations/{organisation_id}/billing/subscription',
        summary: 'Subscribe to a paid plan or change plan; confirmed by the provider webhook (owner)',
        auth: 'user',
        body: billing.SubscriptionBody,
        response: billing.SubscriptionResponse,
        successStatus: 202,
      },
    ],
    access: { table: 'readwrite', secrets: ['payments'] },
  },
  {
    id: 'CancelSubscription',
    entry: 'functions/billing/handlers/cancel-subscription.ts',
    http: [
      {
        method: 'DELETE',
        path: '/api/v1/organisations/{organisation_id}/billing/subscription',
        summary: 'Cancel the subscription; back to Free once the provider confirms (owner)',
        auth: 'user',
        response: billing.CancelSubscriptionResponse,
        successStatus: 202,
      },
    ],
    access: { table: 'readwrite', secrets: ['payments'] },
  },
  {
    id: 'CreatePortalSession',
    entry: 'functions/billing/handlers/create-portal-session.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/organisations/{organisation_id}/billing/portal-session',
        summary: "URL of the payment provider's customer portal (owner)",
        auth: 'user',
        body: billing.PortalSessionBody,
        response: billing.PortalSessionResponse,
        successStatus: 201,
      },
    ],
    access: { table: 'readwrite', secrets: ['payments'] },
  },
  {
    id: 'BuyCredits',
    entry: 'functions/billing/handlers/buy-credits.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/organisations/{organisation_id}/billing/credits',
        summary: 'Buy extra credits at 0.01 AUD each; granted when the provider confirms payment (owner)',
        auth: 'user',
        body: billing.CreditsBody,
        response: billing.CreditPurchaseResponse,
        successStatus: 202,
      },
    ],
    access: { table: 'readwrite', secrets: ['payments'] },
  },
  {
    id: 'PricingModel',
    entry: 'functions/billing/handlers/pricing-model.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/payment/pricing-model',
        summary: 'Plans, credit prices and metering rules, from the rules the meter charges with (public)',
        auth: 'none',
        response: billing.PricingModelResponse,
      },
    ],
    access: {},
  },
  {
    id: 'BillingWebhook',
    entry: 'functions/webhooks/handlers/billing.ts',
    functionUrl: { path: '/webhooks/billing' },
    // Back in good standing: the held post-call actions go back on their queue.
    access: { table: 'readwrite', secrets: ['payments'], sendsTo: ['postCallActions'] },
  },
  {
    id: 'RenewCredits',
    entry: 'functions/billing/handlers/renew-credits.ts',
    schedule: { expression: 'rate(1 hour)', localEverySeconds: 5 },
    access: { table: 'readwrite' },
    timeoutSeconds: 300,
  },
  {
    id: 'BillExtraNumbers',
    entry: 'functions/billing/handlers/bill-extra-numbers.ts',
    schedule: { expression: 'rate(1 hour)', localEverySeconds: 10 },
    access: { table: 'readwrite', secrets: ['payments'] },
    timeoutSeconds: 300,
  },
  // (end of billing)
  // ── Post-call pipeline, webhooks out, contacts (post-call/, webhooks/, contacts/) ───────────
  {
    id: 'ProcessCallEnded',
    entry: 'functions/post-call/handlers/process-call-ended.ts',
    queue: { name: 'postCall', batchSize: 5 },
    access: { table: 'readwrite', sendsTo: ['postCallActions'] },
    timeoutSeconds: 60,
  },
  {
    id: 'RunPostCallAction',
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
  {
    id: 'DeliverWebhook',
    entry: 'functions/webhooks/handlers/deliver-webhook.ts',
    queue: { name: 'webhookDelivery', batchSize: 5 },
    access: { table: 'readwrite', sendsTo: ['webhookDelivery'], email: true },
    timeoutSeconds: 30,
  },
  {
    id: 'TestPostCallAction',
    entry: 'functions/post-call/handlers/test-post-call-action.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/workspaces/{workspace_id}/agents/{agent_id}/post-call-actions/{action_id}/test',
        summary:
          "Send a signed test payload to a webhook action's URL now; returns the attempt (members; dashboard users)",
        auth: 'user',
        body: webhooks.TestActionBody,
        response: webhooks.TestActionResponse,
      },
    ],
    access: { table: 'readwrite', email: true },
    timeoutSeconds: 30,
  },
  {
    id: 'GetWebhookSecret',
    entry: 'functions/developer/handlers/webhook-secret-get.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/workspaces/{workspace_id}/webhook-secret',
        summary:
          "The workspace's webhook signing secret (whsec_…), made on first read (members; dashboard users)",
        auth: 'user',
        response: webhooks.WebhookSecretResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'RotateWebhookSecret',
    entry: 'functions/developer/handlers/webhook-secret-rotate.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/workspaces/{workspace_id}/webhook-secret',
        summary:
          'Rotate the webhook signing secret; the old one keeps signing for 24 h (members; dashboard users)',
        auth: 'user',
        response: webhooks.WebhookSecretResponse,
      },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'ListWebhookDeliveries',
    entry: 'functions/developer/handlers/webhook-deliveries-list.ts',
    http: [
      {
        method: 'GET',
        path: '/api/v1/workspaces/{workspace_id}/webhook-deliveries',
        summary:
          'Webhook deliveries, newest first, with every attempt; filter call_id (any workspace role; API key: calls:read)',
        auth: 'user_or_api_key',
        query: webhooks.ListDeliveriesQuery,
        response: webhooks.DeliveryList,
      },
    ],
    access: { table: 'read' },
  },
  {
    id: 'ResendWebhookDelivery',
    entry: 'functions/developer/handlers/webhook-deliveries-resend.ts',
    http: [
      {
        method: 'POST',
        path: '/api/v1/workspaces/{workspace_id}/webhook-deliveries/{delivery_id}/resend',
        summary:
          'Send a delivery again now, same webhook-id; returns the delivery (members; dashboard users)',
        auth: 'user',
        response: webhooks.DeliveryResponse,
      },
    ],
    access: { table: 'readwrite', email: true },
    timeoutSeconds: 30,
  },
  // (end of post-call)
];

export const httpFunctions = () => catalog.filter((f) => f.http && f.http.length > 0);
export const queueFunctions = () => catalog.filter((f) => f.queue);
export const scheduledFunctions = () => catalog.filter((f) => f.schedule);
export const urlFunctions = () => catalog.filter((f) => f.functionUrl);
