import { conflict, notFound } from '../platform/errors.js';
import { isId } from '../platform/ids.js';
import { isConditionFailure } from '../platform/table.js';
import { accessService, OrgMemberEntity, WorkspaceEntity, WorkspaceMemberEntity } from './entities.js';
import { pendingInvitations, withdrawInvitation } from './invitations.js';
import { paginate, type ListQuery } from '../platform/pagination.js';
import type { OrganisationAccess } from './workspace-access.js';

/** Members of an organisation: accepted memberships and pending invitations. */
export const MEMBER_NOT_FOUND = 'Member not found';
export const OWNER_ROLE_FIXED = "The owner's role cannot be changed";
export const OWNER_CANNOT_BE_REMOVED = 'The owner cannot be removed from the organisation';
export const assignAnotherAdmin = (workspaceName: string) =>
  `Assign another admin to workspace ${workspaceName} first`;

export interface OrganisationMemberView {
  userId: string | null;
  email: string;
  role: 'owner' | 'admin' | 'regular';
  status: 'pending' | 'accepted';
  invitationId: string | null;
  joinedAt: string | null;
}

export async function listOrganisationMembers(access: OrganisationAccess, query: ListQuery) {
  const { organisationId } = access;
  const [{ data: members }, invitations] = await Promise.all([
    OrgMemberEntity.query.byOrganisation({ organisationId }).go({ pages: 'all' }),
    pendingInvitations(organisationId),
  ]);
  const rows: OrganisationMemberView[] = [
    ...members
      .filter((m) => m.status === 'accepted')
      .map((m) => ({
        userId: m.userId,
        email: m.email,
        role: m.role,
        status: 'accepted' as const,
        invitationId: null,
        joinedAt: m.joinedAt,
      })),
    ...invitations.map((i) => ({
      userId: null,
      email: i.email,
      role: i.role,
      status: 'pending' as const,
      invitationId: i.invitationId,
      joinedAt: null,
    })),
  ];
  return paginate(rows, (r) => r.userId ?? r.invitationId ?? r.email, query);
}

async function acceptedMember(organisationId: string, userId: string) {
  if (!isId('user', userId)) throw notFound(MEMBER_NOT_FOUND);
  const { data: member } = await OrgMemberEntity.get({ organisationId, userId }).go({ consistent: true });
  if (!member || member.status !== 'accepted') throw notFound(MEMBER_NOT_FOUND);
  return member;
}

/** Changes a member's organisation role (`regular` ↔ `admin`); the owner's role is fixed here (409). */
export async function changeMemberRole(
  access: OrganisationAccess,
  userId: string,
  role: 'regular' | 'admin',
) {
  const member = await acceptedMember(access.organisationId, userId);
  if (member.role === 'owner') throw conflict(OWNER_ROLE_FIXED);
  try {
    const { data } = await OrgMemberEntity.patch({ organisationId: access.organisationId, userId })
      .set({ role })
      .where((attr, op) => `${op.eq(attr.status, 'accepted')} AND ${op.ne(attr.role, 'owner')}`)
      .go({ response: 'all_new' });
    return data;
  } catch (error) {
    if (isConditionFailure(error)) throw notFound(MEMBER_NOT_FOUND);
    throw error;
  }
}

/**
 * Removes a member from the organisation and from each of its workspaces. Refused (409) for the
 * owner, and while the member is the only assigned admin of a workspace: only explicit workspace
 * admin rows count (organisation owners and admins are admins everywhere implicitly, so they do not
 * make a workspace "assigned"). The other admin each such workspace relies on is checked in the same
 * transaction, so two admins cannot remove each other at once and leave a workspace without one.
 * A pending member is removed by its invitation id (the invitation is withdrawn).
 */
export async function removeMember(access: OrganisationAccess, memberId: string): Promise<void> {
  const { organisationId } = access;
  if (isId('invitation', memberId)) return withdrawInvitation(access, memberId);
  const member = await acceptedMember(organisationId, memberId);
  if (member.role === 'owner') throw conflict(OWNER_CANNOT_BE_REMOVED);

  const { data: rows } = await WorkspaceMemberEntity.query.byUser({ userId: memberId }).go({ pages: 'all' });
  const ownRows = rows.filter((r) => r.organisationId === organisationId);
  const otherAdmins: { workspaceId: string; userId: string }[] = [];
  for (const row of ownRows.filter((r) => r.role === 'admin')) {
    const { data: colleagues } = await WorkspaceMemberEntity.query
      .byWorkspace({ workspaceId: row.workspaceId })
      .go({ pages: 'all' });
    const other = colleagues.find((c) => c.userId !== memberId && c.role === 'admin');
    if (other) {
      otherAdmins.push({ workspaceId: row.workspaceId, userId: other.userId });
      continue;
    }
    const { data: workspace } = await WorkspaceEntity.get({ workspaceId: row.workspaceId }).go();
    if (workspace && !workspace.deletedAt) throw conflict(assignAnotherAdmin(workspace.name));
  }

  const result = await accessService.transaction
    .write(({ orgMember, workspaceMember }) => [
      orgMember
        .delete({ organisationId, userId: memberId })
        .where((attr, op) => `${op.exists(attr.userId)} AND ${op.ne(attr.role, 'owner')}`)
        .commit(),
      ...ownRows.map((r) =>
        workspaceMember.delete({ workspaceId: r.workspaceId, userId: memberId }).commit(),
      ),
      ...otherAdmins.map((a) =>
        workspaceMember
          .check({ workspaceId: a.workspaceId, userId: a.userId })
          .where((attr, op) => op.eq(attr.role, 'admin'))
          .commit(),
      ),
    ])
    .go();
  if (result.canceled) {
    // Something changed meanwhile (the member left, or another admin was removed or demoted).
    const { data: still } = await OrgMemberEntity.get({ organisationId, userId: memberId }).go({
      consistent: true,
    });
    if (!still) throw notFound(MEMBER_NOT_FOUND);
    throw conflict('Workspace admins changed meanwhile, please try again');
  }
}
