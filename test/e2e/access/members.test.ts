import { describe, expect, it } from '@jest/globals';
import { api } from '../../helpers/http.js';
import { member, organisation, UNKNOWN, workspace } from './fixtures.js';

describe('organisation members: roles and removal (HTTP, local stack)', () => {
  it('removing the only assigned admin of a workspace is refused with its name until another admin is assigned', async () => {
    const org = await organisation('only-admin');
    const ops = await workspace(org, 'Operations');
    const solo = await member(org, 'solo-admin', 'regular', [{ workspace_id: ops, role: 'admin' }]);
    const path = `/api/v1/organisations/${org.organisationId}/members/${solo.userId}`;

    // The owner is an admin everywhere implicitly, but that does not count as an assigned admin.
    const refused = await api('DELETE', path, { token: org.owner.token });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: 'Assign another admin to workspace Operations first' });
    // Nothing changed: still a member, still the workspace's admin.
    expect((await api('GET', `/api/v1/workspaces/${ops}`, { token: solo.token })).body.role).toBe('admin');

    // An organisation admin removing them is refused the same way.
    const orgAdmin = await member(org, 'org-admin', 'admin');
    expect((await api('DELETE', path, { token: orgAdmin.token })).status).toBe(409);

    // A workspace *member* does not make it assigned either; a second workspace admin does.
    const helper = await member(org, 'helper', 'regular', [{ workspace_id: ops, role: 'member' }]);
    expect((await api('DELETE', path, { token: org.owner.token })).status).toBe(409);
    const promote = await api('PUT', `/api/v1/workspaces/${ops}/members/${helper.userId}`, {
      token: solo.token,
      body: { role: 'admin' },
    });
    expect(promote.status).toBe(200);
    expect(promote.body).toEqual({
      user_id: helper.userId,
      email: helper.email,
      role: 'admin',
      organisation_role: 'regular',
      workspace_role: 'admin',
    });

    const removed = await api('DELETE', path, { token: org.owner.token });
    expect(removed.status).toBe(204);
    // Gone at once: from the organisation, from its workspaces, from the member lists.
    expect((await api('GET', `/api/v1/workspaces/${ops}`, { token: solo.token })).status).toBe(404);
    expect(
      (await api('GET', `/api/v1/organisations/${org.organisationId}`, { token: solo.token })).status,
    ).toBe(404);
    const wsMembers = (await api('GET', `/api/v1/workspaces/${ops}/members`, { token: org.owner.token })).body
      .items;
    expect(wsMembers.map((m: { user_id: string }) => m.user_id)).not.toContain(solo.userId);
    expect((await api('DELETE', path, { token: org.owner.token })).status).toBe(404);

    // Now the helper is the only assigned admin: refused for them.
    const helperRemoval = await api(
      'DELETE',
      `/api/v1/organisations/${org.organisationId}/members/${helper.userId}`,
      { token: org.owner.token },
    );
    expect(helperRemoval.body).toEqual({ error: 'Assign another admin to workspace Operations first' });
  });

  it('a removed member can be invited again and rejoin', async () => {
    const org = await organisation('rejoin');
    const leaver = await member(org, 'leaver', 'regular', [
      { workspace_id: org.workspaceId, role: 'member' },
    ]);
    expect(
      (
        await api('DELETE', `/api/v1/organisations/${org.organisationId}/members/${leaver.userId}`, {
          token: org.owner.token,
        })
      ).status,
    ).toBe(204);
    const again = await api('POST', `/api/v1/organisations/${org.organisationId}/invitations`, {
      token: org.owner.token,
      body: { email: leaver.email, role: 'admin' },
    });
    expect(again.status).toBe(201);
    expect(
      (await api('POST', `/api/v1/invitations/${again.body.invitation_id}/accept`, { token: leaver.token }))
        .status,
    ).toBe(200);
    const got = await api('GET', `/api/v1/organisations/${org.organisationId}`, { token: leaver.token });
    expect(got.body.role).toBe('admin');
  });

  it('the owner cannot be removed or demoted here (409); nothing changes', async () => {
    const org = await organisation('fixed-owner');
    const admin = await member(org, 'would-be-usurper', 'admin');
    const path = `/api/v1/organisations/${org.organisationId}/members/${org.owner.userId}`;
    const demote = await api('PATCH', path, { token: admin.token, body: { role: 'regular' } });
    expect(demote.status).toBe(409);
    expect(demote.body).toEqual({ error: "The owner's role cannot be changed" });
    const remove = await api('DELETE', path, { token: admin.token });
    expect(remove.status).toBe(409);
    expect(remove.body).toEqual({ error: 'The owner cannot be removed from the organisation' });
    expect((await api('DELETE', path, { token: org.owner.token })).status).toBe(409);
    const toOwner = await api(
      'PATCH',
      `/api/v1/organisations/${org.organisationId}/members/${admin.userId}`,
      {
        token: org.owner.token,
        body: { role: 'owner' },
      },
    );
    expect(toOwner.status).toBe(422);
    const got = await api('GET', `/api/v1/organisations/${org.organisationId}`, { token: org.owner.token });
    expect(got.body).toMatchObject({ role: 'owner', owner_user_id: org.owner.userId });
    const members = (
      await api('GET', `/api/v1/organisations/${org.organisationId}/members`, { token: org.owner.token })
    ).body.items;
    expect(members.filter((m: { role: string }) => m.role === 'owner')).toEqual([
      expect.objectContaining({ user_id: org.owner.userId }),
    ]);
  });

  it('a promoted organisation admin is admin of every workspace, existing and future; demoted, back to their rows', async () => {
    const org = await organisation('promote');
    const existing = await workspace(org, 'Existing');
    const person = await member(org, 'climber', 'regular', [{ workspace_id: existing, role: 'viewer' }]);
    const viewerWrite = await api('PATCH', `/api/v1/workspaces/${existing}`, {
      token: person.token,
      body: { timezone: 'Australia/Sydney' },
    });
    expect(viewerWrite.status).toBe(403);
    expect(viewerWrite.body).toEqual({ error: 'Viewers have read-only access' });

    const promoted = await api(
      'PATCH',
      `/api/v1/organisations/${org.organisationId}/members/${person.userId}`,
      {
        token: org.owner.token,
        body: { role: 'admin' },
      },
    );
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ user_id: person.userId, role: 'admin', status: 'accepted' });
    expect(
      (
        await api('PATCH', `/api/v1/workspaces/${existing}`, {
          token: person.token,
          body: { timezone: 'Australia/Sydney' },
        })
      ).status,
    ).toBe(200);
    const future = await workspace(org, 'Future');
    expect((await api('GET', `/api/v1/workspaces/${future}`, { token: person.token })).body.role).toBe(
      'admin',
    );
    const listed = (await api('GET', `/api/v1/workspaces/${existing}/members`, { token: person.token })).body
      .items;
    expect(listed.find((m: { user_id: string }) => m.user_id === person.userId)).toEqual({
      user_id: person.userId,
      email: person.email,
      role: 'admin',
      organisation_role: 'admin',
      workspace_role: 'viewer',
    });

    await api('PATCH', `/api/v1/organisations/${org.organisationId}/members/${person.userId}`, {
      token: org.owner.token,
      body: { role: 'regular' },
    });
    expect((await api('GET', `/api/v1/workspaces/${existing}`, { token: person.token })).body.role).toBe(
      'viewer',
    );
    expect((await api('GET', `/api/v1/workspaces/${future}`, { token: person.token })).status).toBe(404);
  });

  it('workspace members: only accepted organisation members can be added; unknown users and other tenants are 404', async () => {
    const org = await organisation('ws-members');
    const other = await organisation('ws-members-other');
    const path = (userId: string) => `/api/v1/workspaces/${org.workspaceId}/members/${userId}`;
    for (const userId of [other.owner.userId, UNKNOWN.user, 'not-a-user']) {
      const response = await api('PUT', path(userId), { token: org.owner.token, body: { role: 'member' } });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'Member not found' });
    }
    const pending = await api('POST', `/api/v1/organisations/${org.organisationId}/invitations`, {
      token: org.owner.token,
      body: { email: 'pending-person@example.com', role: 'regular' },
    });
    expect(pending.status).toBe(201);
    const bad = await api('PUT', path(org.owner.userId), { token: org.owner.token, body: { role: 'owner' } });
    expect(bad.status).toBe(422);
    const extra = await api('PUT', path(org.owner.userId), {
      token: org.owner.token,
      body: { role: 'member', workspace_id: other.workspaceId },
    });
    expect(extra.status).toBe(422);
    expect(extra.body.detail[0]).toMatchObject({ type: 'extra_forbidden', loc: ['body', 'workspace_id'] });
    expect((await api('DELETE', path(UNKNOWN.user), { token: org.owner.token })).status).toBe(404);

    // Another tenant's owner cannot touch this workspace's members (404), nor see them.
    const cross = await api('PUT', path(other.owner.userId), {
      token: other.owner.token,
      body: { role: 'admin' },
    });
    expect(cross.status).toBe(404);
    expect(cross.body).toEqual({ error: 'Workspace not found' });
    expect((await api('DELETE', path(org.owner.userId), { token: other.owner.token })).status).toBe(404);
    expect(
      (await api('GET', `/api/v1/workspaces/${org.workspaceId}/members`, { token: other.owner.token }))
        .status,
    ).toBe(404);
    const members = (
      await api('GET', `/api/v1/workspaces/${org.workspaceId}/members`, { token: org.owner.token })
    ).body.items;
    expect(members).toEqual([
      {
        user_id: org.owner.userId,
        email: org.owner.email,
        role: 'admin',
        organisation_role: 'owner',
        workspace_role: null,
      },
    ]);
  });
});
