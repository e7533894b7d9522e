import { recordMovement } from '../billing/ledger.js';
import { chargeSmsWith, smsUnits } from '../billing/metering.js';
import type { PlanId } from '../billing/model.js';
import { smsSegmentation } from '../billing/sms-segments.js';
import { INSUFFICIENT_CREDITS } from '../billing/ledger.js';
import { SuppressionEntity } from '../contacts/entities.js';
import { clock } from '../platform/clock.js';
import { paymentRequired } from '../platform/errors.js';
import { logger } from '../platform/logger.js';
import { isConditionFailure, tableName } from '../platform/table.js';
import { providerWebhookUrl } from '../platform/webhook-urls.js';
import { sendSms as sendThroughProvider, SmsSendError } from '../providers/sms/index.js';
import { SmsLastOutboundEntity, SmsMessageEntity, type SmsMessage } from './entities.js';
import { getMessage, outboundWrites, smsItems, writeSmsItems, type TxItem } from './messages.js';

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
 */

export const SMS_WEBHOOK_PATH = '/webhooks/telephony/sms' as const;

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

export interface Delivered {
  message: SmsMessage;
  /** The provider took the message (now or on an earlier try). */
  accepted: boolean;
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
  return smsItems(outboundWrites(record));
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
      // The message is created in the same transaction, on condition: charged once.
      causeGuarded: true,
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

export async function markFailed(message: SmsMessage, reason: string): Promise<SmsMessage> {
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

/** Units a message of this body costs (5 credits a segment). */
export const unitsFor = (body: string): number => smsUnits(smsSegmentation(body).segments);
