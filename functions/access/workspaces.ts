import { clock } from '../platform/clock.js';
import { conflict, notFound } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { effectiveWorkspaceRole, type OrganisationRole, type WorkspaceRole } from './authorization.js';
import { isConditionFailure } from '../platform/table.js';
import {
  accessService,
  DEFAULT_WORKSPACE_COUNTRY,
  OrgMemberEntity,
  WorkspaceEntity,
  WorkspaceMemberEntity,
  type Workspace,
} from './entities.js';
import { MEMBER_NOT_FOUND } from './members.js';
import { paginate, type ListQuery } from '../platform/pagination.js';
import type { UpdateWorkspaceBody } from './schemas.js';
import { WORKSPACE_NOT_FOUND, type OrganisationAccess, type WorkspaceAccess } from './workspace-access.js';

/** Workspaces of an organisation, their settings and their members. */
export const WORKSPACE_HAS_ACTIVE_CALLS = 'Workspace has calls in progress';

/** A new workspace (the caller was authorised for `organisation:create_workspace`). */
export async function createWorkspace(
  access: OrganisationAccess,
  input: { name: string; timezone?: string; country?: string },
) {
  const { data } = await WorkspaceEntity.create({
    workspaceId: newId('workspace'),
    organisationId: access.organisationId,
    name: input.name,
    timezone: input.timezone ?? 'UTC',
    country: input.country ?? DEFAULT_WORKSPACE_COUNTRY,
    createdAt: clock.now().toISOString(),
  }).go();
  return { workspace: data, role: effectiveWorkspaceRole(access.organisationRole, undefined) ?? null };
}

/**
 * The workspaces of the organisation the caller can see, with their effective role in each:
 * organisation owners and admins see all of them as admin; a regular member sees those they belong to.
 */
export async function listWorkspaces(access: OrganisationAccess, query: ListQuery) {
  const { organisationId, organisationRole } = access;
  const { data } = await WorkspaceEntity.query.byOrganisation({ organisationId }).go({ pages: 'all' });
  const live = data.filter((w) => !w.deletedAt);
  let rows: { workspace: Workspace; role: WorkspaceRole }[];
  if (organisationRole === 'owner' || organisationRole === 'admin') {
    rows = live.map((workspace) => ({ workspace, role: 'admin' as const }));
  } else {
    const { data: memberships } = await WorkspaceMemberEntity.query
      .byUser({ userId: access.principal.userId })
      .go({ pages: 'all' });
    const roles = new Map(
      memberships.filter((m) => m.organisationId === organisationId).map((m) => [m.workspaceId, m.role]),
    );
    rows = live.flatMap((workspace) => {
      const role = roles.get(workspace.workspaceId);
      return role ? [{ workspace, role }] : [];
    });
  }
  return paginate(rows, (r) => r.workspace.workspaceId, query);
}

/** Changes workspace settings (the caller was authorised for `workspace:update_settings`). */
export async function updateWorkspace(
  access: WorkspaceAccess,
  changes: UpdateWorkspaceBody,
): Promise<Workspace> {
  const set: Partial<
    Pick<Workspace, 'name' | 'timezone' | 'country' | 'hotReplyAlertRecipients' | 'concurrentCallLimit'>
  > = {};
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.timezone !== undefined) set.timezone = changes.timezone;
  if (changes.country !== undefined) set.country = changes.country;
  if (changes.hot_reply_alert_recipients !== undefined)
    set.hotReplyAlertRecipients = changes.hot_reply_alert_recipients;
  if (changes.concurrent_call_limit !== undefined) set.concurrentCallLimit = changes.concurrent_call_limit;
  if (Object.keys(set).length === 0) return access.workspace;
  try {
    const { data } = await WorkspaceEntity.patch({ workspaceId: access.workspace.workspaceId })
      .set({ ...set, updatedAt: clock.now().toISOString() })
      .where((attr, op) => op.notExists(attr.deletedAt))
      .go({ response: 'all_new' });
    return data as Workspace;
  } catch (error) {
    if (isConditionFailure(error)) throw notFound(WORKSPACE_NOT_FOUND);
    throw error;
  }
}

/**
 * Deletes a workspace (the caller was authorised for `workspace:delete`): it is marked deleted, and
 * from then on it and everything in it is 404. Refused while calls are in progress there.
 */
export async function deleteWorkspace(access: WorkspaceAccess): Promise<void> {
  const { workspaceId } = access.workspace;
  const now = clock.now().toISOString();
  try {
    await WorkspaceEntity.patch({ workspaceId })
      .set({ deletedAt: now, updatedAt: now })
      .where((attr, op) => `${op.notExists(attr.deletedAt)} AND ${op.eq(attr.activeCalls, 0)}`)
      .go();
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const { data } = await WorkspaceEntity.get({ workspaceId }).go({ consistent: true });
    if (!data || data.deletedAt) throw notFound(WORKSPACE_NOT_FOUND);
    throw conflict(WORKSPACE_HAS_ACTIVE_CALLS);
  }
}

export interface WorkspaceMemberView {
  userId: string;
  email: string;
  role: WorkspaceRole;
  organisationRole: OrganisationRole;
  workspaceRole: WorkspaceRole | null;
}

/**
 * Everyone with a role in the workspace and their effective role: organisation owners and admins
 * appear as admin (whatever their workspace row), then the explicit rows of regular members.
 */
export async function listWorkspaceMembers(access: WorkspaceAccess, query: ListQuery) {
  const { workspaceId, organisationId } = access.workspace;
  const [{ data: members }, { data: rows }] = await Promise.all([
    OrgMemberEntity.query.byOrganisation({ organisationId }).go({ pages: 'all' }),
    WorkspaceMemberEntity.query.byWorkspace({ workspaceId }).go({ pages: 'all' }),
  ]);
  const rowRoles = new Map(rows.map((r) => [r.userId, r.role]));
  const views: WorkspaceMemberView[] = members
    .filter((m) => m.status === 'accepted')
    .flatMap((m) => {
      const workspaceRole = rowRoles.get(m.userId) ?? null;
      const role = effectiveWorkspaceRole(m.role, workspaceRole ?? undefined);
      return role
        ? [{ userId: m.userId, email: m.email, role, organisationRole: m.role, workspaceRole }]
        : [];
    });
  return paginate(views, (v) => v.userId, query);
}

/**
 * Gives an accepted organisation member a role in the workspace (the caller was authorised for
 * `workspace:manage_members`). The membership is checked in the same transaction as the write.
 */
export async function putWorkspaceMember(
  access: WorkspaceAccess,
  userId: string,
  role: WorkspaceRole,
): Promise<WorkspaceMemberView> {
  const { workspaceId, organisationId } = access.workspace;
  if (!isId('user', userId)) throw notFound(MEMBER_NOT_FOUND);
  const { data: member } = await OrgMemberEntity.get({ organisationId, userId }).go();
  if (!member || member.status !== 'accepted') throw notFound(MEMBER_NOT_FOUND);
  const result = await accessService.transaction
    .write(({ orgMember, workspace, workspaceMember }) => [
      orgMember
        .check({ organisationId, userId })
        .where((attr, op) => op.eq(attr.status, 'accepted'))
        .commit(),
      workspace
        .check({ workspaceId })
        .where((attr, op) => op.notExists(attr.deletedAt))
        .commit(),
      workspaceMember
        .put({ workspaceId, userId, organisationId, role, addedAt: clock.now().toISOString() })
        .commit(),
    ])
    .go();
  if (result.canceled) {
    if (result.data[1]?.rejected) throw notFound(WORKSPACE_NOT_FOUND);
    throw notFound(MEMBER_NOT_FOUND);
  }
  return {
    userId,
    email: member.email,
    role: effectiveWorkspaceRole(member.role, role) ?? role,
    organisationRole: member.role,
    workspaceRole: role,
  };
}

/** Removes a user's row from the workspace (404 when they have none). */
export async function removeWorkspaceMember(access: WorkspaceAccess, userId: string): Promise<void> {
  if (!isId('user', userId)) throw notFound(MEMBER_NOT_FOUND);
  try {
    await WorkspaceMemberEntity.remove({ workspaceId: access.workspace.workspaceId, userId }).go();
  } catch (error) {
    if (isConditionFailure(error)) throw notFound(MEMBER_NOT_FOUND);
    throw error;
  }
}
