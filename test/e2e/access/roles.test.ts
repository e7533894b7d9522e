import { beforeAll, describe, expect, it } from '@jest/globals';
import { api } from '../../helpers/http.js';
import { member, organisation, uniqueEmail, workspace, type Org, type User } from './fixtures.js';

/**
 * Every role × every action family of the access routes, allowed and refused, through HTTP with real
 * tokens; after each refusal the state is read back to show nothing changed.
 *
 * Roles: the organisation owner; an organisation admin (who also has a workspace *viewer* row, to show
 * the organisation role wins); regular members who are workspace admin, member and viewer; a regular
 * member with no row in the workspace; and the owner of another organisation.
 */
type Role = 'owner' | 'orgAdmin' | 'wsAdmin' | 'wsMember' | 'wsViewer' | 'noRow' | 'outsider';
const ROLES: Role[] = ['owner', 'orgAdmin', 'wsAdmin', 'wsMember', 'wsViewer', 'noRow', 'outsider'];

const OK = 'ok';
/** A role refusal says who may: `403 Only workspace admins can …`. */
const onlyBy = (who: string, what: string) => `403 Only ${who} can ${what}`;
const VIEWER = '403 Viewers have read-only access';
const NO_WS = '404 Workspace not found';
const NO_ORG = '404 Organisation not found';

let org: Org;
let outsiderOrg: Org;
let ws: string;
const users = {} as Record<Role, User>;

function outcome(response: { status: number; body: { error?: string } }): string {
  return response.status < 300 ? OK : `${response.status} ${response.body.error}`;
}

beforeAll(async () => {
  org = await organisation('roles-owner', 'Roles Org');
  ws = await workspace(org, 'Shared');
  outsiderOrg = await organisation('roles-outsider');
  users.owner = org.owner;
  users.orgAdmin = await member(org, 'roles-orgadmin', 'admin', [{ workspace_id: ws, role: 'viewer' }]);
  users.wsAdmin = await member(org, 'roles-wsadmin', 'regular', [{ workspace_id: ws, role: 'admin' }]);
  users.wsMember = await member(org, 'roles-wsmember', 'regular', [{ workspace_id: ws, role: 'member' }]);
  users.wsViewer = await member(org, 'roles-wsviewer', 'regular', [{ workspace_id: ws, role: 'viewer' }]);
  users.noRow = await member(org, 'roles-norow', 'regular');
  users.outsider = outsiderOrg.owner;
}, 60_000);

describe('workspace action families', () => {
  const readers: Record<Role, string> = {
    owner: OK,
    orgAdmin: OK,
    wsAdmin: OK,
    wsMember: OK,
    wsViewer: OK,
    noRow: NO_WS,
    outsider: NO_WS,
  };
  const adminsOnly = (what: string): Record<Role, string> => ({
    owner: OK,
    orgAdmin: OK,
    wsAdmin: OK,
    wsMember: onlyBy('workspace admins', what),
    wsViewer: VIEWER,
    noRow: NO_WS,
    outsider: NO_WS,
  });
  const editors: Record<Role, string> = {
    owner: OK,
    orgAdmin: OK,
    wsAdmin: OK,
    wsMember: OK,
    wsViewer: VIEWER,
    noRow: NO_WS,
    outsider: NO_WS,
  };

  it.each(ROLES)('read the workspace and its members: %s', async (role) => {
    const got = await api('GET', `/api/v1/workspaces/${ws}`, { token: users[role].token });
    expect(outcome(got)).toBe(readers[role]);
    if (got.status === 200) {
      const expectedRole = {
        owner: 'admin',
        orgAdmin: 'admin',
        wsAdmin: 'admin',
        wsMember: 'member',
        wsViewer: 'viewer',
      }[role as string];
      expect(got.body.role).toBe(expectedRole);
    }
    expect(outcome(await api('GET', `/api/v1/workspaces/${ws}/members`, { token: users[role].token }))).toBe(
      readers[role],
    );
  });

  it.each(ROLES)('change workspace settings: %s', async (role) => {
    const before = (await api('GET', `/api/v1/workspaces/${ws}`, { token: org.owner.token })).body;
    const name = `Renamed by ${role}`;
    const response = await api('PATCH', `/api/v1/workspaces/${ws}`, {
      token: users[role].token,
      body: { name, concurrent_call_limit: 7 },
    });
    expect(outcome(response)).toBe(adminsOnly("change the workspace's settings")[role]);
    const after = (await api('GET', `/api/v1/workspaces/${ws}`, { token: org.owner.token })).body;
    if (response.status === 200) expect(after).toMatchObject({ name, concurrent_call_limit: 7 });
    else expect(after).toEqual(before);
  });

  it.each(ROLES)('manage workspace members: %s', async (role) => {
    const target = await member(org, `target-${role.toLowerCase()}`, 'regular');
    const put = await api('PUT', `/api/v1/workspaces/${ws}/members/${target.userId}`, {
      token: users[role].token,
      body: { role: 'member' },
    });
    expect(outcome(put)).toBe(adminsOnly("manage the workspace's members")[role]);
    const members = (
      await api('GET', `/api/v1/workspaces/${ws}/members?limit=100`, { token: org.owner.token })
    ).body.items;
    const row = members.find((m: { user_id: string }) => m.user_id === target.userId);
    if (put.status === 200) {
      expect(row).toMatchObject({ role: 'member', workspace_role: 'member', organisation_role: 'regular' });
      const removed = await api('DELETE', `/api/v1/workspaces/${ws}/members/${target.userId}`, {
        token: users[role].token,
      });
      expect(removed.status).toBe(204);
    } else {
      expect(row).toBeUndefined();
      // Removing someone's row is refused the same way, and the row stays.
      const victim = users.wsMember.userId;
      expect(
        outcome(
          await api('DELETE', `/api/v1/workspaces/${ws}/members/${victim}`, { token: users[role].token }),
        ),
      ).toBe(adminsOnly("manage the workspace's members")[role]);
      const still = (
        await api('GET', `/api/v1/workspaces/${ws}/members?limit=100`, { token: org.owner.token })
      ).body.items;
      expect(still.find((m: { user_id: string }) => m.user_id === victim)).toMatchObject({ role: 'member' });
    }
  });

  it.each(ROLES)('create and list API keys (members, not viewers): %s', async (role) => {
    const list = () => api('GET', `/api/v1/workspaces/${ws}/api-keys?limit=100`, { token: org.owner.token });
    const before = (await list()).body.items.length;
    const created = await api('POST', `/api/v1/workspaces/${ws}/api-keys`, {
      token: users[role].token,
      body: { name: `key of ${role}`, scopes: ['start_call'] },
    });
    expect(outcome(created)).toBe(editors[role]);
    expect((await list()).body.items.length).toBe(before + (created.status === 201 ? 1 : 0));
    const listed = await api('GET', `/api/v1/workspaces/${ws}/api-keys`, { token: users[role].token });
    // A viewer's GET is refused by role, never answered "read-only".
    expect(outcome(listed)).toBe(
      role === 'wsViewer' ? onlyBy('workspace admins and members', 'list API keys') : editors[role],
    );
  });

  it.each(ROLES)('delete a workspace: %s', async (role) => {
    const doomed = await workspace(org, `Doomed ${role}`);
    const rowRole = { orgAdmin: 'viewer', wsAdmin: 'admin', wsMember: 'member', wsViewer: 'viewer' }[
      role as string
    ];
    if (rowRole) {
      const put = await api('PUT', `/api/v1/workspaces/${doomed}/members/${users[role].userId}`, {
        token: org.owner.token,
        body: { role: rowRole },
      });
      expect(put.status).toBe(200);
    }
    const deleted = await api('DELETE', `/api/v1/workspaces/${doomed}`, { token: users[role].token });
    expect(outcome(deleted)).toBe(adminsOnly('delete the workspace')[role]);
    const after = await api('GET', `/api/v1/workspaces/${doomed}`, { token: org.owner.token });
    expect(after.status).toBe(deleted.status === 204 ? 404 : 200);
  });
});

describe('organisation action families', () => {
  const everyMember: Record<Role, string> = {
    owner: OK,
    orgAdmin: OK,
    wsAdmin: OK,
    wsMember: OK,
    wsViewer: OK,
    noRow: OK,
    outsider: NO_ORG,
  };
  const ownerAndAdmins = (what: string): Record<Role, string> => ({
    owner: OK,
    orgAdmin: OK,
    wsAdmin: onlyBy('organisation owners and admins', what),
    wsMember: onlyBy('organisation owners and admins', what),
    wsViewer: onlyBy('organisation owners and admins', what),
    noRow: onlyBy('organisation owners and admins', what),
    outsider: NO_ORG,
  });

  it.each(ROLES)('read the organisation, its plan and its members: %s', async (role) => {
    const got = await api('GET', `/api/v1/organisations/${org.organisationId}`, { token: users[role].token });
    expect(outcome(got)).toBe(everyMember[role]);
    if (got.status === 200) expect(got.body).toMatchObject({ plan: 'free', credit_balance: 500 });
    expect(
      outcome(
        await api('GET', `/api/v1/organisations/${org.organisationId}/members`, { token: users[role].token }),
      ),
    ).toBe(everyMember[role]);
    expect(
      outcome(
        await api('GET', `/api/v1/organisations/${org.organisationId}/workspaces`, {
          token: users[role].token,
        }),
      ),
    ).toBe(everyMember[role]);
  });

  it('regular members list only the workspaces they belong to; owner and admins list all', async () => {
    const names = async (role: Role) =>
      (
        await api('GET', `/api/v1/organisations/${org.organisationId}/workspaces?limit=100`, {
          token: users[role].token,
        })
      ).body.items.map((w: { workspace_id: string }) => w.workspace_id);
    expect(await names('owner')).toEqual(expect.arrayContaining([org.workspaceId, ws]));
    expect(await names('orgAdmin')).toEqual(expect.arrayContaining([org.workspaceId, ws]));
    const viewers = await names('wsViewer');
    expect(viewers).toContain(ws);
    expect(viewers).not.toContain(org.workspaceId);
    expect(await names('noRow')).toEqual([]);
  });

  it.each(ROLES)('rename the organisation: %s', async (role) => {
    const before = (
      await api('GET', `/api/v1/organisations/${org.organisationId}`, { token: org.owner.token })
    ).body.name;
    const response = await api('PATCH', `/api/v1/organisations/${org.organisationId}`, {
      token: users[role].token,
      body: { name: `By ${role}` },
    });
    expect(outcome(response)).toBe(ownerAndAdmins('change the organisation')[role]);
    const after = (
      await api('GET', `/api/v1/organisations/${org.organisationId}`, { token: org.owner.token })
    ).body.name;
    expect(after).toBe(response.status === 200 ? `By ${role}` : before);
  });

  it.each(ROLES)('invite, create workspaces, change member roles: %s', async (role) => {
    const token = users[role].token;
    const email = uniqueEmail(`by-${role.toLowerCase()}`);
    const invited = await api('POST', `/api/v1/organisations/${org.organisationId}/invitations`, {
      token,
      body: { email, role: 'regular' },
    });
    expect(outcome(invited)).toBe(ownerAndAdmins('invite members to the organisation')[role]);
    const members = (
      await api('GET', `/api/v1/organisations/${org.organisationId}/members?limit=100`, {
        token: org.owner.token,
      })
    ).body.items;
    expect(members.some((m: { email: string }) => m.email === email)).toBe(invited.status === 201);

    const countWorkspaces = async () =>
      (
        await api('GET', `/api/v1/organisations/${org.organisationId}/workspaces?limit=100`, {
          token: org.owner.token,
        })
      ).body.items.length;
    const before = await countWorkspaces();
    const created = await api('POST', `/api/v1/organisations/${org.organisationId}/workspaces`, {
      token,
      body: { name: `WS by ${role}` },
    });
    expect(outcome(created)).toBe(ownerAndAdmins('create workspaces')[role]);
    expect(await countWorkspaces()).toBe(before + (created.status === 201 ? 1 : 0));

    const target = users.noRow.userId;
    const promoted = await api('PATCH', `/api/v1/organisations/${org.organisationId}/members/${target}`, {
      token,
      body: { role: 'admin' },
    });
    expect(outcome(promoted)).toBe(ownerAndAdmins("change or remove the organisation's members")[role]);
    const row = (
      await api('GET', `/api/v1/organisations/${org.organisationId}/members?limit=100`, {
        token: org.owner.token,
      })
    ).body.items.find((m: { user_id: string }) => m.user_id === target);
    expect(row.role).toBe(promoted.status === 200 ? 'admin' : 'regular');
    if (promoted.status === 200) {
      await api('PATCH', `/api/v1/organisations/${org.organisationId}/members/${target}`, {
        token: org.owner.token,
        body: { role: 'regular' },
      });
    }
  });
});
