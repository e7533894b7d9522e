import { describe, expect, it } from '@jest/globals';
import {
  ACTIONS,
  ORGANISATION_ROLES,
  WORKSPACE_ROLES,
  decide,
  refusal,
  effectiveWorkspaceRole,
  type Action,
  type OrganisationRole,
  type WorkspaceRole,
} from '../../functions/access/authorization.js';
import { accessFrom, authorize } from '../../functions/access/workspace-access.js';
import { HttpError } from '../../functions/platform/errors.js';
import type { OrgMember, Workspace } from '../../functions/access/entities.js';
import type { UserPrincipal } from '../../functions/platform/auth/principal.js';

/**
 * Spec 2.3 written out by hand, independently of functions/access/authorization.ts: for every action,
 * who may do it. `owner` and `admin` are organisation roles (admins of every workspace, whatever the
 * workspace row says); `regular/<row>` is a regular member with that workspace row (`none`: no row).
 */
type Who = 'owner' | 'admin' | 'regular/admin' | 'regular/member' | 'regular/viewer' | 'regular/none';
const EVERYONE: Who[] = [
  'owner',
  'admin',
  'regular/admin',
  'regular/member',
  'regular/viewer',
  'regular/none',
];
const ORG_ADMINS: Who[] = ['owner', 'admin'];
const WS_READERS: Who[] = ['owner', 'admin', 'regular/admin', 'regular/member', 'regular/viewer'];
const WS_EDITORS: Who[] = ['owner', 'admin', 'regular/admin', 'regular/member'];
const WS_ADMINS: Who[] = ['owner', 'admin', 'regular/admin'];

const EXPECTED: Record<Action, { allowed: Who[]; write: boolean; scope: 'organisation' | 'workspace' }> = {
  'organisation:read': { allowed: EVERYONE, write: false, scope: 'organisation' },
  'organisation:update': { allowed: ORG_ADMINS, write: true, scope: 'organisation' },
  'organisation:invite': { allowed: ORG_ADMINS, write: true, scope: 'organisation' },
  'organisation:manage_members': { allowed: ORG_ADMINS, write: true, scope: 'organisation' },
  'organisation:create_workspace': { allowed: ORG_ADMINS, write: true, scope: 'organisation' },
  // Only the owner manages billing; every member views plan and usage.
  'billing:read': { allowed: EVERYONE, write: false, scope: 'organisation' },
  'billing:manage': { allowed: ['owner'], write: true, scope: 'organisation' },
  // The organisation-wide suppression (do-not-call) list: every member reads it, owner/admin change it.
  'suppression_list:read': { allowed: EVERYONE, write: false, scope: 'organisation' },
  'suppression_list:manage': { allowed: ORG_ADMINS, write: true, scope: 'organisation' },
  'workspace:read': { allowed: WS_READERS, write: false, scope: 'workspace' },
  // Admin-only: workspace settings and members.
  'workspace:update_settings': { allowed: WS_ADMINS, write: true, scope: 'workspace' },
  'workspace:delete': { allowed: WS_ADMINS, write: true, scope: 'workspace' },
  'workspace:manage_members': { allowed: WS_ADMINS, write: true, scope: 'workspace' },
  // Members create, edit and delete agents, contacts, calls, knowledge, integrations, API keys,
  // campaigns, uploads and batch jobs.
  'agents:write': { allowed: WS_EDITORS, write: true, scope: 'workspace' },
  'calls:write': { allowed: WS_EDITORS, write: true, scope: 'workspace' },
  'contacts:write': { allowed: WS_EDITORS, write: true, scope: 'workspace' },
  'sms:write': { allowed: WS_EDITORS, write: true, scope: 'workspace' },
  'knowledge:write': { allowed: WS_EDITORS, write: true, scope: 'workspace' },
  'integrations:write': { allowed: WS_EDITORS, write: true, scope: 'workspace' },
  'workflows:write': { allowed: WS_EDITORS, write: true, scope: 'workspace' },
  'api_keys:manage': { allowed: WS_EDITORS, write: true, scope: 'workspace' },
  'api_keys:read': { allowed: WS_EDITORS, write: false, scope: 'workspace' },
  'campaigns:write': { allowed: WS_EDITORS, write: true, scope: 'workspace' },
  'uploads:write': { allowed: WS_EDITORS, write: true, scope: 'workspace' },
  'batch_jobs:write': { allowed: WS_EDITORS, write: true, scope: 'workspace' },
  'webhooks:manage': { allowed: WS_EDITORS, write: true, scope: 'workspace' },
  // A read (GET the signing secret): a viewer is refused by role, never told "read-only".
  'webhooks:read_secret': { allowed: WS_EDITORS, write: false, scope: 'workspace' },
  'numbers:connect': { allowed: WS_EDITORS, write: true, scope: 'workspace' },
  // Buying or releasing numbers: organisation owner or admin only.
  'numbers:buy': { allowed: ORG_ADMINS, write: true, scope: 'workspace' },
  'numbers:release': { allowed: ORG_ADMINS, write: true, scope: 'workspace' },
};

const ROWS: (WorkspaceRole | undefined)[] = ['admin', 'member', 'viewer', undefined];
const who = (org: OrganisationRole, row: WorkspaceRole | undefined): Who =>
  org === 'regular' ? (`regular/${row ?? 'none'}` as Who) : org;

/** What a refusal says: viewers attempting a write are told they are read-only; else who may. */
function expectedDecision(action: Action, org: OrganisationRole, row: WorkspaceRole | undefined) {
  const rule = EXPECTED[action];
  if (rule.allowed.includes(who(org, row))) return 'allow';
  const isViewer = org === 'regular' && row === 'viewer';
  return rule.write && isViewer ? 'viewer_read_only' : 'forbidden';
}

const principal: UserPrincipal = {
  kind: 'user',
  userId: 'usr_01J0000000000000000000000A',
  email: 'a@example.com',
  subject: 's',
};
const workspace = {
  workspaceId: 'ws_01J0000000000000000000000A',
  organisationId: 'org_01J0000000000000000000000A',
  name: 'W',
  timezone: 'UTC',
  concurrentCallLimit: 10,
  activeCalls: 0,
  createdAt: '2026-01-01T00:00:00.000Z',
} as Workspace;
const member = (role: OrganisationRole, status: 'accepted' | 'pending' = 'accepted') =>
  ({
    organisationId: workspace.organisationId,
    userId: principal.userId,
    email: principal.email,
    role,
    status,
    joinedAt: '2026-01-01T00:00:00.000Z',
  }) as OrgMember;

function outcome(fn: () => void): string {
  try {
    fn();
    return 'allow';
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return `${error.status} ${error.message}`;
  }
}

describe('the authorisation table (docs/api.md), every organisation role × workspace row × action', () => {
  it('has an expectation for every action, and no more', () => {
    expect([...ACTIONS].sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  const cases = ACTIONS.flatMap((action) =>
    ORGANISATION_ROLES.flatMap((org) => ROWS.map((row) => [action, org, row ?? 'none'] as const)),
  );
  expect(cases.length).toBe(ACTIONS.length * 3 * 4);

  it.each(cases)('%s by %s with workspace row %s', (action, org, rowName) => {
    const row = rowName === 'none' ? undefined : (rowName as WorkspaceRole);
    const expected = expectedDecision(action, org, row);
    const rule = EXPECTED[action];

    // The decision as the services take it: organisation routes see the organisation role only;
    // workspace routes see the organisation role and the effective workspace role.
    if (rule.scope === 'organisation') {
      const decision = decide(action, { organisation: org });
      expect(decision === 'allow').toBe(expected === 'allow');
      expect(outcome(() => authorize({ organisationRole: org }, action))).toBe(
        expected === 'allow' ? 'allow' : `403 ${refusal(action)}`,
      );
      return;
    }
    expect(decide(action, { organisation: org, workspace: effectiveWorkspaceRole(org, row) })).toBe(expected);

    // Through the access check the routes use: a regular member without a row does not see the
    // workspace at all (404); otherwise allowed, or 403 with the right message.
    const result = outcome(() =>
      authorize(accessFrom(principal, { workspace, orgMember: member(org), workspaceRole: row }), action),
    );
    if (org === 'regular' && row === undefined) expect(result).toBe('404 Workspace not found');
    else if (expected === 'allow') expect(result).toBe('allow');
    else if (expected === 'viewer_read_only') expect(result).toBe('403 Viewers have read-only access');
    else expect(result).toBe(`403 ${refusal(action)}`);
  });
});

describe('effective workspace roles', () => {
  it.each(
    WORKSPACE_ROLES.flatMap((row): [OrganisationRole, WorkspaceRole][] => [
      ['owner', row],
      ['admin', row],
    ]),
  )('an organisation %s is admin whatever the workspace row (%s)', (org, row) => {
    expect(effectiveWorkspaceRole(org, row)).toBe('admin');
    expect(
      accessFrom(principal, { workspace, orgMember: member(org), workspaceRole: row }).workspaceRole,
    ).toBe('admin');
  });

  it.each(ORGANISATION_ROLES)(
    'an organisation admin role counts only once accepted (pending %s: 404)',
    (org) => {
      expect(
        outcome(() =>
          accessFrom(principal, { workspace, orgMember: member(org, 'pending'), workspaceRole: 'admin' }),
        ),
      ).toBe('404 Workspace not found');
    },
  );

  it('a deleted workspace is 404 for everyone, the owner included', () => {
    const deleted = { ...workspace, deletedAt: '2026-02-01T00:00:00.000Z' } as Workspace;
    expect(outcome(() => accessFrom(principal, { workspace: deleted, orgMember: member('owner') }))).toBe(
      '404 Workspace not found',
    );
  });

  it('an API key works in its own workspace only, as a member (never as an admin)', () => {
    const key = {
      kind: 'api_key' as const,
      keyId: 'key_01J0000000000000000000000A',
      workspaceId: workspace.workspaceId,
      organisationId: workspace.organisationId,
      scopes: [],
    };
    const access = accessFrom(key, { workspace });
    expect(access.workspaceRole).toBe('member');
    expect(outcome(() => authorize(access, 'agents:write'))).toBe('allow');
    expect(outcome(() => authorize(access, 'workspace:update_settings'))).toBe(
      "403 Only workspace admins can change the workspace's settings",
    );
    expect(outcome(() => authorize(access, 'numbers:buy'))).toBe(
      '403 Only organisation owners and admins can buy phone numbers',
    );
    expect(
      outcome(() => accessFrom({ ...key, workspaceId: 'ws_01J0000000000000000000000B' }, { workspace })),
    ).toBe('404 Workspace not found');
    expect(
      outcome(() => accessFrom({ ...key, organisationId: 'org_01J0000000000000000000000B' }, { workspace })),
    ).toBe('404 Workspace not found');
  });
});

describe('a refusal says why', () => {
  it('names who may do the action, for every action', () => {
    for (const action of ACTIONS)
      expect(refusal(action)).toMatch(
        /^Only (the organisation owner|organisation \w.*|workspace \w.*) can \S/,
      );
    expect(refusal('numbers:buy')).toBe('Only organisation owners and admins can buy phone numbers');
    expect(refusal('billing:manage')).toBe(
      'Only the organisation owner can manage billing (plan, subscription, credits)',
    );
    expect(refusal('agents:write')).toBe('Only workspace admins and members can change agents');
  });

  it("a viewer's read is refused by role, never as read-only", () => {
    const reads = ACTIONS.filter((action) => !EXPECTED[action].write);
    for (const action of reads)
      expect(decide(action, { organisation: 'regular', workspace: 'viewer' })).not.toBe('viewer_read_only');
    expect(
      outcome(() =>
        authorize(
          accessFrom(principal, { workspace, orgMember: member('regular'), workspaceRole: 'viewer' }),
          'webhooks:read_secret',
        ),
      ),
    ).toBe('403 Only workspace admins and members can see the webhook signing secret');
  });
});
