import { PhoneClaimEntity, PhoneNumberEntity } from '../numbers/entities.js';
import { clock } from '../platform/clock.js';
import { conflict, ValidationError } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { getStoredItems, type StoredItem, type TableKey } from '../platform/table.js';
import { smsSegmentation } from '../billing/sms-segments.js';
import type { Contact } from '../contacts/entities.js';
import { normalisePhone } from '../contacts/lookup.js';
import { isSuppressed } from '../contacts/suppression.js';
import { moveFromOldKey } from '../platform/key-moves.js';
import {
  legacySmsKey,
  SmsMessageEntity,
  smsService,
  smsTarget,
  type MessageKind,
  type SmsMessage,
} from './entities.js';

/**
 * SMS messages before they are charged or sent: a message by id, the number one goes out from,
 * whether a contact may get one, the outbound record (`queued`) and its thread's line; and what the
 * sends share of the table — several items in one consistent read (`readItems`), one transaction of
 * prepared items (`writeSmsItems`). Charging and sending: functions/sms/sending.ts.
 */

export const CONTACT_UNSUBSCRIBED = 'Contact has unsubscribed';
export const CONTACT_DO_NOT_CONTACT = 'Contact is marked do not contact';
export const MESSAGE_NOT_FOUND = 'Message not found';
export const NO_SENDER_NUMBER = 'The workspace has no phone number to send SMS from';
export const MAX_BODY = 1600;

export async function getMessage(workspaceId: string, messageId: string): Promise<SmsMessage | null> {
  if (!isId('sms', messageId)) return null;
  const read = async () =>
    (await SmsMessageEntity.get({ workspaceId, messageId }).go({ consistent: true })).data;
  const data = await read();
  // Sent before messages had their own key (until `migrate calls` has run): moved now, then read.
  if (data || !(await moveFromOldKey(legacySmsKey(workspaceId, `SMS#${messageId}`), smsTarget))) return data;
  return read();
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
  const result = await smsService.transaction.write(outboundWrites(record)).go();
  return !result.canceled;
}

/** An outbound message (as recorded) and its thread's last-message line, as a transaction's writes. */
export const outboundWrites =
  (record: SmsMessage): Parameters<typeof smsService.transaction.write>[0] =>
  ({ smsMessage, smsThread }) => [
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
  ];

/** An item of a transaction as ElectroDB's params give it (`….transaction.write(…).params()`). */
export type TxItem = object;

/** Items of `smsService` as one transaction's params, to write with other items (billing's `alsoWrite`). */
export function smsItems(build: Parameters<typeof smsService.transaction.write>[0]): TxItem[] {
  return smsService.transaction.write(build).params().TransactItems as TxItem[];
}

export const MAX_TRIES = 8;
export const backOff = (attempt: number) =>
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
