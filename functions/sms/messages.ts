import { recordMovement } from '../billing/ledger.js';
import { chargeSmsWith, smsUnits } from '../billing/metering.js';
import type { PlanId } from '../billing/model.js';
import { smsSegmentation } from '../billing/sms-segments.js';
import { isInGoodStanding } from '../billing/standing.js';
import { BillingAccountEntity, type BillingAccount } from '../billing/entities.js';
import { INSUFFICIENT_CREDITS } from '../billing/ledger.js';
import { ContactEntity, ContactPhoneEntity, SuppressionEntity, type Contact } from '../contacts/entities.js';
import { newRecord } from '../contacts/input.js';
import { getContact, normalisePhone } from '../contacts/lookup.js';
import { isSuppressed } from '../contacts/suppression.js';
import { insertContact } from '../contacts/writes.js';
import { PhoneClaimEntity, PhoneNumberEntity } from '../numbers/entities.js';
import { clock } from '../platform/clock.js';
import { conflict, notFound, paymentRequired, ValidationError } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { toE164InCountry } from '../platform/phone.js';
import {
  getStoredItems,
  isConditionFailure,
  tableName,
  type StoredItem,
  type TableKey,
} from '../platform/table.js';
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
 * Outbound SMS: every message (direct, reply, campaign) is recorded `queued` and charged in ONE
 * transaction (`claimNew`: the message, its thread line, the ledger's charge, the condition that the
 * number is not suppressed, the number's last outbound message — what a reply answers — and the
 * caller's own items such as a campaign recipient's claim), then handed to the provider, whose
 * acceptance is recorded in one more (`sendClaimed`: `sent` and the provider's id, with the caller's
 * items). A message recorded before it is charged (held while billing is past due, an opt-out
 * confirmation, a workflow's message found `queued`) is charged and sent by `deliver`.
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

/**
 * The status callback URL of one message: signed by the provider, it names the message and its
 * campaign (`campaign_id`, empty when it has none), so a delivery callback counts the campaign's
 * `delivered` / `failed` without reading the message first.
 */
export function statusCallbackUrl(workspaceId: string, messageId: string, campaignId?: string): string {
  const query = new URLSearchParams({
    event: 'status',
    workspace_id: workspaceId,
    message_id: messageId,
    campaign_id: campaignId ?? '',
  });
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

/** An item of a transaction as ElectroDB's params give it (`….transaction.write(…).params()`). */
export type TxItem = object;

/** Items of `smsService` as one transaction's params, to write with other items (billing's `alsoWrite`). */
export function smsItems(build: Parameters<typeof smsService.transaction.write>[0]): TxItem[] {
  return smsService.transaction.write(build).params().TransactItems as TxItem[];
}

/** A condition of a transaction: the number is not on the organisation's suppression list. */
export function notSuppressedCheck(organisationId: string, phone: string): TxItem {
  const { Key } = SuppressionEntity.get({ organisationId, phone }).params() as { Key: object };
  return {
    ConditionCheck: {
      TableName: tableName(),
      Key,
      ConditionExpression: 'attribute_not_exists(#pk)',
      ExpressionAttributeNames: { '#pk': 'pk' },
    },
  };
}

/** The message (`queued`) and its thread's last-message line, as transaction items. */
function createdItems(record: SmsMessage): TxItem[] {
  return smsItems(({ smsMessage, smsThread }) => [
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
  ]);
}

export type ClaimOutcome =
  /** Recorded and charged (or free): now for the provider. */
  | { status: 'claimed'; message: SmsMessage }
  /** The balance does not cover it: nothing written. */
  | { status: 'insufficient'; units: number }
  /** The number is on the suppression list: nothing written. */
  | { status: 'suppressed' }
  /** One of `also` was refused by its condition (its code, in order): nothing written. */
  | { status: 'refused'; codes: string[] };

/**
 * A new outbound message recorded, charged and checked in ONE transaction: the message (`queued`,
 * with the units charged) and its thread line, the ledger's charge (cause `sms:<id>`, prepaid), the
 * condition that the number is not suppressed, and the caller's `also` items (a campaign recipient
 * claimed). All or nothing; then `sendClaimed` hands it to the provider.
 */
export async function claimNew(
  record: SmsMessage,
  options: { plan?: PlanId; also?: TxItem[] } = {},
): Promise<ClaimOutcome> {
  const also = options.also ?? [];
  const check = notSuppressedCheck(record.organisationId, record.toPhone);
  const units = smsUnits(record.segments);
  const charged: SmsMessage = { ...record, creditUnits: units };
  for (let remember = true; ; remember = false) {
    const outcome = await chargeSmsWith({
      organisationId: record.organisationId,
      smsId: record.messageId,
      text: record.body,
      plan: options.plan,
      alsoWrite: [
        ...createdItems(charged),
        check,
        ...(remember ? [lastOutboundItem(charged, charged.createdAt)] : []),
        ...also,
      ],
    });
    if (outcome.status === 'insufficient') return { status: 'insufficient', units: outcome.units };
    if (outcome.status === 'refused') {
      if (outcome.codes[2] === 'ConditionalCheckFailed') return { status: 'suppressed' };
      // A newer message to this number is its last outbound already: claimed without the line.
      if (remember && outcome.codes[3] === 'ConditionalCheckFailed') continue;
      return { status: 'refused', codes: outcome.codes.slice(remember ? 4 : 3) };
    }
    // `duplicate` cannot happen to a new id; either way the message is recorded and charged.
    return { status: 'claimed', message: charged };
  }
}

/**
 * The number's last outbound message (what a reply from it answers), unless a newer one is: written
 * with the message's claim, so a reply that comes before the provider's receipt is recorded still
 * finds it.
 */
function lastOutboundItem(message: SmsMessage, sentAt: string): TxItem {
  return smsItems(({ smsLastOutbound }) => [
    smsLastOutbound
      .put({
        workspaceId: message.workspaceId,
        phone: message.toPhone,
        messageId: message.messageId,
        ...(message.campaignId ? { campaignId: message.campaignId } : {}),
        ...(message.shortCode ? { shortCode: message.shortCode } : {}),
        sentAt,
      })
      .where((attr, op) => `${op.notExists(attr.sentAt)} OR ${op.lte(attr.sentAt, sentAt)}`)
      .commit(),
  ])[0];
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
 * Charges (unless `free`) and sends a `queued` message that is recorded already (held, or left by an
 * attempt that stopped); idempotent: a message that is no longer `queued` is returned as it is, and
 * one charged already is not charged again. `insufficient: 'throw'` throws 402 when the balance does
 * not cover it; `'fail'` (background sends) marks it failed.
 */
export async function deliver(
  message: SmsMessage,
  options: { free?: boolean; insufficient?: 'throw' | 'fail'; also?: (accepted: boolean) => TxItem[] } = {},
): Promise<Delivered> {
  if (message.status !== 'queued') return { message, accepted: message.acceptedAt !== undefined };
  let units = message.creditUnits;
  if (!options.free) {
    const key = { workspaceId: message.workspaceId, messageId: message.messageId };
    const outcome = await chargeSmsWith({
      organisationId: message.organisationId,
      smsId: message.messageId,
      text: message.body,
      alsoWrite: smsItems(({ smsMessage }) => [
        smsMessage
          .patch(key)
          .set({ held: false, updatedAt: clock.now().toISOString() })
          .where((attr, op) => op.eq(attr.status, 'queued'))
          .commit(),
      ]),
    });
    if (outcome.status === 'insufficient') {
      if (options.insufficient === 'throw') throw paymentRequired(INSUFFICIENT_CREDITS);
      return { message: await markFailed(message, INSUFFICIENT_CREDITS), accepted: false };
    }
    if (outcome.status === 'refused') {
      // No longer queued (another attempt finished it): as it stands.
      const now = await getMessage(message.workspaceId, message.messageId);
      return { message: now ?? message, accepted: now?.acceptedAt !== undefined };
    }
    units = outcome.units;
  }
  return sendClaimed({ ...message, creditUnits: units }, options.also, true);
}

/**
 * Hands a recorded and charged message to the provider (idempotency key `sms:<id>`), then records the
 * outcome with the caller's items (`also(accepted)`): accepted — `sent` and the provider's id, in one
 * transaction; refused — `failed`, the charge refunded.
 */
export async function sendClaimed(
  message: SmsMessage,
  also?: (accepted: boolean) => TxItem[],
  /** Write the number's last outbound message after the acceptance (not written with the claim). */
  remember = false,
): Promise<Delivered> {
  let providerMessageId: string;
  try {
    const receipt = await sendThroughProvider({
      to: message.toPhone,
      from: message.fromPhone,
      text: message.body,
      idempotencyKey: `sms:${message.messageId}`,
      statusCallbackUrl: statusCallbackUrl(message.workspaceId, message.messageId, message.campaignId),
    });
    providerMessageId = receipt.messageId;
  } catch (error) {
    const reason = error instanceof SmsSendError ? error.message : `SMS provider failed: ${String(error)}`;
    if (message.creditUnits > 0) {
      await recordMovement({
        organisationId: message.organisationId,
        kind: 'refund',
        amountUnits: message.creditUnits,
        reason: `SMS ${message.messageId} not sent: ${reason.slice(0, 200)}`,
        sourceKey: `sms:${message.messageId}:refund`,
      });
    }
    logger.warn('SMS failed at the provider', { messageId: message.messageId, reason });
    const failed = await markFailed(message, reason);
    const items = also?.(false) ?? [];
    if (items.length > 0) await writeSmsItems(items);
    return { message: failed, accepted: false };
  }
  const accepted = await recordAccepted(message, providerMessageId, also?.(true) ?? []);
  if (remember) await rememberOutbound(accepted);
  return { message: accepted, accepted: true };
}

const MAX_TRIES = 8;
const backOff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.min(1000, 20 * 2 ** attempt) * (0.5 + Math.random())));

/** One transaction of prepared items, tried again on conflicts; the cancellation codes when refused. */
export async function writeSmsItems(items: TxItem[]): Promise<{ ok: true } | { ok: false; codes: string[] }> {
  for (let attempt = 0; ; attempt += 1) {
    const result = await smsService.transaction
      .write(() => items as ReturnType<Parameters<typeof smsService.transaction.write>[0]>)
      .go();
    if (!result.canceled) return { ok: true };
    const codes = (result.data as { code?: string }[]).map((d) => d.code ?? 'None');
    if (codes.includes('ConditionalCheckFailed') || attempt >= MAX_TRIES) return { ok: false, codes };
    await backOff(attempt);
  }
}

/**
 * The provider took the message: `sent` with its id, in one transaction with `also`. A status
 * callback may have come first and made it final (`delivered`, `failed`; it records the provider's
 * id and times too): its status stays, and only `also` is written.
 */
async function recordAccepted(
  message: SmsMessage,
  providerMessageId: string,
  also: TxItem[],
): Promise<SmsMessage> {
  const now = clock.now().toISOString();
  const key = { workspaceId: message.workspaceId, messageId: message.messageId };
  const accepted: SmsMessage = {
    ...message,
    status: 'sent',
    providerMessageId,
    acceptedAt: message.acceptedAt ?? now,
    sentAt: message.sentAt ?? now,
    held: false,
    updatedAt: now,
  };
  const items = smsItems(({ smsMessage }) => [
    smsMessage
      .patch(key)
      .set({
        status: 'sent',
        providerMessageId,
        creditUnits: message.creditUnits,
        held: false,
        updatedAt: now,
      })
      .data((attr, op) => {
        op.ifNotExists(attr.acceptedAt, now);
        op.ifNotExists(attr.sentAt, now);
      })
      .where((attr, op) => `${op.eq(attr.status, 'queued')} OR ${op.eq(attr.status, 'sent')}`)
      .commit(),
  ]);
  const result = await writeSmsItems([...items, ...also]);
  if (result.ok) return accepted;
  if (result.codes[0] === 'ConditionalCheckFailed' && also.length > 0) {
    // Final already by its callback; the caller's items still to write (refused only when done).
    const rest = await writeSmsItems(also);
    if (!rest.ok && !rest.codes.includes('ConditionalCheckFailed'))
      throw new Error(`SMS ${message.messageId}: its outcome kept conflicting; try again`);
  } else if (
    result.codes[0] !== 'ConditionalCheckFailed' &&
    !result.codes.includes('ConditionalCheckFailed')
  ) {
    throw new Error(`SMS ${message.messageId}: its acceptance kept conflicting; try again`);
  } else if (result.codes[0] !== 'ConditionalCheckFailed') {
    // The caller's items were done already (a redelivery): the message's own record is what is left.
    await writeSmsItems(items);
  }
  return accepted;
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
      if (!isConditionFailure(error)) throw error;
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
 *
 * Its requests: one consistent read of what it checks (the contact or the number's contact key, the
 * suppression list's entry, the billing account), the contact when found by number (or its creation),
 * the sender (functions/sms/messages.ts `senderNumber`), then one transaction that records the
 * message and the number's last outbound line, charges it and re-checks the suppression list
 * (`claimNew`), and one that records the provider's acceptance (`sendClaimed`).
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
  const { workspaceId, organisationId } = input;
  if (!input.contactId && !(input.to && toE164InCountry(input.to, input.country ?? 'AU'))) {
    throw new ValidationError([
      {
        type: 'value_error',
        loc: ['body', 'to_phone'],
        msg: 'Value error, not a valid phone number',
        input: input.to,
      },
    ]);
  }
  const from = await senderNumber(workspaceId, input.from);
  let contact: Contact | null;
  let to: string;
  let account: BillingAccount | null;
  if (input.contactId) {
    if (!isId('contact', input.contactId)) throw notFound('Contact not found');
    const [contactItem, accountItem] = await readItems([
      keyOf(ContactEntity.get({ workspaceId, contactId: input.contactId })),
      keyOf(BillingAccountEntity.get({ organisationId })),
    ]);
    contact = parsed<Contact>(ContactEntity, contactItem);
    account = parsed<BillingAccount>(BillingAccountEntity, accountItem);
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
    const [phoneItem, suppressedItem, accountItem] = await readItems([
      keyOf(ContactPhoneEntity.get({ workspaceId, phone: to })),
      keyOf(SuppressionEntity.get({ organisationId, phone: to })),
      keyOf(BillingAccountEntity.get({ organisationId })),
    ]);
    account = parsed<BillingAccount>(BillingAccountEntity, accountItem);
    if (suppressedItem) throw conflict(CONTACT_UNSUBSCRIBED);
    const owner = parsed<{ contactId: string }>(ContactPhoneEntity, phoneItem)?.contactId;
    contact = owner ? await getContact(workspaceId, owner) : null;
    if (!contact) contact = await newManualContact(workspaceId, to);
  }
  const refusal = contactRefusal(contact);
  if (refusal) throw conflict(refusal);
  const held = !account || account.subscriptionStatus === 'past_due';
  const record = outboundRecord({
    workspaceId,
    organisationId,
    contact,
    to,
    from,
    body,
    kind: input.kind ?? 'direct',
    shortCode: input.shortCode,
    createdBy: input.createdBy,
    held,
  });
  if (held) {
    if (await isSuppressed(organisationId, to)) throw conflict(CONTACT_UNSUBSCRIBED);
    await createOutbound(record);
    await holdMessage(record);
    return record;
  }
  const claimed = await claimNew(record, { plan: account!.plan });
  if (claimed.status === 'insufficient') throw paymentRequired(INSUFFICIENT_CREDITS);
  if (claimed.status === 'suppressed') throw conflict(CONTACT_UNSUBSCRIBED);
  if (claimed.status === 'refused')
    throw new Error(`SMS ${record.messageId} refused: ${claimed.codes.join()}`);
  return (await sendClaimed(claimed.message)).message;
}

/** Why this contact may not get an SMS (its own record: unsubscribed, do not contact), or undefined. */
function contactRefusal(contact: Contact): string | undefined {
  if (!contact.phone) return 'Contact has no phone number';
  if (contact.contactability === 'Unsubscribed') return CONTACT_UNSUBSCRIBED;
  if (contact.contactability === 'Do Not Contact') return CONTACT_DO_NOT_CONTACT;
  return undefined;
}

/** A contact for a number nobody has (source `manual`); the one that has it when another writer was first. */
async function newManualContact(workspaceId: string, phone: string): Promise<Contact> {
  const record = newRecord(
    workspaceId,
    { phone, contactability: 'Contactable', source: 'Manual' },
    clock.now().toISOString(),
  );
  const inserted = await insertContact(record);
  if ('created' in inserted) return inserted.created;
  const contact = await getContact(workspaceId, inserted.taken.contactId);
  if (!contact) throw new Error('the contact of this number went away; try again');
  return contact;
}

/** An item's key on the table, as its entity writes it. */
export function keyOf(get: { params: () => object }): TableKey {
  return (get.params() as { Key: TableKey }).Key;
}

/** An item read with `readItems`, as its entity gives it (null when missing). */
export function parsed<T>(
  entity: { parse: (input: { Item: object }) => { data: unknown } },
  item: StoredItem | undefined,
): T | null {
  return item ? (entity.parse({ Item: item }).data as T | null) : null;
}

/**
 * Items of several entities in one consistent read (TransactGetItems, 100 a request), tried again
 * when a concurrent transaction on one of them refuses it.
 */
export async function readItems(keys: TableKey[]): Promise<(StoredItem | undefined)[]> {
  const out: (StoredItem | undefined)[] = [];
  for (let start = 0; start < keys.length; start += 100) {
    const slice = keys.slice(start, start + 100);
    for (let attempt = 0; ; attempt += 1) {
      try {
        out.push(...(await getStoredItems(slice)));
        break;
      } catch (error) {
        if ((error as { name?: string }).name !== 'TransactionCanceledException' || attempt >= MAX_TRIES)
          throw error;
        await backOff(attempt);
      }
    }
  }
  return out;
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
