import { workspaceAdminEmails } from '../access/admins.js';
import { WorkspaceEntity } from '../access/entities.js';
import { logger } from '../platform/logger.js';
import { sendEmail } from '../providers/email/index.js';

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
