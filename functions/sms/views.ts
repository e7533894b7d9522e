import { displayCredits } from '../billing/credits.js';
import type { SmsCampaign, SmsMessage, SmsThread } from './entities.js';

/** Wire views (snake_case) of messages, threads and campaigns. */

export function messageView(message: SmsMessage) {
  return {
    id: message.messageId,
    direction: message.direction,
    kind: message.kind,
    contact_id: message.contactId,
    to_phone: message.toPhone,
    from_phone: message.fromPhone,
    body: message.body,
    segments: message.segments,
    encoding: message.encoding,
    credits: displayCredits(message.creditUnits),
    status: message.status,
    failure_reason: message.failureReason ?? null,
    held: message.held === true,
    campaign_id: message.campaignId ?? null,
    in_reply_to: message.inReplyTo ?? null,
    hot: message.hot === true,
    created_at: message.createdAt,
    sent_at: message.sentAt ?? null,
    delivered_at: message.deliveredAt ?? null,
  };
}
export type MessageView = ReturnType<typeof messageView>;

export function threadView(thread: SmsThread) {
  return {
    id: thread.contactId,
    contact_id: thread.contactId,
    phone: thread.phone ?? null,
    last_message: thread.lastMessage ?? null,
    last_message_at: thread.lastMessageAt,
    unread: thread.unread ?? 0,
  };
}

const rate = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 10_000) / 10_000 : 0);

export function campaignView(campaign: SmsCampaign) {
  const audience = campaign.audience as { contact_ids?: string[]; tag?: string; all?: boolean };
  return {
    id: campaign.campaignId,
    campaign_id: campaign.campaignId,
    name: campaign.name,
    body: campaign.body,
    from_phone: campaign.fromPhone ?? null,
    audience: {
      contact_ids: audience.contact_ids ?? null,
      tag: audience.tag ?? null,
      all: audience.all === true,
    },
    status: campaign.status,
    recipients: campaign.recipients,
    sent: campaign.sent,
    delivered: campaign.delivered,
    failed: campaign.failed,
    skipped: campaign.skipped,
    replies: campaign.replies,
    opt_outs: campaign.optOuts,
    credits: displayCredits(campaign.creditUnits),
    progress: { done: campaign.processed, total: campaign.recipients },
    created_at: campaign.createdAt,
    updated_at: campaign.updatedAt ?? null,
    started_at: campaign.startedAt ?? null,
    completed_at: campaign.completedAt ?? null,
  };
}

/**
 * A campaign's figures side by side: delivery rate = delivered / sent, reply rate = replies / sent,
 * opt-out rate = opt-outs / sent (0 when nothing was sent), rounded to 4 decimals.
 */
export function comparisonView(campaign: SmsCampaign) {
  return {
    id: campaign.campaignId,
    name: campaign.name,
    status: campaign.status,
    recipients: campaign.recipients,
    sent: campaign.sent,
    delivered: campaign.delivered,
    failed: campaign.failed,
    skipped: campaign.skipped,
    replies: campaign.replies,
    opt_outs: campaign.optOuts,
    credits: displayCredits(campaign.creditUnits),
    delivery_rate: rate(campaign.delivered, campaign.sent),
    reply_rate: rate(campaign.replies, campaign.sent),
    opt_out_rate: rate(campaign.optOuts, campaign.sent),
  };
}
