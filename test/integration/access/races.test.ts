import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import {
  InvitationEntity,
  OrgMemberEntity,
  WorkspaceMemberEntity,
} from '../../../functions/access/entities.js';
import { UserIdentityEntity } from '../../../functions/platform/auth/entities.js';
import { api } from '../../helpers/http.js';
import { subjectFor, tokenFor } from '../../helpers/tokens.js';
import { emailsTo, member, organisation, uniqueEmail, workspace } from '../../e2e/access/fixtures.js';

/**
 * Faults and races through the real path (the gateway serves requests concurrently): duplicates and
 * simultaneous requests leave exactly one record and never break an invariant.
 */
describe('access under concurrency and repetition', () => {
  it('the same invitation accepted five times at once: one membership, every answer 200', async () => {
    const org = await organisation('race-accept');
    const email = uniqueEmail('racer');
    const invited = await api('POST', `/api/v1/organisations/${org.organisationId}/invitations`, {
      token: org.owner.token,
      body: { email, role: 'regular', workspaces: [{ workspace_id: org.workspaceId, role: 'member' }] },
    });
    const token = await tokenFor(email);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        api('POST', `/api/v1/invitations/${invited.body.invitation_id}/accept`, { token }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const { data: members } = await OrgMemberEntity.query
      .byOrganisation({ organisationId: org.organisationId })
      .go({ pages: 'all' });
    expect(members.filter((m) => m.email === email)).toHaveLength(1);
    const { data: rows } = await WorkspaceMemberEntity.query
      .byWorkspace({ workspaceId: org.workspaceId })
      .go({ pages: 'all' });
    expect(rows).toHaveLength(1);
  });

  it('the same address invited five times at once: one invitation record, one 201, the rest resends', async () => {
    const org = await organisation('race-invite');
    const email = uniqueEmail('popular');
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        api('POST', `/api/v1/organisations/${org.organisationId}/invitations`, {
          token: org.owner.token,
          body: { email, role: 'regular' },
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 201]);
    expect(new Set(answers.map((a) => a.body.invitation_id)).size).toBe(1);
    const { data } = await InvitationEntity.query
      .byOrganisation({ organisationId: org.organisationId })
      .go({ pages: 'all' });
    expect(data).toHaveLength(1);
    expect(data[0]).toMatchObject({ status: 'pending', sendCount: 5 });
    // Each send is named by its count: five distinct emails, none sent twice.
    const sent = emailsTo(email);
    expect(sent).toHaveLength(5);
    expect(new Set(sent.map((e) => e.idempotency_key)).size).toBe(5);
  });

  it('the two assigned admins of a workspace removed at once: one is refused, the workspace keeps an admin', async () => {
    const org = await organisation('race-remove');
    const ws = await workspace(org, 'Contested');
    const a = await member(org, 'admin-a', 'regular', [{ workspace_id: ws, role: 'admin' }]);
    const b = await member(org, 'admin-b', 'regular', [{ workspace_id: ws, role: 'admin' }]);
    const [ra, rb] = await Promise.all(
      [a, b].map((m) =>
        api('DELETE', `/api/v1/organisations/${org.organisationId}/members/${m.userId}`, {
          token: org.owner.token,
        }),
      ),
    );
    expect([ra.status, rb.status].sort()).toEqual([204, 409]);
    const { data: rows } = await WorkspaceMemberEntity.query
      .byWorkspace({ workspaceId: ws })
      .go({ pages: 'all' });
    expect(rows.filter((r) => r.role === 'admin')).toHaveLength(1);
  });

  it('one identity event delivered five times at once creates one user', async () => {
    const email = uniqueEmail('burst');
    const body = JSON.stringify({
      triggerSource: 'PostConfirmation_ConfirmSignUp',
      userName: subjectFor(email),
      request: { userAttributes: { sub: subjectFor(email), email } },
    });
    const id = `evt_${randomUUID()}`;
    const now = new Date();
    const headers = {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(process.env.IDENTITY_WEBHOOK_SECRET!).sign(id, now, body),
    };
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => api('POST', '/webhooks/identity', { rawBody: body, headers })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.map((a) => a.body.outcome).sort()).toEqual([
      'created',
      'duplicate',
      'duplicate',
      'duplicate',
      'duplicate',
    ]);
    const identity = await UserIdentityEntity.get({ subject: subjectFor(email) }).go({ consistent: true });
    expect(identity.data?.userId).toMatch(/^usr_/);
    // The user's first token resolves to that same user, not a second one.
    const verified = await api('GET', '/api/v1/auth/verify', { token: await tokenFor(email) });
    expect(verified.body.user_id).toBe(identity.data?.userId);
  });
});
