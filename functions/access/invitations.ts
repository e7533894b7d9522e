import { clock } from '../platform/clock.js';
import { config } from '../platform/config.js';
import { conflict, notFound } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { findUserByEmail } from '../platform/auth/users.js';
import type { UserPrincipal } from '../platform/auth/principal.js';
import { sendEmail } from '../providers/email/index.js';
import type { WorkspaceRole } from './authorization.js';
import { isConditionFailure } from '../platform/table.js';
import {
  accessService,
  InvitationEntity,
  OrganisationEntity,
  OrgMemberEntity,
  WorkspaceEntity,
} from './entities.js';
import { paginate, type ListQuery } from '../platform/pagination.js';
import type { InvitationBody } from './schemas.js';
import { WORKSPACE_NOT_FOUND, type OrganisationAccess } from './workspace-access.js';

/**
 * Invitations are organisation-first (docs/api.md): a person is invited to the organisation as
 * `regular` or `admin`, optionally with workspace roles, and stays pending until they accept. The
 * invitation record, one per (organisation, email address), is the pending member: inviting the same
 * pending address again resends it, and never creates a second record.
 */
export const INVITATION_NOT_FOUND = 'Invitation not found';
export const INVITATION_ALREADY_ACCEPTED = 'Invitation already accepted';

export type Invitation = NonNullable<
  Awaited<ReturnType<ReturnType<typeof InvitationEntity.get>['go']>>['data']
>;
type InvitationWorkspace = { workspaceId: string; role: WorkspaceRole };

export interface InvitationOutcome {
  invitation: Invitation;
  /** True when this request created the invitation (201); false when it resent a pending one (200). */
  created: boolean;
  emailSent: boolean;
}

/** Invite `email` to the organisation (the caller was authorised for `organisation:invite`). */
export async function inviteMember(
  access: OrganisationAccess,
  input: InvitationBody,
): Promise<InvitationOutcome> {
  const { organisationId } = access;
  const email = input.email;
  const workspaces = await organisationWorkspaces(organisationId, input.workspaces ?? []);
  await refuseExistingMember(organisationId, email);

  const now = clock.now().toISOString();
  const invitationId = newId('invitation');
  let written: Invitation;
  try {
    // A new pending invitation, unless one is pending already (an accepted one of a member who has
    // since left is replaced).
    const { data } = await InvitationEntity.put({
      organisationId,
      email,
      invitationId,
      role: input.role,
      workspaces,
      status: 'pending',
      invitedBy: access.principal.userId,
      createdAt: now,
      lastSentAt: now,
      sendCount: 1,
      emailSent: false,
    })
      .where((attr, op) => `${op.notExists(attr.invitationId)} OR ${op.eq(attr.status, 'accepted')}`)
      .go();
    written = data as Invitation;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // Pending already: the same record, the inviter's latest role and workspaces, a new email.
    const resent = await markResent(organisationId, email, { role: input.role, workspaces });
    if (!resent) throw conflict('Invitation changed meanwhile, please try again');
    const emailSent = await deliver(resent);
    return { invitation: { ...resent, emailSent }, created: false, emailSent };
  }
  // The record as written (send 1), not re-read: concurrent resends may already have counted on.
  const emailSent = await deliver(written);
  return { invitation: { ...written, emailSent }, created: true, emailSent };
}

/** Sends a pending invitation again: the same invitation, a new email. */
export async function resendInvitation(access: OrganisationAccess, invitationId: string) {
  const invitation = await invitationById(invitationId);
  if (!invitation || invitation.organisationId !== access.organisationId)
    throw notFound(INVITATION_NOT_FOUND);
  if (invitation.status !== 'pending') throw conflict(INVITATION_ALREADY_ACCEPTED);
  const resent = await markResent(invitation.organisationId, invitation.email, { invitationId });
  if (!resent) throw conflict(INVITATION_ALREADY_ACCEPTED);
  const emailSent = await deliver(resent);
  return { invitation: { ...resent, emailSent }, emailSent };
}

/**
 * The invited user accepts: membership becomes accepted with the invited role, and the invited
 * workspace roles apply, in one transaction. Only the addressee may accept (anyone else: 404).
 * Accepting again is answered like the first time and changes nothing.
 */
export async function acceptInvitation(principal: UserPrincipal, invitationId: string) {
  const invitation = await invitationById(invitationId);
  if (!invitation || invitation.email !== principal.email.toLowerCase()) throw notFound(INVITATION_NOT_FOUND);
  if (invitation.status === 'accepted') {
    if (invitation.acceptedBy === principal.userId) return invitation;
    throw conflict(INVITATION_ALREADY_ACCEPTED);
  }
  const { organisationId } = invitation;
  const workspaces = await liveWorkspaces(organisationId, invitation.workspaces ?? []);
  const now = clock.now().toISOString();
  const result = await accessService.transaction
    .write(({ invitation: inv, orgMember, workspaceMember }) => [
      inv
        .patch({ organisationId, email: invitation.email })
        .set({ status: 'accepted', acceptedBy: principal.userId, acceptedAt: now })
        .where((attr, op) => `${op.eq(attr.status, 'pending')} AND ${op.eq(attr.invitationId, invitationId)}`)
        .commit(),
      orgMember
        .create({
          organisationId,
          userId: principal.userId,
          email: invitation.email,
          role: invitation.role,
          status: 'accepted',
          joinedAt: now,
        })
        .commit(),
      ...workspaces.map((w) =>
        workspaceMember
          .put({
            workspaceId: w.workspaceId,
            userId: principal.userId,
            organisationId,
            role: w.role,
            addedAt: now,
          })
          .commit(),
      ),
    ])
    .go();
  if (result.canceled) {
    const again = await invitationById(invitationId, true);
    if (again?.status === 'accepted' && again.acceptedBy === principal.userId) return again;
    throw conflict(
      again?.status === 'accepted'
        ? INVITATION_ALREADY_ACCEPTED
        : 'You are already a member of this organisation',
    );
  }
  return {
    ...invitation,
    status: 'accepted' as const,
    acceptedBy: principal.userId,
    acceptedAt: now,
    workspaces,
  };
}

/** Pending invitations addressed to the caller's email, with each organisation's name. */
export async function listMyInvitations(principal: UserPrincipal, query: ListQuery) {
  const { data } = await InvitationEntity.query
    .byInvitee({ email: principal.email.toLowerCase() })
    .go({ pages: 'all' });
  const pending = data.filter((i) => i.status === 'pending');
  const page = paginate(pending, (i) => i.invitationId, query);
  const names = new Map<string, string>();
  if (page.items.length > 0) {
    const { data: organisations } = await OrganisationEntity.get(
      page.items.map((i) => ({ organisationId: i.organisationId })),
    ).go();
    for (const o of organisations) names.set(o.organisationId, o.name);
  }
  return {
    ...page,
    items: page.items.map((invitation) => ({
      invitation,
      organisationName: names.get(invitation.organisationId) ?? null,
    })),
  };
}

/** Pending invitations of an organisation (its pending members). */
export async function pendingInvitations(organisationId: string) {
  const { data } = await InvitationEntity.query.byOrganisation({ organisationId }).go({ pages: 'all' });
  return data.filter((i) => i.status === 'pending');
}

/** Withdraws a pending invitation (DELETE of a pending member, by its invitation id). */
export async function withdrawInvitation(access: OrganisationAccess, invitationId: string): Promise<void> {
  const invitation = await invitationById(invitationId);
  if (!invitation || invitation.organisationId !== access.organisationId) throw notFound('Member not found');
  if (invitation.status !== 'pending') throw notFound('Member not found');
  try {
    await InvitationEntity.delete({ organisationId: invitation.organisationId, email: invitation.email })
      .where((attr, op) => `${op.eq(attr.status, 'pending')} AND ${op.eq(attr.invitationId, invitationId)}`)
      .go();
  } catch (error) {
    if (isConditionFailure(error)) throw notFound('Member not found');
    throw error;
  }
}

// ── helpers ─────────────────────────────────────────────────────────────────────────────────────────

async function invitationById(
  invitationId: string,
  consistentRetry = false,
): Promise<Invitation | undefined> {
  if (!isId('invitation', invitationId)) return undefined;
  const { data } = await InvitationEntity.query.byId({ invitationId }).go();
  const found = data[0];
  if (!found || !consistentRetry) return found;
  // GSIs are eventually consistent: confirm from the table.
  return (
    (
      await InvitationEntity.get({ organisationId: found.organisationId, email: found.email }).go({
        consistent: true,
      })
    ).data ?? undefined
  );
}

/** The invited workspaces must be live workspaces of this organisation, else 404. */
async function organisationWorkspaces(
  organisationId: string,
  requested: { workspace_id: string; role: WorkspaceRole }[],
): Promise<InvitationWorkspace[]> {
  if (requested.length === 0) return [];
  if (requested.some((w) => !isId('workspace', w.workspace_id))) throw notFound(WORKSPACE_NOT_FOUND);
  const { data } = await WorkspaceEntity.get(requested.map((w) => ({ workspaceId: w.workspace_id }))).go();
  const live = new Set(
    data.filter((w) => w.organisationId === organisationId && !w.deletedAt).map((w) => w.workspaceId),
  );
  if (requested.some((w) => !live.has(w.workspace_id))) throw notFound(WORKSPACE_NOT_FOUND);
  return requested.map((w) => ({ workspaceId: w.workspace_id, role: w.role }));
}

/** The invited workspaces that still exist when the invitation is accepted. */
async function liveWorkspaces(
  organisationId: string,
  workspaces: InvitationWorkspace[],
): Promise<InvitationWorkspace[]> {
  if (workspaces.length === 0) return [];
  const { data } = await WorkspaceEntity.get(workspaces.map((w) => ({ workspaceId: w.workspaceId }))).go();
  const live = new Set(
    data.filter((w) => w.organisationId === organisationId && !w.deletedAt).map((w) => w.workspaceId),
  );
  return workspaces.filter((w) => live.has(w.workspaceId));
}

async function refuseExistingMember(organisationId: string, email: string): Promise<void> {
  const user = await findUserByEmail(email);
  if (!user) return;
  const { data: member } = await OrgMemberEntity.get({ organisationId, userId: user.userId }).go();
  if (member?.status === 'accepted') throw conflict(`${email} is already a member of this organisation`);
}

/**
 * Counts one more send of a pending invitation (the count names the email, so a send is never
 * repeated under the same name), optionally with a new role and workspaces. Undefined when it is no
 * longer pending.
 */
async function markResent(
  organisationId: string,
  email: string,
  options: { invitationId?: string; role?: 'regular' | 'admin'; workspaces?: InvitationWorkspace[] },
): Promise<Invitation | undefined> {
  const set: { lastSentAt: string; role?: 'regular' | 'admin'; workspaces?: InvitationWorkspace[] } = {
    lastSentAt: clock.now().toISOString(),
  };
  if (options.role) set.role = options.role;
  if (options.workspaces) set.workspaces = options.workspaces;
  try {
    const { data } = await InvitationEntity.patch({ organisationId, email })
      .set(set)
      .add({ sendCount: 1 })
      .where((attr, op) =>
        options.invitationId
          ? `${op.eq(attr.status, 'pending')} AND ${op.eq(attr.invitationId, options.invitationId)}`
          : op.eq(attr.status, 'pending'),
      )
      .go({ response: 'all_new' });
    return data as Invitation;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** Emails the invitation; a failure is recorded (`email_sent: false`) and the invitation stays. */
/** "Sales (viewer), Support (editor)": the invited workspaces by name, with their roles. */
async function workspaceRolesText(workspaces: InvitationWorkspace[]): Promise<string> {
  if (workspaces.length === 0) return '';
  const { data } = await WorkspaceEntity.get(workspaces.map((w) => ({ workspaceId: w.workspaceId }))).go();
  const names = new Map(data.map((w) => [w.workspaceId, w.name]));
  return workspaces.map((w) => `${names.get(w.workspaceId) ?? w.workspaceId} (${w.role})`).join(', ');
}

/**
 * Where the email sends the invitee: the dashboard's invitation page (sign in, accept, land in the
 * organisation) where there is a dashboard, else the API's own page that signs in and accepts
 * (access/invitation-page.ts). The API's accept is a POST: a link cannot be it.
 */
export function invitationLink(invitationId: string): string {
  const { DASHBOARD_URL, PUBLIC_BASE_URL } = config();
  return DASHBOARD_URL
    ? `${DASHBOARD_URL.replace(/\/$/, '')}/invitations/${invitationId}`
    : `${PUBLIC_BASE_URL}/i/${invitationId}`;
}

async function deliver(invitation: Invitation): Promise<boolean> {
  const { data: organisation } = await OrganisationEntity.get({
    organisationId: invitation.organisationId,
  }).go();
  const organisationName = organisation?.name ?? 'an organisation';
  const acceptUrl = invitationLink(invitation.invitationId);
  const role =
    invitation.role === 'admin'
      ? 'an admin (organisation role: admin)'
      : 'a member (organisation role: regular)';
  const workspaceRoles = await workspaceRolesText(invitation.workspaces ?? []);
  let sent = true;
  try {
    await sendEmail({
      to: invitation.email,
      subject: `You are invited to join ${organisationName}`,
      text:
        `You have been invited to join ${organisationName} on Voice Agent as ${role}.\n` +
        (workspaceRoles ? `Workspace roles: ${workspaceRoles}.\n` : '') +
        `\nSign in with this email address (${invitation.email}) and accept the invitation:\n${acceptUrl}\n\n` +
        `Invitation: ${invitation.invitationId}\n`,
      idempotencyKey: `invitation:${invitation.invitationId}:${invitation.sendCount ?? 1}`,
    });
  } catch {
    sent = false;
  }
  try {
    await InvitationEntity.patch({ organisationId: invitation.organisationId, email: invitation.email })
      .set({ emailSent: sent })
      .where((attr, op) => op.eq(attr.invitationId, invitation.invitationId))
      .go();
  } catch (error) {
    // Accepted or replaced meanwhile: the flag of an older send does not matter any more.
    if (!isConditionFailure(error)) throw error;
  }
  return sent;
}
