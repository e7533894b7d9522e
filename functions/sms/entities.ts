import type { EntityItem } from 'electrodb';
import { OutboxEventEntity } from '../platform/outbox.js';
import { Entity, Service } from '../platform/entity.js';
import { gsi1, primaryIndex } from '../platform/keys.js';
import type { MoveTarget } from '../platform/key-moves.js';
import { entityConfig, entityKey, type StoredItem, type TableKey } from '../platform/table.js';

/**
 * SMS: messages both ways, threads per contact (the inbox), SMS campaigns and their recipients.
 *
 * Access patterns (key → use):
 *   message        pk WS#<ws>#SMS#<sms>            sk SMS#<sms>                 get by id (status callbacks
 *                                                                              name it in their signed URL)
 *                  gsi1 WS#<ws>#SMSTHREAD#<ct>     <created_at>#<sms>           a contact's thread, in order
 *   inbound claim  pk SMSIN#<provider sid>         sk CLAIM                     a provider message taken once
 *   thread         pk WS#<ws>                      sk SMSTHREAD#<ct>            unread count, last message
 *                  gsi1 WS#<ws>#SMSINBOX           <last_message_at>#<ct>       the inbox, newest activity first
 *   last outbound  pk WS#<ws>#SMSLAST#<e164>       sk SMSLAST#<e164>            what a reply from <e164> answers
 *   reply by code  pk SMSCODE#<short code>         sk <received_at>#<sms>       replies to a post-call SMS that
 *                                                                              carried a recording's short code
 *   campaign       pk WS#<ws>                      sk SMSCAMPAIGN#<cmp>         get; the list (newest first)
 *   recipient      pk WS#<ws>#SMSCMP#<cmp>         sk CT#<ct>                   one per contact of the audience
 *   held           pk ORG#<org>                    sk SMSHELD#<key>             sends waiting while billing is
 *                                                                              past due (released on recovery)
 *
 * A message and a number's last outbound have a partition key each: written with every send (a
 * post-call SMS, a campaign's), they took the workspace's key over its partition's budget at 100 calls
 * a second (docs/scale.md). Those written before are at `WS#<ws>` (same sort key) until `migrate calls`
 * moves them; a read by id or number moves one first (sms/messages.ts, sms/inbound.ts).
 *
 * Counts kept on write: a campaign's counters change in the same transaction as the record whose
 * state change they count (a recipient skipped / sent / failed, a message delivered or undelivered, an
 * inbound reply), each conditioned on the state it leaves, so a redelivered step never counts twice.
 */
const cfg = entityConfig();

export const MESSAGE_DIRECTIONS = ['outbound', 'inbound'] as const;
/** Why a message exists: what sent it (outbound) or `inbound`. */
export const MESSAGE_KINDS = [
  'direct',
  'reply',
  'campaign',
  'workflow',
  'post_call',
  'opt_out_confirmation',
  'inbound',
] as const;
export type MessageKind = (typeof MESSAGE_KINDS)[number];
/** `received` for inbound messages; outbound ones move queued → sent → delivered, or to failed. */
export const MESSAGE_STATUSES = ['queued', 'sent', 'delivered', 'failed', 'received'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export const SmsMessageEntity = new Entity(
  {
    model: { entity: 'smsMessage', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      messageId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      contactId: { type: 'string', required: true },
      direction: { type: MESSAGE_DIRECTIONS, required: true },
      kind: { type: MESSAGE_KINDS, required: true },
      toPhone: { type: 'string', required: true },
      fromPhone: { type: 'string', required: true },
      body: { type: 'string', required: true },
      segments: { type: 'number', required: true },
      encoding: { type: 'string', required: true },
      /** Ledger units charged (0 for inbound and free messages). */
      creditUnits: { type: 'number', required: true, default: 0 },
      status: { type: MESSAGE_STATUSES, required: true },
      failureReason: { type: 'string' },
      /** The provider's id (Twilio `SM…`), once it accepted the message (or for inbound ones). */
      providerMessageId: { type: 'string' },
      /** When the provider accepted it (a later `failed` from a callback keeps this). */
      acceptedAt: { type: 'string' },
      campaignId: { type: 'string' },
      /** A recording's public short code the message carried (post-call SMS); replies are listed by it. */
      shortCode: { type: 'string' },
      /** Inbound: the outbound message it answers (the latest sent to that number). */
      inReplyTo: { type: 'string' },
      /** Inbound: the interest detector found it hot (functions/sms/hot-reply.ts). */
      hot: { type: 'boolean' },
      /** Inbound: an opt-out (`stop`) or opt-in (`start`) keyword. */
      keyword: { type: ['stop', 'start'] as const },
      /** Outbound: waiting while billing is past due. */
      held: { type: 'boolean' },
      createdBy: { type: 'string' },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string' },
      sentAt: { type: 'string' },
      deliveredAt: { type: 'string' },
    },
    indexes: {
      byId: primaryIndex(
        ['workspaceId', 'messageId'],
        'WS#${workspaceId}#SMS#${messageId}',
        ['messageId'],
        'SMS#${messageId}',
      ),
      byThread: gsi1(
        ['workspaceId', 'contactId'],
        'WS#${workspaceId}#SMSTHREAD#${contactId}',
        ['createdAt', 'messageId'],
        '${createdAt}#${messageId}',
      ),
    },
  },
  cfg,
);

export const SmsInboundClaimEntity = new Entity(
  {
    model: { entity: 'smsInboundClaim', version: '1', service: 'va' },
    attributes: {
      providerMessageId: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
      messageId: { type: 'string', required: true },
      /** The opt-out confirmation's id, fixed when the message was taken (sent at most once). */
      confirmationId: { type: 'string' },
      /** Its follow-ups (opt-out, alert, event) are done: a replay changes nothing. */
      processed: { type: 'boolean', required: true, default: false },
      createdAt: { type: 'string', required: true },
    },
    indexes: {
      byProviderId: primaryIndex(['providerMessageId'], 'SMSIN#${providerMessageId}', [], 'CLAIM'),
    },
  },
  cfg,
);

export const SmsThreadEntity = new Entity(
  {
    model: { entity: 'smsThread', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      contactId: { type: 'string', required: true },
      phone: { type: 'string' },
      lastMessage: { type: 'string' },
      lastMessageId: { type: 'string' },
      lastMessageAt: { type: 'string', required: true },
      unread: { type: 'number', required: true, default: 0 },
      /**
       * The workspace again, as the activity index's partition: threads are written with UpdateItem
       * (created on first write), which sets an index key only from attributes it sets.
       */
      inboxOf: { type: 'string', required: true },
    },
    indexes: {
      byContact: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['contactId'], 'SMSTHREAD#${contactId}'),
      byActivity: gsi1(
        ['inboxOf'],
        'WS#${inboxOf}#SMSINBOX',
        ['lastMessageAt', 'contactId'],
        '${lastMessageAt}#${contactId}',
      ),
    },
  },
  cfg,
);

export const SmsLastOutboundEntity = new Entity(
  {
    model: { entity: 'smsLastOutbound', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      phone: { type: 'string', required: true },
      messageId: { type: 'string', required: true },
      campaignId: { type: 'string' },
      shortCode: { type: 'string' },
      sentAt: { type: 'string', required: true },
    },
    indexes: {
      byPhone: primaryIndex(
        ['workspaceId', 'phone'],
        'WS#${workspaceId}#SMSLAST#${phone}',
        ['phone'],
        'SMSLAST#${phone}',
      ),
    },
  },
  cfg,
);

export const SmsReplyByCodeEntity = new Entity(
  {
    model: { entity: 'smsReplyByCode', version: '1', service: 'va' },
    attributes: {
      shortCode: { type: 'string', required: true },
      receivedAt: { type: 'string', required: true },
      messageId: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
      body: { type: 'string', required: true },
    },
    indexes: {
      byCode: primaryIndex(
        ['shortCode'],
        'SMSCODE#${shortCode}',
        ['receivedAt', 'messageId'],
        '${receivedAt}#${messageId}',
      ),
    },
  },
  cfg,
);

export const CAMPAIGN_STATUSES = ['draft', 'sending', 'sent', 'cancelled'] as const;
export type SmsCampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export const SmsCampaignEntity = new Entity(
  {
    model: { entity: 'smsCampaign', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      campaignId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      name: { type: 'string', required: true },
      body: { type: 'string', required: true },
      fromPhone: { type: 'string' },
      /** `{contact_ids?, tag?, all?}` as given. */
      audience: { type: 'any', required: true },
      status: { type: CAMPAIGN_STATUSES, required: true },
      recipients: { type: 'number', required: true, default: 0 },
      sent: { type: 'number', required: true, default: 0 },
      delivered: { type: 'number', required: true, default: 0 },
      failed: { type: 'number', required: true, default: 0 },
      skipped: { type: 'number', required: true, default: 0 },
      replies: { type: 'number', required: true, default: 0 },
      optOuts: { type: 'number', required: true, default: 0 },
      creditUnits: { type: 'number', required: true, default: 0 },
      /** Recipients done (sent, failed at send, or skipped): the campaign is `sent` when all are. */
      processed: { type: 'number', required: true, default: 0 },
      /** Audience pages turned into recipients so far, and whether the last one has been. */
      pagesPlanned: { type: 'number', required: true, default: 0 },
      planned: { type: 'boolean', required: true, default: false },
      createdBy: { type: 'string', required: true },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string' },
      startedAt: { type: 'string' },
      completedAt: { type: 'string' },
    },
    indexes: {
      byId: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['campaignId'], 'SMSCAMPAIGN#${campaignId}'),
    },
  },
  cfg,
);

export const RECIPIENT_STATES = ['pending', 'sending', 'sent', 'failed', 'skipped'] as const;

export const SmsRecipientEntity = new Entity(
  {
    model: { entity: 'smsRecipient', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      campaignId: { type: 'string', required: true },
      contactId: { type: 'string', required: true },
      state: { type: RECIPIENT_STATES, required: true },
      messageId: { type: 'string' },
      reason: { type: 'string' },
      updatedAt: { type: 'string' },
    },
    indexes: {
      byCampaign: primaryIndex(
        ['workspaceId', 'campaignId'],
        'WS#${workspaceId}#SMSCMP#${campaignId}',
        ['contactId'],
        'CT#${contactId}',
      ),
    },
  },
  cfg,
);

export const SmsHeldEntity = new Entity(
  {
    model: { entity: 'smsHeld', version: '1', service: 'va' },
    attributes: {
      organisationId: { type: 'string', required: true },
      key: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
      /** The `sms` queue message to send again when billing is in good standing. */
      message: { type: 'any', required: true },
      heldAt: { type: 'string', required: true },
    },
    indexes: {
      byOrganisation: primaryIndex(['organisationId'], 'ORG#${organisationId}', ['key'], 'SMSHELD#${key}'),
    },
  },
  cfg,
);

export const smsService = new Service(
  {
    smsMessage: SmsMessageEntity,
    smsInboundClaim: SmsInboundClaimEntity,
    smsThread: SmsThreadEntity,
    smsLastOutbound: SmsLastOutboundEntity,
    smsReplyByCode: SmsReplyByCodeEntity,
    smsCampaign: SmsCampaignEntity,
    smsRecipient: SmsRecipientEntity,
    smsHeld: SmsHeldEntity,
    /** `sms.received`, recorded with the message it announces (functions/platform/outbox.ts). */
    outboxEvent: OutboxEventEntity,
  },
  cfg,
);

export type SmsMessage = EntityItem<typeof SmsMessageEntity>;
export type SmsThread = EntityItem<typeof SmsThreadEntity>;
export type SmsCampaign = EntityItem<typeof SmsCampaignEntity>;
export type SmsRecipient = EntityItem<typeof SmsRecipientEntity>;

/** Where an SMS message or a number's last outbound found at the workspace's key belongs now. */
export const smsTarget = (item: StoredItem): MoveTarget => ({
  key: entityKey(
    item.__edb_e__ === 'smsLastOutbound'
      ? SmsLastOutboundEntity.get({
          workspaceId: item.workspaceId as string,
          phone: item.phone as string,
        }).params()
      : SmsMessageEntity.get({
          workspaceId: item.workspaceId as string,
          messageId: item.messageId as string,
        }).params(),
  ),
});
/** The key an SMS item had before it had its own (the workspace's, the same sort key). */
export const legacySmsKey = (workspaceId: string, sk: string): TableKey => ({ pk: `WS#${workspaceId}`, sk });
