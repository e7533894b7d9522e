import { describe, expect, it } from '@jest/globals';
import { api, baseUrl } from '../../helpers/http.js';
import { tokenFor } from '../../helpers/tokens.js';
import { stackState } from '../../helpers/stack-state.js';
import { emailsTo, member, organisation, uniqueEmail, UNKNOWN, workspace } from './fixtures.js';

describe('invitations (organisation first; HTTP, local stack, real tokens)', () => {
  it('pending → accepted: the invitee sees it, accepts, becomes a member with the invited workspace roles', async () => {
    const org = await organisation('inviter', 'Invite Co');
    const sales = await workspace(org, 'Sales');
    const email = uniqueEmail('invitee');
    const invited = await api('POST', `/api/v1/organisations/${org.organisationId}/invitations`, {
      token: org.owner.token,
      body: {
        email: email.toUpperCase(),
        role: 'regular',
        workspaces: [{ workspace_id: sales, role: 'viewer' }],
      },
    });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({
      invitation_id: expect.stringMatching(/^inv_/),
      status: 'pending',
      email_sent: true,
      email,
      role: 'regular',
      workspaces: [{ workspace_id: sales, role: 'viewer' }],
      send_count: 1,
    });
    const invitationId = invited.body.invitation_id;
    expect(invited.body.id).toBe(invitationId);

    // The email went out through the email port (the local outbox), naming the invitation.
    const sent = emailsTo(email);
    expect(sent).toHaveLength(1);
    expect(sent[0].subject).toBe('You are invited to join Invite Co');
    expect(sent[0].text).toContain(invitationId);
    // It says the role given, and links to a page a browser can open (the API's accept is a POST):
    // the dashboard's invitation page where the stack serves the dashboard, else the API's own.
    expect(sent[0].text).toContain('as a member (organisation role: regular)');
    expect(sent[0].text).toContain('Workspace roles: Sales (viewer).');
    const link = sent[0].text.match(/https?:\/\/\S+/)?.[0] as string;
    const dashboard = stackState().env.DASHBOARD_URL;
    expect(link).toBe(
      dashboard
        ? `${dashboard.replace(/\/$/, '')}/invitations/${invitationId}`
        : `${baseUrl()}/i/${invitationId}`,
    );
    expect((await fetch(link)).status).toBe(200);
    const page = await fetch(`${baseUrl()}/i/${invitationId}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).toContain(`data-accept="/api/v1/invitations/${invitationId}/accept"`);
    // Opening the page accepts nothing: it signs in first.
    expect((await fetch(`${baseUrl()}/i/inv_nope`)).status).toBe(404);

    // Pending: listed as a pending member; the invitee is not a member yet.
    const members = await api('GET', `/api/v1/organisations/${org.organisationId}/members`, {
      token: org.owner.token,
    });
    expect(members.body.items).toContainEqual({
      user_id: null,
      email,
      role: 'regular',
      status: 'pending',
      invitation_id: invitationId,
      joined_at: null,
    });
    const inviteeToken = await tokenFor(email);
    expect(
      (await api('GET', `/api/v1/organisations/${org.organisationId}`, { token: inviteeToken })).status,
    ).toBe(404);
    expect((await api('GET', `/api/v1/workspaces/${sales}`, { token: inviteeToken })).status).toBe(404);

    const mine = await api('GET', '/api/v1/invitations', { token: inviteeToken });
    expect(mine.status).toBe(200);
    expect(mine.body.items).toEqual([
      {
        id: invitationId,
        invitation_id: invitationId,
        organisation_id: org.organisationId,
        organisation_name: 'Invite Co',
        role: 'regular',
        status: 'pending',
        created_at: expect.any(String),
      },
    ]);

    const accepted = await api('POST', `/api/v1/invitations/${invitationId}/accept`, { token: inviteeToken });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({
      id: invitationId,
      invitation_id: invitationId,
      organisation_id: org.organisationId,
      status: 'accepted',
      role: 'regular',
      workspaces: [{ workspace_id: sales, role: 'viewer' }],
    });
    // Accepting again changes nothing and answers the same.
    const again = await api('POST', `/api/v1/invitations/${invitationId}/accept`, { token: inviteeToken });
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('accepted');

    const me = (await api('GET', '/api/v1/auth/verify', { token: inviteeToken })).body.user_id;
    const after = await api('GET', `/api/v1/organisations/${org.organisationId}/members`, {
      token: inviteeToken,
    });
    expect(after.status).toBe(200);
    const rows = after.body.items.filter((m: { email: string }) => m.email === email);
    expect(rows).toEqual([
      {
        user_id: me,
        email,
        role: 'regular',
        status: 'accepted',
        invitation_id: null,
        joined_at: expect.any(String),
      },
    ]);
    const ws = await api('GET', `/api/v1/workspaces/${sales}`, { token: inviteeToken });
    expect(ws.status).toBe(200);
    expect(ws.body.role).toBe('viewer');
    // The Default workspace was not part of the invitation.
    expect((await api('GET', `/api/v1/workspaces/${org.workspaceId}`, { token: inviteeToken })).status).toBe(
      404,
    );
    expect((await api('GET', '/api/v1/invitations', { token: inviteeToken })).body.items).toEqual([]);
  });

  it('inviting a pending address again resends the same invitation (200), never a second member record', async () => {
    const org = await organisation('resender');
    const email = uniqueEmail('twice');
    const path = `/api/v1/organisations/${org.organisationId}/invitations`;
    const first = await api('POST', path, { token: org.owner.token, body: { email, role: 'regular' } });
    expect(first.status).toBe(201);
    const second = await api('POST', path, { token: org.owner.token, body: { email, role: 'admin' } });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      invitation_id: first.body.invitation_id,
      status: 'pending',
      email_sent: true,
      send_count: 2,
      role: 'admin',
    });
    const resent = await api('POST', `${path}/${first.body.invitation_id}/resend`, {
      token: org.owner.token,
    });
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({
      invitation_id: first.body.invitation_id,
      send_count: 3,
      email_sent: true,
    });

    expect(emailsTo(email)).toHaveLength(3);
    const members = await api('GET', `/api/v1/organisations/${org.organisationId}/members`, {
      token: org.owner.token,
    });
    expect(members.body.items.filter((m: { email: string }) => m.email === email)).toHaveLength(1);
  });

  it('an email that fails to send still leaves the invitation saved (201, email_sent:false, listed)', async () => {
    const org = await organisation('failmail');
    const email = uniqueEmail('unreachable', 'fail.test');
    const invited = await api('POST', `/api/v1/organisations/${org.organisationId}/invitations`, {
      token: org.owner.token,
      body: { email, role: 'regular' },
    });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ status: 'pending', email_sent: false });
    expect(emailsTo(email)).toEqual([]);
    const members = await api('GET', `/api/v1/organisations/${org.organisationId}/members`, {
      token: org.owner.token,
    });
    expect(members.body.items).toContainEqual(
      expect.objectContaining({ email, status: 'pending', invitation_id: invited.body.invitation_id }),
    );
    // The invitee can still find and accept it.
    const token = await tokenFor(email);
    expect((await api('GET', '/api/v1/invitations', { token })).body.items).toHaveLength(1);
    expect(
      (await api('POST', `/api/v1/invitations/${invited.body.invitation_id}/accept`, { token })).status,
    ).toBe(200);
  });

  it('only the invited address may accept (anyone else: 404, nothing changes)', async () => {
    const org = await organisation('guarded');
    const email = uniqueEmail('rightful');
    const invited = await api('POST', `/api/v1/organisations/${org.organisationId}/invitations`, {
      token: org.owner.token,
      body: { email, role: 'admin' },
    });
    const intruder = await tokenFor(uniqueEmail('intruder'));
    const refused = await api('POST', `/api/v1/invitations/${invited.body.invitation_id}/accept`, {
      token: intruder,
    });
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ error: 'Invitation not found' });
    expect(
      (await api('GET', `/api/v1/organisations/${org.organisationId}`, { token: intruder })).status,
    ).toBe(404);
    for (const id of [UNKNOWN.invitation, 'garbage']) {
      expect((await api('POST', `/api/v1/invitations/${id}/accept`, { token: intruder })).status).toBe(404);
    }
    const members = await api('GET', `/api/v1/organisations/${org.organisationId}/members`, {
      token: org.owner.token,
    });
    expect(members.body.items.find((m: { email: string }) => m.email === email)).toMatchObject({
      status: 'pending',
    });
  });

  it('who may invite: owner and admin yes; a regular member 403; bad bodies 422; members 409', async () => {
    const org = await organisation('who-invites');
    const admin = await member(org, 'inv-admin', 'admin');
    const regular = await member(org, 'inv-regular', 'regular', [
      { workspace_id: org.workspaceId, role: 'admin' },
    ]);
    const path = `/api/v1/organisations/${org.organisationId}/invitations`;

    expect(
      (
        await api('POST', path, {
          token: admin.token,
          body: { email: uniqueEmail('by-admin'), role: 'admin' },
        })
      ).status,
    ).toBe(201);
    const byRegular = await api('POST', path, {
      token: regular.token,
      body: { email: uniqueEmail('by-regular'), role: 'regular' },
    });
    expect(byRegular.status).toBe(403);
    expect(byRegular.body).toEqual({
      error: 'Only organisation owners and admins can invite members to the organisation',
    });

    const owner = await api('POST', path, {
      token: org.owner.token,
      body: { email: uniqueEmail('x'), role: 'owner' },
    });
    expect(owner.status).toBe(422);
    expect(owner.body.detail[0]).toMatchObject({ type: 'enum', loc: ['body', 'role'] });
    const sneaky = await api('POST', path, {
      token: org.owner.token,
      body: {
        email: uniqueEmail('y'),
        role: 'regular',
        organisation_id: UNKNOWN.organisation,
        status: 'accepted',
      },
    });
    expect(sneaky.status).toBe(422);
    expect(sneaky.body.detail.map((d: { type: string }) => d.type)).toEqual([
      'extra_forbidden',
      'extra_forbidden',
    ]);
    const badEmail = await api('POST', path, {
      token: org.owner.token,
      body: { email: 'not-an-email', role: 'regular' },
    });
    expect(badEmail.status).toBe(422);
    expect(badEmail.body.detail[0].loc).toEqual(['body', 'email']);

    // Another tenant's workspace in the invitation: 404, and no invitation is saved.
    const other = await organisation('other-tenant');
    const foreign = uniqueEmail('foreign');
    const withForeign = await api('POST', path, {
      token: org.owner.token,
      body: {
        email: foreign,
        role: 'regular',
        workspaces: [{ workspace_id: other.workspaceId, role: 'admin' }],
      },
    });
    expect(withForeign.status).toBe(404);
    expect(withForeign.body).toEqual({ error: 'Workspace not found' });

    const already = await api('POST', path, {
      token: org.owner.token,
      body: { email: regular.email, role: 'admin' },
    });
    expect(already.status).toBe(409);

    const members = await api('GET', `/api/v1/organisations/${org.organisationId}/members`, {
      token: org.owner.token,
    });
    const emails = members.body.items.map((m: { email: string }) => m.email);
    expect(emails).not.toContain(foreign);
    expect(members.body.items.find((m: { email: string }) => m.email === regular.email)).toMatchObject({
      role: 'regular',
      status: 'accepted',
    });
  });

  it('a pending member can be withdrawn by invitation id; their invitation then no longer works', async () => {
    const org = await organisation('withdraw');
    const email = uniqueEmail('withdrawn');
    const invited = await api('POST', `/api/v1/organisations/${org.organisationId}/invitations`, {
      token: org.owner.token,
      body: { email, role: 'regular' },
    });
    const removed = await api(
      'DELETE',
      `/api/v1/organisations/${org.organisationId}/members/${invited.body.invitation_id}`,
      { token: org.owner.token },
    );
    expect(removed.status).toBe(204);
    const token = await tokenFor(email);
    expect(
      (await api('POST', `/api/v1/invitations/${invited.body.invitation_id}/accept`, { token })).status,
    ).toBe(404);
    const resend = await api(
      'POST',
      `/api/v1/organisations/${org.organisationId}/invitations/${invited.body.invitation_id}/resend`,
      {
        token: org.owner.token,
      },
    );
    expect(resend.status).toBe(404);
  });

  it('resending an accepted invitation is 409; resending another organisation’s invitation is 404', async () => {
    const org = await organisation('resend-rules');
    const email = uniqueEmail('joined');
    const invited = await api('POST', `/api/v1/organisations/${org.organisationId}/invitations`, {
      token: org.owner.token,
      body: { email, role: 'regular' },
    });
    await api('POST', `/api/v1/invitations/${invited.body.invitation_id}/accept`, {
      token: await tokenFor(email),
    });
    const resend = await api(
      'POST',
      `/api/v1/organisations/${org.organisationId}/invitations/${invited.body.invitation_id}/resend`,
      {
        token: org.owner.token,
      },
    );
    expect(resend.status).toBe(409);

    const other = await organisation('resend-other');
    const pending = await api('POST', `/api/v1/organisations/${org.organisationId}/invitations`, {
      token: org.owner.token,
      body: { email: uniqueEmail('pending'), role: 'regular' },
    });
    const cross = await api(
      'POST',
      `/api/v1/organisations/${other.organisationId}/invitations/${pending.body.invitation_id}/resend`,
      {
        token: other.owner.token,
      },
    );
    expect(cross.status).toBe(404);
    expect(cross.body).toEqual({ error: 'Invitation not found' });
  });
});
