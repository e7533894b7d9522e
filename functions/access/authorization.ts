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
  /** What the action does, as the 403 says it: `Only workspace admins can <what>`. */
  what: string;
}

const ALL_WS = WORKSPACE_ROLES;
const EDITORS = ['admin', 'member'] as const;
const WS_ADMIN = ['admin'] as const;
const ORG_ADMINS = ['owner', 'admin'] as const;

export const PERMISSIONS = {
  // Organisation level
  'organisation:read': { organisation: ORGANISATION_ROLES, write: false, what: 'see this organisation' },
  'organisation:update': { organisation: ORG_ADMINS, write: true, what: 'change the organisation' },
  'organisation:invite': {
    organisation: ORG_ADMINS,
    write: true,
    what: 'invite members to the organisation',
  },
  'organisation:manage_members': {
    organisation: ORG_ADMINS,
    write: true,
    what: "change or remove the organisation's members",
  },
  'organisation:create_workspace': { organisation: ORG_ADMINS, write: true, what: 'create workspaces' },
  'billing:read': { organisation: ORGANISATION_ROLES, write: false, what: 'see billing' },
  'billing:manage': {
    organisation: ['owner'],
    write: true,
    what: 'manage billing (plan, subscription, credits)',
  },
  /** The organisation's do-not-call numbers: every member sees them (campaigns must respect them)… */
  'suppression_list:read': {
    organisation: ORGANISATION_ROLES,
    write: false,
    what: 'see the do-not-call list',
  },
  /** …owners and admins add and remove them. */
  'suppression_list:manage': { organisation: ORG_ADMINS, write: true, what: 'change the do-not-call list' },
  // Workspace level
  'workspace:read': { workspace: ALL_WS, write: false, what: 'see this workspace' },
  'workspace:update_settings': { workspace: WS_ADMIN, write: true, what: "change the workspace's settings" },
  'workspace:delete': { workspace: WS_ADMIN, write: true, what: 'delete the workspace' },
  'workspace:manage_members': { workspace: WS_ADMIN, write: true, what: "manage the workspace's members" },
  'agents:write': { workspace: EDITORS, write: true, what: 'change agents' },
  'calls:write': { workspace: EDITORS, write: true, what: 'place or end calls' },
  'contacts:write': { workspace: EDITORS, write: true, what: 'change contacts' },
  'sms:write': { workspace: EDITORS, write: true, what: 'send SMS' },
  'knowledge:write': { workspace: EDITORS, write: true, what: 'change knowledge bases' },
  'integrations:write': { workspace: EDITORS, write: true, what: 'change integrations' },
  'workflows:write': { workspace: EDITORS, write: true, what: 'change workflows' },
  'api_keys:manage': { workspace: EDITORS, write: true, what: 'manage API keys' },
  /** Listing keys is for those who may manage them (docs/api.md: member); viewers are refused. */
  'api_keys:read': { workspace: EDITORS, write: false, what: 'list API keys' },
  'campaigns:write': { workspace: EDITORS, write: true, what: 'change campaigns' },
  'uploads:write': { workspace: EDITORS, write: true, what: 'upload files' },
  'batch_jobs:write': { workspace: EDITORS, write: true, what: 'run batch jobs' },
  'webhooks:manage': { workspace: EDITORS, write: true, what: 'manage webhooks' },
  /** The signing secret is read (GET), so a viewer is refused as a role, never as "read-only". */
  'webhooks:read_secret': { workspace: EDITORS, write: false, what: 'see the webhook signing secret' },
  'numbers:connect': { workspace: EDITORS, write: true, what: 'connect phone numbers to agents' },
  'numbers:buy': { organisation: ORG_ADMINS, write: true, what: 'buy phone numbers' },
  'numbers:release': { organisation: ORG_ADMINS, write: true, what: 'release phone numbers' },
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

const ORGANISATION_NAMES: Record<string, string> = {
  owner: 'the organisation owner',
  'owner,admin': 'organisation owners and admins',
  'owner,admin,regular': 'organisation members',
};
const WORKSPACE_NAMES: Record<string, string> = {
  admin: 'workspace admins',
  'admin,member': 'workspace admins and members',
  'admin,member,viewer': 'workspace members',
};

/** Why a caller is refused an action: `Only workspace admins and members can change agents`. */
export function refusal(action: Action): string {
  const rule: Rule = PERMISSIONS[action];
  const who = [
    rule.organisation && ORGANISATION_NAMES[rule.organisation.join(',')],
    rule.workspace && WORKSPACE_NAMES[rule.workspace.join(',')],
  ].filter(Boolean);
  return `Only ${who.join(' and ')} can ${rule.what}`;
}

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
