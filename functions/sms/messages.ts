import { recordMovement } from '../billing/ledger.js';
import { chargeSms, smsUnits } from '../billing/metering.js';
import { smsSegmentation } from '../billing/sms-segments.js';
import { isInGoodStanding } from '../billing/standing.js';
import { getContact, normalisePhone } from '../contacts/lookup.js';
import { ensureContact } from '../contacts/post-call-changes.js';
import { isSuppressed } from '../contacts/suppression.js';
import type { Contact } from '../contacts/entities.js';
import { PhoneClaimEntity, PhoneNumberEntity } from '../numbers/entities.js';
import { clock } from '../platform/clock.js';
import { conflict, HttpError, notFound, ValidationError } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { toE164InCountry } from '../platform/phone.js';
import { providerWebhookUrl } from '../platform/webhook-urls.js';
import { sendSms as sendThroughProvider, SmsSendError } from '../providers/sms/index.js';
import {
  SmsHeldEntity,
  SmsLastOutboundEntity,
  SmsMessageEntity,
  smsService,
  type MessageKind,
  type SmsMessage,
} from './entities.js';

/**
 * Outbound SMS: every message (direct, reply, campaign, workflow) is recorded `queued` first, then
 * charged and handed to the provider by `deliver`.
 *
 * Charging: 5 credits a segment (GSM-7 160 / 153 a part, UCS-2 70 / 67 a part; billing's rules),
 * prepaid (402 `Insufficient credits`), under the ledger cause `sms:<message id>`: however often a send
 * is retried or redelivered, the message is charged once.
 *
 * A provider error or timeout: the message ends `failed` with the provider's reason and its charge is
 * refunded (cause `sms:<message id>:refund`, also once), so a message that failed is charged not at
 * all. It is not sent again: after a timeout the provider may have sent it, and a second send could
 * reach the person twice. A message the provider accepted stays charged even if the carrier later
 * reports it undelivered (the provider charges for it too).
 *
 * Held: while the organisation's billing is past due (a failed subscription payment), charged sends
 * wait (`queued`, `held: true`; nothing charged) and go out when billing is in good standing again,
 * each checked again then (contactability, suppression, funds).
 */

export const SMS_WEBHOOK_PATH = '/webhooks/telephony/sms' as const;
export const CONTACT_UNSUBSCRIBED = 'Contact has unsubscribed';
export const CONTACT_DO_NOT_CONTACT = 'Contact is marked do not contact';
export const MESSAGE_NOT_FOUND = 'Message not found';
export const NO_SENDER_NUMBER = 'The workspace has no phone number to send SMS from';
export const MAX_BODY = 1600;

/** The status callback URL of one message: signed by the provider, it names the message. */
export function statusCallbackUrl(workspaceId: string, messageId: string): string {
  const query = new URLSearchParams({ event: 'status', workspace_id: workspaceId, message_id: messageId });
  return `${providerWebhookUrl(SMS_WEBHOOK_PATH)}?${query.toString()}`;
}

export async function getMessage(workspaceId: string, messageId: string): Promise<SmsMessage | null> {
  if (!isId('sms', messageId)) return null;
  const { data } = await SmsMessageEntity.get({ workspaceId, messageId }).go({ consistent: true });
  return data;
}

/**
 * The number a message goes out from: `from` when it is one of the workspace's numbers (422 on
 * `loc` otherwise), else the workspace's first number (409 when it has none).
 */
export async function senderNumber(
  workspaceId: string,
  from: string | undefined,
  loc: (string | number)[] = ['body', 'from_phone'],
): Promise<string> {
  if (from !== undefined) {
    const e164 = normalisePhone(from);
    const claim = e164 ? (await PhoneClaimEntity.get({ phoneNumber: e164 }).go()).data : null;
    if (!e164 || !claim || claim.workspaceId !== workspaceId) {
      throw new ValidationError([
        {
          type: 'value_error',
          loc,
          msg: 'Value error, from_phone is not one of the workspace’s phone numbers',
          input: from,
        },
      ]);
    }
    return e164;
  }
  const { data } = await PhoneNumberEntity.query.byWorkspace({ workspaceId }).go({ limit: 1 });
  if (!data[0]) throw conflict(NO_SENDER_NUMBER);
  return data[0].phoneNumber;
}

/** Why this contact may not get an SMS now (unsubscribed, do not contact, suppressed), or undefined. */
export async function refusalFor(
  organisationId: string,
  contact: Contact | null,
): Promise<string | undefined> {
  if (!contact) return 'Contact not found';
  if (!contact.phone) return 'Contact has no phone number';
  if (contact.contactability === 'Unsubscribed') return CONTACT_UNSUBSCRIBED;
  if (contact.contactability === 'Do Not Contact') return CONTACT_DO_NOT_CONTACT;
  if (await isSuppressed(organisationId, contact.phone)) return CONTACT_UNSUBSCRIBED;
  return undefined;
}

export interface NewOutbound {
  workspaceId: string;
  organisationId: string;
  contact: Contact;
  to: string;
  from: string;
  body: string;
  kind: MessageKind;
  campaignId?: string;
  shortCode?: string;
  createdBy?: string;
  held?: boolean;
  /** Fixed by the caller when the message must be created once (a campaign recipient, a confirmation). */
  messageId?: string;
}

/** The message record as it is created (`queued`), before it is charged or sent. */
export function outboundRecord(input: NewOutbound): SmsMessage {
  const segmentation = smsSegmentation(input.body);
  const now = clock.now().toISOString();
  return {
    workspaceId: input.workspaceId,
    messageId: input.messageId ?? newId('sms'),
    organisationId: input.organisationId,
    contactId: input.contact.contactId,
    direction: 'outbound',
    kind: input.kind,
    toPhone: input.to,
    fromPhone: input.from,
    body: input.body,
    segments: segmentation.segments,
    encoding: segmentation.encoding,
    creditUnits: 0,
    status: 'queued',
    ...(input.campaignId ? { campaignId: input.campaignId } : {}),
    ...(input.shortCode ? { shortCode: input.shortCode } : {}),
    ...(input.createdBy ? { createdBy: input.createdBy } : {}),
    ...(input.held ? { held: true } : {}),
    createdAt: now,
  };
}

/**
 * The message and its thread's last-message line, in one transaction; false when it existed already.
 * A transaction refused by a conflict (another write to the thread at the same moment) is tried again.
 */
export async function createOutbound(record: SmsMessage): Promise<boolean> {
  for (let attempt = 0; attempt < 8; attempt += 1) {
    if (await writeOutbound(record)) return true;
    if (await getMessage(record.workspaceId, record.messageId)) return false;
    await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt * (0.5 + Math.random())));
  }
  throw new Error(`could not record message ${record.messageId} (conflicts); try again`);
}

async function writeOutbound(record: SmsMessage): Promise<boolean> {
  const result = await smsService.transaction
    .write(({ smsMessage, smsThread }) => [
      smsMessage.create(record).commit(),
      smsThread
        .update({ workspaceId: record.workspaceId, contactId: record.contactId })
        .set({
          inboxOf: record.workspaceId,
          phone: record.toPhone,
          lastMessage: record.body.slice(0, 200),
          lastMessageId: record.messageId,
          lastMessageAt: record.createdAt,
        })
        .add({ unread: 0 })
        .commit(),
    ])
    .go();
  return !result.canceled;
}

export interface Delivered {
  message: SmsMessage;
  /** The provider took the message (now or on an earlier try). */
  accepted: boolean;
}

async function markFailed(message: SmsMessage, reason: string): Promise<SmsMessage> {
  const now = clock.now().toISOString();
  try {
    const { data } = await SmsMessageEntity.patch({
      workspaceId: message.workspaceId,
      messageId: message.messageId,
    })
      .set({
        status: 'failed',
        failureReason: reason.slice(0, 300),
        creditUnits: 0,
        held: false,
        updatedAt: now,
      })
      .where((attr, op) => op.eq(attr.status, 'queued'))
      .go({ response: 'all_new' });
    return data as SmsMessage;
  } catch {
    return (await getMessage(message.workspaceId, message.messageId)) ?? message;
  }
}

/**
 * Charges (unless `free`) and sends a `queued` message; idempotent: a message that is no longer
 * `queued` is returned as it is. `insufficient: 'throw'` (a direct send) deletes the message and
 * throws 402 when the balance does not cover it; `'fail'` (background sends) marks it failed.
 */
export async function deliver(
  message: SmsMessage,
  options: { free?: boolean; insufficient?: 'throw' | 'fail' } = {},
): Promise<Delivered> {
  if (message.status !== 'queued') return { message, accepted: message.acceptedAt !== undefined };
  let units = 0;
  if (!options.free) {
    try {
      const charge = await chargeSms({
        organisationId: message.organisationId,
        smsId: message.messageId,
        text: message.body,
      });
      units = charge.units;
    } catch (error) {
      if (error instanceof HttpError && error.status === 402) {
        if (options.insufficient === 'throw') {
          await SmsMessageEntity.delete({ workspaceId: message.workspaceId, messageId: message.messageId })
            .where((attr, op) => op.eq(attr.status, 'queued'))
            .go()
            .catch(() => undefined);
          throw error;
        }
        return { message: await markFailed(message, error.message), accepted: false };
      }
      throw error;
    }
  }
  let providerMessageId: string;
  try {
    const receipt = await sendThroughProvider({
      to: message.toPhone,
      from: message.fromPhone,
      text: message.body,
      idempotencyKey: `sms:${message.messageId}`,
      statusCallbackUrl: statusCallbackUrl(message.workspaceId, message.messageId),
    });
    providerMessageId = receipt.messageId;
  } catch (error) {
    const reason = error instanceof SmsSendError ? error.message : `SMS provider failed: ${String(error)}`;
    if (units > 0) {
      await recordMovement({
        organisationId: message.organisationId,
        kind: 'refund',
        amountUnits: units,
        reason: `SMS ${message.messageId} not sent: ${reason.slice(0, 200)}`,
        sourceKey: `sms:${message.messageId}:refund`,
      });
    }
    logger.warn('SMS failed at the provider', { messageId: message.messageId, reason });
    return { message: await markFailed(message, reason), accepted: false };
  }
  const now = clock.now().toISOString();
  const accepted = { providerMessageId, acceptedAt: now, creditUnits: units, held: false, updatedAt: now };
  let updated: SmsMessage;
  try {
    const { data } = await SmsMessageEntity.patch({
      workspaceId: message.workspaceId,
      messageId: message.messageId,
    })
      .set({ ...accepted, status: 'sent', sentAt: now })
      .where((attr, op) => op.eq(attr.status, 'queued'))
      .go({ response: 'all_new' });
    updated = data as SmsMessage;
  } catch (error) {
    // A status callback got there first (it moved the message on): keep its status, add the receipt.
    if (!(error instanceof Error)) throw error;
    const { data } = await SmsMessageEntity.patch({
      workspaceId: message.workspaceId,
      messageId: message.messageId,
    })
      .set({ ...accepted, sentAt: now })
      .go({ response: 'all_new' });
    updated = data as SmsMessage;
  }
  await rememberOutbound(updated);
  return { message: updated, accepted: true };
}

/** What a later reply from this number answers: the latest message sent to it. */
export async function rememberOutbound(message: SmsMessage): Promise<void> {
  const sentAt = message.sentAt ?? message.createdAt;
  await SmsLastOutboundEntity.put({
    workspaceId: message.workspaceId,
    phone: message.toPhone,
    messageId: message.messageId,
    ...(message.campaignId ? { campaignId: message.campaignId } : {}),
    ...(message.shortCode ? { shortCode: message.shortCode } : {}),
    sentAt,
  })
    .where((attr, op) => `${op.notExists(attr.sentAt)} OR ${op.lte(attr.sentAt, sentAt)}`)
    .go()
    .catch((error: unknown) => {
      if (!(error instanceof Error) || !/conditional/i.test(error.message)) throw error;
    });
}

/** Puts a queued message aside until billing is in good standing (functions/sms/held.ts releases it). */
export async function holdMessage(message: SmsMessage): Promise<void> {
  await SmsHeldEntity.put({
    organisationId: message.organisationId,
    key: `sms:${message.messageId}`,
    workspaceId: message.workspaceId,
    message: { type: 'sms.send', workspace_id: message.workspaceId, message_id: message.messageId },
    heldAt: clock.now().toISOString(),
  }).go();
}

export interface SendSmsInput {
  workspaceId: string;
  organisationId: string;
  /** E.164 (or national in `country`); or give `contactId`. */
  to?: string;
  contactId?: string;
  body: string;
  from?: string;
  kind?: Extract<MessageKind, 'direct' | 'reply' | 'workflow' | 'post_call'>;
  /** A recording's public short code this message carries: replies to it are listed by the code. */
  shortCode?: string;
  createdBy?: string;
  /** The workspace's country, to read a national number (default AU). */
  country?: string;
}

/**
 * Sends one SMS the way every domain above may (the API's direct messages and replies, workflows):
 * checked (body 1–1,600 characters, 422; a sender that is the workspace's, 422; an unsubscribed,
 * do-not-contact or suppressed recipient, 409), charged 5 credits a segment (402 when short), once.
 * A recipient without a contact becomes one (source `manual`). While billing is past due the message
 * is held (`queued`, `held: true`) and sent when billing recovers. Returns the message as it stands.
 */
export async function sendSms(input: SendSmsInput): Promise<SmsMessage> {
  const body = input.body.trim();
  if (body.length === 0 || body.length > MAX_BODY) {
    throw new ValidationError([
      {
        type: body.length === 0 ? 'string_too_short' : 'string_too_long',
        loc: ['body', 'body'],
        msg: `String should have between 1 and ${MAX_BODY} characters`,
        input: input.body,
      },
    ]);
  }
  let contact: Contact | null;
  let to: string;
  if (input.contactId) {
    contact = await getContact(input.workspaceId, input.contactId);
    if (!contact) throw notFound('Contact not found');
    if (!contact.phone) throw conflict('Contact has no phone number');
    to = contact.phone;
  } else {
    const e164 = input.to ? toE164InCountry(input.to, input.country ?? 'AU') : undefined;
    if (!e164) {
      throw new ValidationError([
        {
          type: 'value_error',
          loc: ['body', 'to_phone'],
          msg: 'Value error, not a valid phone number',
          input: input.to,
        },
      ]);
    }
    to = e164;
    contact = null;
  }
  const from = await senderNumber(input.workspaceId, input.from);
  if (!contact) {
    if (await isSuppressed(input.organisationId, to)) throw conflict(CONTACT_UNSUBSCRIBED);
    contact = (await ensureContact(input.workspaceId, { phone: to, source: 'Manual' })).contact;
  }
  const refusal = await refusalFor(input.organisationId, contact);
  if (refusal) throw conflict(refusal);
  const held = !(await isInGoodStanding(input.organisationId));
  const record = outboundRecord({
    workspaceId: input.workspaceId,
    organisationId: input.organisationId,
    contact,
    to,
    from,
    body,
    kind: input.kind ?? 'direct',
    shortCode: input.shortCode,
    createdBy: input.createdBy,
    held,
  });
  await createOutbound(record);
  if (held) {
    await holdMessage(record);
    return record;
  }
  return (await deliver(record, { insufficient: 'throw' })).message;
}

/**
 * Sends a message that was held (or queued for the background): checks standing (still past due:
 * held again), the recipient (unsubscribed meanwhile: failed, nothing charged), then delivers it.
 */
export async function sendQueued(workspaceId: string, messageId: string): Promise<string> {
  const message = await getMessage(workspaceId, messageId);
  if (!message) return 'message gone';
  const heldKey = { organisationId: message.organisationId, key: `sms:${messageId}` };
  if (message.status !== 'queued') {
    await SmsHeldEntity.delete(heldKey).go();
    return `already ${message.status}`;
  }
  if (!(await isInGoodStanding(message.organisationId))) {
    await holdMessage(message);
    return 'held again: billing is past due';
  }
  const contact = await getContact(workspaceId, message.contactId);
  const refusal = await refusalFor(message.organisationId, contact);
  if (refusal) {
    await markFailed(message, refusal);
    await SmsHeldEntity.delete(heldKey).go();
    return `not sent: ${refusal}`;
  }
  const { message: after } = await deliver(message, { insufficient: 'fail' });
  await SmsHeldEntity.delete(heldKey).go();
  return after.status;
}

/** Units a message of this body costs (5 credits a segment). */
export const unitsFor = (body: string): number => smsUnits(smsSegmentation(body).segments);
