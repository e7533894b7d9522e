/** Who is calling: a dashboard user (JWT) or an API key bound to one workspace. */
export interface UserPrincipal {
  kind: 'user';
  userId: string;
  email: string;
  /** Subject of the identity provider's token. */
  subject: string;
}

export interface ApiKeyPrincipal {
  kind: 'api_key';
  keyId: string;
  workspaceId: string;
  organisationId: string;
  scopes: ApiKeyScope[];
}

export type Principal = UserPrincipal | ApiKeyPrincipal;

/**
 * Scopes an API key may carry. `start_call` is the documented; the read scopes let a key read its
 * workspace (`workspace:read`: the workspace's own settings, GET /workspaces/{workspace_id}).
 */
export const API_KEY_SCOPES = [
  'start_call',
  'calls:read',
  'agents:read',
  'agents:write',
  'contacts:read',
  'contacts:write',
  'campaigns:read',
  'campaigns:write',
  'sms:read',
  'sms:write',
  'knowledge:read',
  'knowledge:write',
  'integrations:read',
  'integrations:write',
  'workspace:read',
  'webhooks:read',
  'webhooks:write',
  /** POST /api/v1/triggers/{workflow_id}: start a run of one of the workspace's external workflows. */
  'workflows:trigger',
] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** The id that records who did something: `usr_…` or `key_…`. */
export const actorId = (principal: Principal): string =>
  principal.kind === 'user' ? principal.userId : principal.keyId;
