import type { FunctionSpec } from './catalog-types.js';
import * as access from '../functions/access/schemas.js';
import * as apiKeys from '../functions/developer/api-key-schemas.js';

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
    http: [{ method: 'GET', path: '/api/v1/health', summary: 'Health of the table, queues and bucket', auth: 'none' }],
    access: { table: 'read', bucket: 'read', sendsTo: ['calls'] },
  },
  {
    id: 'OpenApi',
    entry: 'functions/public/handlers/openapi.ts',
    http: [{ method: 'GET', path: '/api/v1/openapi.json', summary: 'OpenAPI 3.1 description of every route', auth: 'none' }],
    access: {},
  },
  // ── Identity, organisations, workspaces, members, API keys (access/, developer/) ─────────────
  // Every authenticated route may write: the first request of a user creates their profile, and an API
  // key's use records last_used_at. Organisation routes take a user's JWT only (an API key is 403).
  {
    id: 'VerifyAuth',
    entry: 'functions/access/handlers/verify-auth.ts',
    http: [{ method: 'GET', path: '/api/v1/auth/verify', summary: "The caller's user id and email", auth: 'user', response: access.VerifyResponse }],
    access: { table: 'readwrite' },
  },
  {
    id: 'GetMe',
    entry: 'functions/access/handlers/get-me.ts',
    http: [{ method: 'GET', path: '/api/v1/me', summary: "The caller's profile and organisations", auth: 'user', response: access.MeResponse }],
    access: { table: 'readwrite' },
  },
  {
    id: 'UpdateMe',
    entry: 'functions/access/handlers/update-me.ts',
    http: [
      { method: 'PATCH', path: '/api/v1/me', summary: 'Change your name', auth: 'user', body: access.UpdateMeBody, response: access.MeResponse },
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
        summary: 'Create an organisation: you become its owner; a Default workspace; the Free plan with 500 credits',
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
      { method: 'GET', path: '/api/v1/organisations', summary: 'Your organisations', auth: 'user', query: access.ListQuery, response: access.OrganisationList },
    ],
    access: { table: 'readwrite' },
  },
  {
    id: 'GetOrganisation',
    entry: 'functions/access/handlers/get-organisation.ts',
    http: [
      { method: 'GET', path: '/api/v1/organisations/{organisation_id}', summary: 'An organisation (members)', auth: 'user', response: access.OrganisationResponse },
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
        summary: 'Invite an address as regular or admin (owner, admin); 200 when it was already pending (resent)',
        auth: 'user',
        body: access.InvitationBody,
        response: access.InvitationResponse,
      },
    ],
    access: { table: 'readwrite' },
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
    access: { table: 'readwrite' },
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
      { method: 'DELETE', path: '/api/v1/workspaces/{workspace_id}', summary: 'Delete a workspace (workspace admin)', auth: 'user', successStatus: 204 },
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
  // (end of calling)
  // ── Billing (billing/) ──────────────────────────────────────────────────────────────────────
  // (end of billing)
  // ── Post-call pipeline, webhooks out, contacts (post-call/, webhooks/, contacts/) ───────────
  // (end of post-call)
];

export const httpFunctions = () => catalog.filter((f) => f.http && f.http.length > 0);
export const queueFunctions = () => catalog.filter((f) => f.queue);
export const scheduledFunctions = () => catalog.filter((f) => f.schedule);
export const urlFunctions = () => catalog.filter((f) => f.functionUrl);
