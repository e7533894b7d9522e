import { INSUFFICIENT_CREDITS } from '../billing/ledger.js';
import { BillingAccountEntity, type BillingAccount } from '../billing/entities.js';
import { isInGoodStanding } from '../billing/standing.js';
import { ContactEntity, ContactPhoneEntity, SuppressionEntity, type Contact } from '../contacts/entities.js';
import { newRecord } from '../contacts/input.js';
import { getContact } from '../contacts/lookup.js';
import { isSuppressed } from '../contacts/suppression.js';
import { insertContact } from '../contacts/writes.js';
import { clock } from '../platform/clock.js';
import { conflict, notFound, paymentRequired, ValidationError } from '../platform/errors.js';
import { isId } from '../platform/ids.js';
import { toE164InCountry } from '../platform/phone.js';
import { SmsHeldEntity, type MessageKind, type SmsMessage } from './entities.js';
import {
  CONTACT_DO_NOT_CONTACT,
  CONTACT_UNSUBSCRIBED,
  createOutbound,
  getMessage,
  keyOf,
  MAX_BODY,
  outboundRecord,
  parsed,
  readItems,
  refusalFor,
  senderNumber,
} from './messages.js';
import { claimNew, deliver, markFailed, sendClaimed } from './sending.js';

/**
 * Sending one SMS: `sendSms`, the way every domain above sends one (the API's direct messages and
 * replies, workflows), checked here and charged and sent by functions/sms/sending.ts; and
 * `sendQueued`, the `sms` queue's send of a message held or left queued.
 *
 * Held: while the organisation's billing is past due (a failed subscription payment), charged sends
 * wait (`queued`, `held: true`; nothing charged) and go out when billing is in good standing again,
 * each checked again then (contactability, suppression, funds).
 */

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
