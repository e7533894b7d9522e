import type { OrganisationRole, WorkspaceRole } from './authorization.js';
import { workspaceCountry, type Workspace } from './entities.js';
import type { Invitation } from './invitations.js';
import type { OrganisationMemberView } from './members.js';
import type { WorkspaceMemberView } from './workspaces.js';

/** Wire shapes (snake_case) of the access domain's records. */

interface OrganisationRecord {
  organisationId: string;
  name: string;
  ownerUserId: string;
  createdAt: string;
  updatedAt?: string;
}

/** `billing`: the plan and credit balance billing reports (functions/billing/organisations.ts). */
export function organisationView(
  organisation: OrganisationRecord,
  role: OrganisationRole,
  billing?: { plan: string; credit_balance: number } | null,
) {
  return {
    id: organisation.organisationId,
    organisation_id: organisation.organisationId,
    name: organisation.name,
    owner_user_id: organisation.ownerUserId,
    role,
    plan: billing?.plan ?? null,
    credit_balance: billing?.credit_balance ?? null,
    created_at: organisation.createdAt,
    updated_at: organisation.updatedAt ?? null,
  };
}

export function organisationSummaryView(organisation: OrganisationRecord, role: OrganisationRole) {
  return {
    id: organisation.organisationId,
    organisation_id: organisation.organisationId,
    name: organisation.name,
    owner_user_id: organisation.ownerUserId,
    role,
    created_at: organisation.createdAt,
    updated_at: organisation.updatedAt ?? null,
  };
}

export function workspaceView(workspace: Workspace, role: WorkspaceRole | null) {
  return {
    id: workspace.workspaceId,
    workspace_id: workspace.workspaceId,
    organisation_id: workspace.organisationId,
    name: workspace.name,
    timezone: workspace.timezone,
    country: workspaceCountry(workspace),
    hot_reply_alert_recipients: workspace.hotReplyAlertRecipients ?? [],
    concurrent_call_limit: workspace.concurrentCallLimit,
    role,
    created_at: workspace.createdAt,
    updated_at: workspace.updatedAt ?? null,
  };
}

export function organisationMemberView(member: OrganisationMemberView) {
  return {
    user_id: member.userId,
    email: member.email,
    role: member.role,
    status: member.status,
    invitation_id: member.invitationId,
    joined_at: member.joinedAt,
  };
}

export function invitationView(invitation: Invitation) {
  return {
    id: invitation.invitationId,
    invitation_id: invitation.invitationId,
    organisation_id: invitation.organisationId,
    email: invitation.email,
    role: invitation.role,
    workspaces: ((invitation.workspaces ?? []) as { workspaceId: string; role: WorkspaceRole }[]).map(
      (w) => ({ workspace_id: w.workspaceId, role: w.role }),
    ),
    status: invitation.status,
    email_sent: invitation.emailSent ?? false,
    send_count: invitation.sendCount ?? 1,
    created_at: invitation.createdAt,
    last_sent_at: invitation.lastSentAt ?? null,
  };
}

export function workspaceMemberView(member: WorkspaceMemberView) {
  return {
    user_id: member.userId,
    email: member.email,
    role: member.role,
    organisation_role: member.organisationRole,
    workspace_role: member.workspaceRole,
  };
}

export function meView(profile: {
  user: { userId: string; email: string; name?: string; createdAt: string };
  organisations: { organisation: OrganisationRecord; role: OrganisationRole }[];
}) {
  return {
    id: profile.user.userId,
    user_id: profile.user.userId,
    email: profile.user.email,
    name: profile.user.name ?? null,
    organisations: profile.organisations.map((o) => ({
      organisation_id: o.organisation.organisationId,
      name: o.organisation.name,
      role: o.role,
    })),
    created_at: profile.user.createdAt,
  };
}

export function acceptedInvitationView(invitation: Invitation) {
  return {
    id: invitation.invitationId,
    invitation_id: invitation.invitationId,
    organisation_id: invitation.organisationId,
    status: invitation.status,
    role: invitation.role,
    workspaces: ((invitation.workspaces ?? []) as { workspaceId: string; role: WorkspaceRole }[]).map(
      (w) => ({
        workspace_id: w.workspaceId,
        role: w.role,
      }),
    ),
  };
}
