import { OrgMemberEntity, WorkspaceEntity, WorkspaceMemberEntity } from '../access/entities.js';
import { getUser } from '../platform/auth/users.js';
import { logger } from '../platform/logger.js';
import { sendEmail } from '../providers/email/index.js';

/** The people who administer a workspace: organisation owner and admins, and the workspace's admins. */
export async function workspaceAdminEmails(organisationId: string, workspaceId: string): Promise<string[]> {
  const [orgMembers, workspaceMembers] = await Promise.all([
    OrgMemberEntity.query.byOrganisation({ organisationId }).go({ pages: 'all' }),
    WorkspaceMemberEntity.query.byWorkspace({ workspaceId }).go({ pages: 'all' }),
  ]);
  const emails = new Set<string>();
  for (const member of orgMembers.data) {
    if (member.status === 'accepted' && (member.role === 'owner' || member.role === 'admin'))
      emails.add(member.email);
  }
  const admins = workspaceMembers.data.filter((member) => member.role === 'admin');
  const users = await Promise.all(admins.map((member) => getUser(member.userId)));
  for (const user of users) if (user?.email) emails.add(user.email);
  return [...emails].sort();
}

/**
 * Tells the workspace that an endpoint answered 410 Gone and is disabled: an email to each of its
 * admins (one per disabling: the delivery id names it, so a retry does not email twice).
 */
export async function notifyEndpointDisabled(input: {
  workspaceId: string;
  organisationId: string;
  url: string;
  deliveryId: string;
}): Promise<void> {
  const [recipients, workspace] = await Promise.all([
    workspaceAdminEmails(input.organisationId, input.workspaceId),
    WorkspaceEntity.get({ workspaceId: input.workspaceId }).go(),
  ]);
  const name = workspace.data?.name ?? input.workspaceId;
  const text = [
    `The webhook endpoint ${input.url} of workspace "${name}" answered 410 Gone to delivery ${input.deliveryId}.`,
    'It is now disabled: post-call webhooks are no longer sent to it.',
    'To enable it again, send a test payload from the webhook post-call action settings once the endpoint is back;',
    'a successful test (or a successful resend) enables it.',
  ].join('\n');
  for (const to of recipients) {
    try {
      await sendEmail({
        to,
        subject: `Webhook endpoint disabled: ${input.url}`,
        text,
        idempotencyKey: `webhook-endpoint-disabled:${input.deliveryId}:${to}`,
      });
    } catch (error) {
      logger.warn('could not tell an admin about a disabled webhook endpoint', { to, error: String(error) });
    }
  }
}
