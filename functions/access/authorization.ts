/**
 * Who may do what — the one place the role rules of docs/api.md live. Read it as a table:
 * an action is allowed when the caller's organisation role is in `organisation`, or the caller's
 * effective workspace role is in `workspace`. Organisation owners and admins are admins of every
 * workspace (see effectiveWorkspaceRole). Tests walk every role × every action.
 */

export const ORGANISATION_ROLES = ['owner', 'admin', 'regular'] as const;
export type OrganisationRole = (typeof ORGANISATION_ROLES)[number];

export const WORKSPACE_ROLES = ['admin', 'member', 'viewer'] as const;
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number];

interface Rule {
  /** Organisation roles that may do it (whatever their workspace role). */
  organisation?: readonly OrganisationRole[];
  /** Effective workspace roles that may do it. */
  workspace?: readonly WorkspaceRole[];
  /** A write: a viewer who attempts it is told viewers are read-only. */
  write: boolean;
}

const ALL_WS = WORKSPACE_ROLES;
const EDITORS = ['admin', 'member'] as const;
const WS_ADMIN = ['admin'] as const;
const ORG_ADMINS = ['owner', 'admin'] as const;

export const PERMISSIONS = {
  // Organisation level
  'organisation:read': { organisation: ORGANISATION_ROLES, write: false },
  'organisation:update': { organisation: ORG_ADMINS, write: true },
  'organisation:invite': { organisation: ORG_ADMINS, write: true },
  'organisation:manage_members': { organisation: ORG_ADMINS, write: true },
  'organisation:create_workspace': { organisation: ORG_ADMINS, write: true },
  'billing:read': { organisation: ORGANISATION_ROLES, write: false },
  'billing:manage': { organisation: ['owner'], write: true },
  /** The organisation's do-not-call numbers: every member sees them (campaigns must respect them)… */
  'suppression_list:read': { organisation: ORGANISATION_ROLES, write: false },
  /** …owners and admins add and remove them. */
  'suppression_list:manage': { organisation: ORG_ADMINS, write: true },
  // Workspace level
  'workspace:read': { workspace: ALL_WS, write: false },
  'workspace:update_settings': { workspace: WS_ADMIN, write: true },
  'workspace:delete': { workspace: WS_ADMIN, write: true },
  'workspace:manage_members': { workspace: WS_ADMIN, write: true },
  'agents:write': { workspace: EDITORS, write: true },
  'calls:write': { workspace: EDITORS, write: true },
  'contacts:write': { workspace: EDITORS, write: true },
  'sms:write': { workspace: EDITORS, write: true },
  'knowledge:write': { workspace: EDITORS, write: true },
  'integrations:write': { workspace: EDITORS, write: true },
  'workflows:write': { workspace: EDITORS, write: true },
  'api_keys:manage': { workspace: EDITORS, write: true },
  /** Listing keys is for those who may manage them (docs/api.md: member); viewers are refused. */
  'api_keys:read': { workspace: EDITORS, write: false },
  'campaigns:write': { workspace: EDITORS, write: true },
  'uploads:write': { workspace: EDITORS, write: true },
  'batch_jobs:write': { workspace: EDITORS, write: true },
  'webhooks:manage': { workspace: EDITORS, write: true },
  'numbers:connect': { workspace: EDITORS, write: true },
  'numbers:buy': { organisation: ORG_ADMINS, write: true },
  'numbers:release': { organisation: ORG_ADMINS, write: true },
} as const satisfies Record<string, Rule>;

export type Action = keyof typeof PERMISSIONS;
export const ACTIONS = Object.keys(PERMISSIONS) as Action[];

/** Organisation owners and admins are admins everywhere; otherwise the workspace row decides. */
export function effectiveWorkspaceRole(
  organisationRole: OrganisationRole | undefined,
  workspaceRowRole: WorkspaceRole | undefined,
): WorkspaceRole | undefined {
  if (organisationRole === 'owner' || organisationRole === 'admin') return 'admin';
  return workspaceRowRole;
}

export type Decision = 'allow' | 'viewer_read_only' | 'forbidden';

export function decide(
  action: Action,
  roles: { organisation?: OrganisationRole; workspace?: WorkspaceRole },
): Decision {
  const rule: Rule = PERMISSIONS[action];
  if (roles.organisation && rule.organisation?.includes(roles.organisation)) return 'allow';
  if (roles.workspace && rule.workspace?.includes(roles.workspace)) return 'allow';
  if (rule.write && roles.workspace === 'viewer') return 'viewer_read_only';
  return 'forbidden';
}
