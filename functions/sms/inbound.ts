import { WorkspaceEntity, workspaceCountry } from '../access/entities.js';
import { smsSegmentation } from '../billing/sms-segments.js';
import { updateContact } from '../contacts/changes.js';
import { getContact, normalisePhone } from '../contacts/lookup.js';
import { ensureContact } from '../contacts/post-call-changes.js';
import { PhoneClaimEntity } from '../numbers/entities.js';
import { clock } from '../platform/clock.js';
import { moveFromOldKey } from '../platform/key-moves.js';
import { isId, newId } from '../platform/ids.js';
import { outboxRecord, publishRecorded, publishRecordedById, type OutboxRecord } from '../platform/outbox.js';
import type { NewWorkspaceEvent } from '../platform/workspace-events.js';
import { sendEmail } from '../providers/email/index.js';
import {
  SmsInboundClaimEntity,
  legacySmsKey,
  SmsLastOutboundEntity,
  smsTarget,
  SmsReplyByCodeEntity,
  smsService,
  type MessageStatus,
  type SmsMessage,
} from './entities.js';
import { isHotReply, keywordOf } from './hot-reply.js';
import { createOutbound, getMessage, outboundRecord, senderNumber } from './messages.js';
import { deliver } from './sending.js';

/**
 * The provider's side of SMS (`POST /webhooks/telephony/sms`, Twilio's dialect, signature checked by
 * the entry point): delivery status callbacks of our messages, and messages people send us.
 */

// ── Status callbacks ────────────────────────────────────────────────────────────────────────────────

/** Twilio `MessageStatus` → ours; statuses before `sent` (accepted, queued, sending) change nothing. */
const PROVIDER_STATUS: Record<string, MessageStatus | undefined> = {
  sent: 'sent',
  delivered: 'delivered',
  read: 'delivered',
  undelivered: 'failed',
  failed: 'failed',
  canceled: 'failed',
};
/** Statuses only move forward: a callback for a status at or below the current one is ignored. */
const RANK: Record<MessageStatus, number> = { queued: 0, sent: 1, delivered: 2, failed: 2, received: 3 };

export interface StatusCallback {
  workspaceId: string;
  messageId: string;
  providerStatus: string;
  providerMessageId?: string;
  errorCode?: string;
  /**
   * The message's campaign as its callback URL names it (empty: none); undefined for a URL made before
   * URLs named it, when the message is read to find it.
   */
  campaignId?: string;
}

/**
 * `delivered` or `failed`, written without reading the message first: one conditioned write (the
 * message still `queued` or `sent`, outbound, of this provider message when it has one's id), in one
 * transaction with its campaign's count when the URL names one. A refusal is a duplicate or a late
 * callback (the message is final already) or an unknown message: nothing changes.
 */
async function applyFinalStatus(
  callback: StatusCallback & { campaignId: string },
  next: 'delivered' | 'failed',
): Promise<string> {
  const now = clock.now().toISOString();
  const sid = callback.providerMessageId;
  const key = { workspaceId: callback.workspaceId, messageId: callback.messageId };
  const campaignId = isId('campaign', callback.campaignId) ? callback.campaignId : undefined;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const result = await smsService.transaction
      .write(({ smsMessage, smsCampaign }) => [
        smsMessage
          .patch(key)
          .set({
            status: next,
            updatedAt: now,
            ...(next === 'delivered'
              ? { deliveredAt: now }
              : { failureReason: `undelivered (provider error ${callback.errorCode ?? 'unknown'})` }),
          })
          .data((attr, op) => {
            op.ifNotExists(attr.acceptedAt, now);
            op.ifNotExists(attr.sentAt, now);
            if (sid) op.ifNotExists(attr.providerMessageId, sid);
          })
          .where((attr, op) =>
            [
              `(${op.eq(attr.status, 'queued')} OR ${op.eq(attr.status, 'sent')})`,
              op.eq(attr.direction, 'outbound'),
              ...(sid
                ? [`(${op.notExists(attr.providerMessageId)} OR ${op.eq(attr.providerMessageId, sid)})`]
                : []),
              ...(campaignId ? [op.eq(attr.campaignId, campaignId)] : []),
            ].join(' AND '),
          )
          .commit(),
        ...(campaignId
          ? [
              smsCampaign
                .patch({ workspaceId: callback.workspaceId, campaignId })
                .add(next === 'delivered' ? { delivered: 1 } : { failed: 1 })
                .commit(),
            ]
          : []),
      ])
      .go();
    if (!result.canceled) return `-> ${next}`;
    const codes = (result.data as { code?: string }[]).map((d) => d.code);
    if (codes.includes('ConditionalCheckFailed')) return `ignored: not queued or sent (${next})`;
  }
  throw new Error(`status callback for ${callback.messageId} kept racing; the provider will retry`);
}

/**
 * Applies one delivery status callback: monotonic (queued → sent → delivered | failed; a duplicate
 * or a late `sent` after `delivered` changes nothing), conditioned on the status it read, with the
 * campaign's `delivered` / `failed` count in the same transaction.
 */
export async function applyStatusCallback(callback: StatusCallback): Promise<string> {
  const next = PROVIDER_STATUS[callback.providerStatus.toLowerCase()];
  if (!next) return `ignored: ${callback.providerStatus}`;
  if (!isId('workspace', callback.workspaceId)) return 'ignored: unknown message';
  if (!isId('sms', callback.messageId)) return 'ignored: unknown message';
  if ((next === 'delivered' || next === 'failed') && callback.campaignId !== undefined)
    return applyFinalStatus({ ...callback, campaignId: callback.campaignId }, next);
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const message = await getMessage(callback.workspaceId, callback.messageId);
    if (!message || message.direction !== 'outbound') return 'ignored: unknown message';
    if (
      message.providerMessageId &&
      callback.providerMessageId &&
      message.providerMessageId !== callback.providerMessageId
    )
      return 'ignored: another provider message';
    if (RANK[next] <= RANK[message.status]) return `ignored: already ${message.status}`;
    const now = clock.now().toISOString();
    const changes = {
      status: next,
      updatedAt: now,
      ...(callback.providerMessageId && !message.providerMessageId
        ? { providerMessageId: callback.providerMessageId }
        : {}),
      ...(message.acceptedAt ? {} : { acceptedAt: now }),
      ...(next === 'sent' ? { sentAt: message.sentAt ?? now } : {}),
      ...(next === 'delivered' ? { deliveredAt: now, sentAt: message.sentAt ?? now } : {}),
      ...(next === 'failed'
        ? { failureReason: `undelivered (provider error ${callback.errorCode ?? 'unknown'})` }
        : {}),
    };
    const counted = message.campaignId && (next === 'delivered' || next === 'failed');
    const result = await smsService.transaction
      .write(({ smsMessage, smsCampaign }) => [
        smsMessage
          .patch({ workspaceId: message.workspaceId, messageId: message.messageId })
          .set(changes)
          .where((attr, op) => op.eq(attr.status, message.status))
          .commit(),
        ...(counted
          ? [
              smsCampaign
                .patch({ workspaceId: message.workspaceId, campaignId: message.campaignId! })
                .add(next === 'delivered' ? { delivered: 1 } : { failed: 1 })
                .commit(),
            ]
          : []),
      ])
      .go();
    if (!result.canceled) return `${message.status} -> ${next}`;
  }
  throw new Error(`status callback for ${callback.messageId} kept racing; the provider will retry`);
}

// ── Inbound messages ────────────────────────────────────────────────────────────────────────────────

export const OPT_OUT_CONFIRMATION =
  'You have been unsubscribed and will get no more messages from us. Reply START to subscribe again.';

export interface InboundSms {
  providerMessageId: string;
  from: string;
  to: string;
  body: string;
}

/**
 * One SMS someone sent to one of our numbers, taken once per provider message id (a replay changes
 * nothing): recorded in the sender's thread (an unknown sender becomes a contact, source `manual`),
 * tied to the latest message we sent that number (its campaign counts a reply or an opt-out), and
 * then its follow-ups, each safe to repeat until the claim records them done: an opt-out keyword
 * unsubscribes the contact (and one confirmation goes out when it changed), START / UNSTOP make it
 * contactable again, a hot reply emails the workspace's hot-reply recipients, and `sms.received` is
 * published.
 */
export async function receiveSms(sms: InboundSms): Promise<string> {
  const to = normalisePhone(sms.to);
  const from = normalisePhone(sms.from);
  if (!to || !from || !sms.providerMessageId) return 'ignored: incomplete message';
  const { data: number } = await PhoneClaimEntity.get({ phoneNumber: to }).go();
  if (!number) return 'ignored: not one of our numbers';
  const { workspaceId, organisationId } = number;

  const { data: earlier } = await SmsInboundClaimEntity.get({ providerMessageId: sms.providerMessageId }).go({
    consistent: true,
  });
  if (earlier?.processed) return 'duplicate: taken already';
  if (earlier) return followUps(earlier.workspaceId, earlier.messageId, earlier.confirmationId);

  const { contact } = await ensureContact(workspaceId, { phone: from, source: 'Manual' });
  const keyword = keywordOf(sms.body);
  const hot = isHotReply(sms.body);
  const readLast = async () =>
    (await SmsLastOutboundEntity.get({ workspaceId, phone: from }).go({ consistent: true })).data;
  let last = await readLast();
  // Sent before it had its own key (until `migrate calls` has run): moved now, then read.
  if (!last && (await moveFromOldKey(legacySmsKey(workspaceId, `SMSLAST#${from}`), smsTarget)))
    last = await readLast();
  const now = clock.now().toISOString();
  const body = sms.body.slice(0, 1600);
  const segmentation = body.length > 0 ? smsSegmentation(body) : { segments: 1, encoding: 'GSM-7' };
  const messageId = newId('sms');
  const confirmationId =
    keyword === 'stop' && contact.contactability !== 'Unsubscribed' ? newId('sms') : undefined;
  const message: SmsMessage = {
    workspaceId,
    messageId,
    organisationId,
    contactId: contact.contactId,
    direction: 'inbound',
    kind: 'inbound',
    toPhone: to,
    fromPhone: from,
    body,
    segments: segmentation.segments,
    encoding: segmentation.encoding,
    creditUnits: 0,
    status: 'received',
    providerMessageId: sms.providerMessageId,
    ...(last ? { inReplyTo: last.messageId } : {}),
    ...(last?.campaignId ? { campaignId: last.campaignId } : {}),
    ...(last?.shortCode ? { shortCode: last.shortCode } : {}),
    ...(hot ? { hot: true } : {}),
    ...(keyword ? { keyword } : {}),
    createdAt: now,
  };
  const campaignCounts =
    keyword === 'stop' ? { optOuts: 1 } : keyword === 'start' ? undefined : { replies: 1 };
  const event = outboxRecord(smsReceivedEvent(message));
  const result = await smsService.transaction
    .write(({ smsInboundClaim, smsMessage, smsThread, smsReplyByCode, smsCampaign, outboxEvent }) => [
      smsInboundClaim
        .create({
          providerMessageId: sms.providerMessageId,
          workspaceId,
          messageId,
          ...(confirmationId ? { confirmationId } : {}),
          processed: false,
          createdAt: now,
        })
        .commit(),
      smsMessage.create(message).commit(),
      smsThread
        .update({ workspaceId, contactId: contact.contactId })
        .set({
          inboxOf: workspaceId,
          phone: from,
          lastMessage: body.slice(0, 200),
          lastMessageId: messageId,
          lastMessageAt: now,
        })
        .add({ unread: 1 })
        .commit(),
      ...(last?.shortCode && !keyword
        ? [
            smsReplyByCode
              .create({ shortCode: last.shortCode, receivedAt: now, messageId, workspaceId, body })
              .commit(),
          ]
        : []),
      ...(last?.campaignId && campaignCounts
        ? [smsCampaign.patch({ workspaceId, campaignId: last.campaignId }).add(campaignCounts).commit()]
        : []),
      outboxEvent.create(event).commit(),
    ])
    .go();
  if (result.canceled) {
    // Taken by a concurrent delivery of the same message (the claim exists): that one does the rest.
    // Otherwise a conflict on the thread or the campaign's counters: the provider retries (5xx).
    const { data: claim } = await SmsInboundClaimEntity.get({ providerMessageId: sms.providerMessageId }).go({
      consistent: true,
    });
    if (claim) return 'duplicate: taken concurrently';
    throw new Error(`inbound ${sms.providerMessageId}: its write conflicted; the provider retries`);
  }
  return followUps(workspaceId, messageId, confirmationId, event);
}

/**
 * `sms.received` (functions/platform/workspace-events.ts), recorded in the message's transaction;
 * its id is the provider's message id, so a redelivered webhook never makes a second event.
 */
function smsReceivedEvent(message: SmsMessage): NewWorkspaceEvent {
  return {
    id: `evt_sms_received_${message.providerMessageId}`,
    type: 'sms.received',
    workspaceId: message.workspaceId,
    organisationId: message.organisationId,
    occurredAt: message.createdAt,
    data: {
      message_id: message.messageId,
      contact_id: message.contactId,
      from_phone: message.fromPhone,
      to_phone: message.toPhone,
      body: message.body,
      received_at: message.createdAt,
      campaign_id: message.campaignId ?? null,
      in_reply_to: message.inReplyTo ?? null,
      keyword: message.keyword ?? null,
      hot: message.hot === true,
    },
  };
}

async function followUps(
  workspaceId: string,
  messageId: string,
  confirmationId: string | undefined,
  /** The event this receive recorded; absent on a redelivery, which publishes it if still unsent. */
  event?: OutboxRecord,
): Promise<string> {
  const message = await getMessage(workspaceId, messageId);
  if (!message) throw new Error(`inbound message ${messageId} not found`);
  // Published first (an alert e-mail that fails must not hold the event back); a send that fails is
  // left in the outbox for its sweep, and the receive goes on.
  if (event) await publishRecorded([event]);
  else await publishRecordedById(`evt_sms_received_${message.providerMessageId}`);
  const done: string[] = [`received ${messageId}`];
  const { data: workspace } = await WorkspaceEntity.get({ workspaceId }).go();
  const country = workspace ? workspaceCountry(workspace) : 'AU';
  const contact = await getContact(workspaceId, message.contactId);
  if (message.keyword === 'stop' && contact && contact.contactability !== 'Unsubscribed') {
    await updateContact(workspaceId, contact.contactId, { contactability: 'unsubscribed' }, { country });
    done.push('unsubscribed');
  }
  if (message.keyword === 'start' && contact && contact.contactability === 'Unsubscribed') {
    await updateContact(workspaceId, contact.contactId, { contactability: 'contactable' }, { country });
    done.push('subscribed again');
  }
  if (confirmationId && contact) {
    await confirmOptOut(message, confirmationId, contact);
    done.push('confirmed');
  }
  if (message.hot) {
    const alerted = await alertHotReply(message, workspace?.hotReplyAlertRecipients ?? [], contact);
    done.push(`hot reply: ${alerted} alerted`);
  }
  await SmsInboundClaimEntity.patch({ providerMessageId: message.providerMessageId! })
    .set({ processed: true })
    .go();
  return done.join('; ');
}

/** The one confirmation of an opt-out: free, from the number the STOP was sent to, created once. */
async function confirmOptOut(
  inbound: SmsMessage,
  confirmationId: string,
  contact: NonNullable<Awaited<ReturnType<typeof getContact>>>,
): Promise<void> {
  let confirmation = await getMessage(inbound.workspaceId, confirmationId);
  if (!confirmation) {
    const from = await senderNumber(inbound.workspaceId, inbound.toPhone).catch(() => inbound.toPhone);
    const record = outboundRecord({
      workspaceId: inbound.workspaceId,
      organisationId: inbound.organisationId,
      contact,
      to: inbound.fromPhone,
      from,
      body: OPT_OUT_CONFIRMATION,
      kind: 'opt_out_confirmation',
      messageId: confirmationId,
    });
    await createOutbound(record);
    confirmation = (await getMessage(inbound.workspaceId, confirmationId)) ?? record;
  }
  await deliver(confirmation, { free: true });
}

/** Emails each hot-reply recipient once per reply (the email port's key names the reply and recipient). */
async function alertHotReply(
  message: SmsMessage,
  recipients: string[],
  contact: Awaited<ReturnType<typeof getContact>>,
): Promise<number> {
  const who =
    [contact?.firstName, contact?.lastName].filter(Boolean).join(' ') || contact?.name || message.fromPhone;
  for (const to of recipients.slice(0, 10)) {
    await sendEmail({
      to,
      subject: `Hot SMS reply from ${who}`,
      text: [
        `${who} (${message.fromPhone}) replied to ${message.toPhone}:`,
        '',
        `  ${message.body}`,
        '',
        `Contact: ${message.contactId}${message.campaignId ? `, campaign ${message.campaignId}` : ''}.`,
        'Open the SMS inbox to answer.',
      ].join('\n'),
      idempotencyKey: `sms-hot-reply:${message.messageId}:${to}`,
    });
  }
  return Math.min(recipients.length, 10);
}

// ── Replies by short code (the public recording page) ────────────────────────────────────────────────

/**
 * The replies to outbound SMS that carried this recording short code (a post-call SMS with the
 * recording's link), oldest first: `[{body, received_at}]`. Opt-out keywords are not replies.
 */
export async function listRepliesForShortCode(
  shortCode: string,
): Promise<{ body: string; received_at: string }[]> {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(shortCode)) return [];
  const { data } = await SmsReplyByCodeEntity.query.byCode({ shortCode }).go({ pages: 'all', limit: 500 });
  return data.map((reply) => ({ body: reply.body, received_at: reply.receivedAt }));
}
