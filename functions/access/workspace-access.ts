import { forbidden, HttpError, notFound, viewerReadOnly } from '../platform/errors.js';
import { registerWriteGuard } from '../platform/http/write-guard.js';
import { isId } from '../platform/ids.js';
import { USERS_ONLY } from '../platform/http/authenticate.js';
import type { Principal, UserPrincipal } from '../platform/auth/principal.js';
import {
  decide,
  effectiveWorkspaceRole,
  refusal,
  type Action,
  type OrganisationRole,
  type WorkspaceRole,
} from './authorization.js';
import {
  OrgMemberEntity,
  WorkspaceEntity,
  WorkspaceMemberEntity,
  accessService,
  type OrgMember,
  type Workspace,
} from './entities.js';

export const WORKSPACE_NOT_FOUND = 'Workspace not found';
export const ORGANISATION_NOT_FOUND = 'Organisation not found';

export interface WorkspaceAccess {
  principal: Principal;
  workspace: Workspace;
  organisationId: string;
  organisationRole?: OrganisationRole;
  workspaceRole: WorkspaceRole;
}

export interface OrganisationAccess {
  /** Organisation routes are for users only (an API key is refused before this is built). */
  principal: UserPrincipal;
  organisationId: string;
  organisationRole: OrganisationRole;
  member: OrgMember;
}

/**
 * Decides the caller's effective role in a workspace from the records already read. A caller who is
 * not a member (or a deleted workspace, or an API key of another organisation) sees 404, never 403.
 */
export function accessFrom(
  principal: Principal,
  records: { workspace?: Workspace | null; orgMember?: OrgMember | null; workspaceRole?: WorkspaceRole },
): WorkspaceAccess {
  const { workspace } = records;
  if (!workspace || workspace.deletedAt) throw notFound(WORKSPACE_NOT_FOUND);
  if (principal.kind === 'api_key') {
    if (
      principal.workspaceId !== workspace.workspaceId ||
      principal.organisationId !== workspace.organisationId
    ) {
      throw notFound(WORKSPACE_NOT_FOUND);
    }
    return { principal, workspace, organisationId: workspace.organisationId, workspaceRole: 'member' };
  }
  const orgMember = records.orgMember?.status === 'accepted' ? records.orgMember : undefined;
  if (!orgMember) throw notFound(WORKSPACE_NOT_FOUND);
  const workspaceRole = effectiveWorkspaceRole(orgMember.role, records.workspaceRole);
  if (!workspaceRole) throw notFound(WORKSPACE_NOT_FOUND);
  return {
    principal,
    workspace,
    organisationId: workspace.organisationId,
    organisationRole: orgMember.role,
    workspaceRole,
  };
}

/**
 * Throws 403 unless the access allows the action: a viewer's write is `Viewers have read-only access`;
 * any other refusal says who may (`Only organisation owners and admins can buy phone numbers`).
 */
export function authorize(
  access: { organisationRole?: OrganisationRole; workspaceRole?: WorkspaceRole },
  action: Action,
): void {
  const decision = decide(action, { organisation: access.organisationRole, workspace: access.workspaceRole });
  if (decision === 'viewer_read_only') throw viewerReadOnly();
  if (decision === 'forbidden') throw forbidden(refusal(action));
}

/** Reads what decides the caller's role in a workspace (two round trips for a user, one for a key). */
export async function loadWorkspaceAccess(
  principal: Principal,
  workspaceId: string,
): Promise<WorkspaceAccess> {
  // An id of the wrong shape is unknown: 404, and no read.
  if (!isId('workspace', workspaceId)) throw notFound(WORKSPACE_NOT_FOUND);
  if (principal.kind === 'api_key') {
    const { data: workspace } = await WorkspaceEntity.get({ workspaceId }).go();
    return accessFrom(principal, { workspace });
  }
  const { data } = await accessService.transaction
    .get(({ workspace, workspaceMember }) => [
      workspace.get({ workspaceId }).commit(),
      workspaceMember.get({ workspaceId, userId: principal.userId }).commit(),
    ])
    .go();
  const workspace = data[0]?.item;
  const workspaceMember = data[1]?.item;
  if (!workspace || workspace.deletedAt) throw notFound(WORKSPACE_NOT_FOUND);
  const { data: orgMember } = await OrgMemberEntity.get({
    organisationId: workspace.organisationId,
    userId: principal.userId,
  }).go();
  return accessFrom(principal, { workspace, orgMember, workspaceRole: workspaceMember?.role });
}

/**
 * The kernel's check before a write's 422 (platform/http/write-guard.ts): a viewer is refused (403)
 * whatever the body; anyone else, or a caller this workspace does not know, is left to the 422.
 */
registerWriteGuard(async (principal, workspaceId) => {
  let access: WorkspaceAccess;
  try {
    access = await loadWorkspaceAccess(principal, workspaceId);
  } catch (error) {
    if (error instanceof HttpError) return; // not a member: the handler's 404 is for a valid body
    throw error;
  }
  if (access.workspaceRole === 'viewer') throw viewerReadOnly();
});

/** The workspace, if the caller may do `action` there; else 404 (not a member) or 403 (role). */
export async function requireWorkspace(
  principal: Principal,
  workspaceId: string,
  action: Action,
): Promise<WorkspaceAccess> {
  const access = await loadWorkspaceAccess(principal, workspaceId);
  authorize(access, action);
  return access;
}

/** The caller's membership of an organisation, if they may do `action` there; else 404 or 403. */
export async function requireOrganisation(
  principal: Principal,
  organisationId: string,
  action: Action,
): Promise<OrganisationAccess> {
  if (principal.kind !== 'user') throw forbidden(USERS_ONLY);
  if (!isId('organisation', organisationId)) throw notFound(ORGANISATION_NOT_FOUND);
  const { data: member } = await OrgMemberEntity.get({ organisationId, userId: principal.userId }).go();
  if (!member || member.status !== 'accepted') throw notFound(ORGANISATION_NOT_FOUND);
  authorize({ organisationRole: member.role }, action);
  return { principal, organisationId, organisationRole: member.role, member };
}

export { WorkspaceMemberEntity };

/** The calling user; an API key is 403 (identity, organisation and key routes are for users). */
export function requireUser(principal: Principal): UserPrincipal {
  if (principal.kind !== 'user') throw forbidden(USERS_ONLY);
  return principal;
}
