import { renderTemplate } from '../agents/template.js';
import { BillingAccountEntity, type BillingAccount } from '../billing/entities.js';
import { INSUFFICIENT_CREDITS } from '../billing/ledger.js';
import type { PlanId } from '../billing/model.js';
import { ContactEntity, type Contact } from '../contacts/entities.js';
import { attributesOf, namesOf } from '../contacts/views.js';
import { clock } from '../platform/clock.js';
import { logger } from '../platform/logger.js';
import { PhoneClaimEntity } from '../numbers/entities.js';
import type { SmsMessage as SmsQueueMessage } from '../platform/queue-messages.js';
import { completeIfDone, getCampaign, markSent } from './campaigns.js';
import {
  SmsCampaignEntity,
  SmsHeldEntity,
  SmsRecipientEntity,
  type SmsCampaign,
  type SmsMessage,
  type SmsRecipient,
} from './entities.js';
import {
  CONTACT_DO_NOT_CONTACT,
  CONTACT_UNSUBSCRIBED,
  getMessage,
  keyOf,
  outboundRecord,
  parsed,
  readItems,
  senderNumber,
  smsItems,
  writeSmsItems,
  type TxItem,
} from './messages.js';
import { claimNew, deliver, sendClaimed } from './sending.js';

/**
 * An SMS campaign's chunks (the contacts of one audience page, functions/sms/campaign-pages.ts), each
 * recipient sent once. A chunk reads, in one consistent TransactGetItems, the campaign, the billing
 * account, the sender's number and each recipient and contact; per recipient the contact is checked
 * again (unsubscribed or do not contact: `skipped`, nothing charged), and ONE transaction records the
 * message, claims the recipient (`pending → sending`), charges the ledger (once per message id) and
 * checks that the number is not suppressed (else `skipped`), with the number's last outbound message;
 * the provider; ONE transaction records the acceptance (`sent`) with the recipient `sent` and the
 * campaign's counts, conditioned on `sending` (a refusal is refunded and counted `failed`). A
 * redelivered chunk resumes each recipient where it stood. The chunk that finishes the last
 * recipients of a planned campaign marks it `sent` (without reading it again when its own read shows
 * it is the last). While billing is past due a chunk is held (nothing sent) and queued again when
 * billing recovers. `cancelled` stops the sends that have not started.
 *
 * Placeholders: `{{first_name}}`, `{{last_name}}`, `{{name}}`, `{{phone}}`, `{{email}}` and any of the
 * contact's attribute keys (`{{suburb}}`). A placeholder the contact has no value for renders as empty
 * text (the space it leaves is tidied: "Hi {{first_name}}, …" → "Hi, …"); a message that is empty
 * once rendered is skipped (reason `empty message`), never sent blank.
 */

const SEND_CONCURRENCY = 8;

/** The values a contact gives the placeholders. */
export function placeholderValues(contact: Contact): Record<string, string> {
  const { firstName, lastName } = namesOf(contact);
  return {
    ...attributesOf(contact.customAttributes),
    first_name: firstName,
    last_name: lastName,
    name: [firstName, lastName].filter(Boolean).join(' '),
    phone: contact.phone ?? '',
    email: contact.email ?? '',
  };
}

export function renderCampaignBody(template: string, contact: Contact): string {
  return renderTemplate(template, placeholderValues(contact)).trim();
}

/** What a chunk message carries besides its contact ids (absent on messages queued before it did). */
export interface ChunkFacts {
  organisationId?: string;
  fromPhone?: string;
  /** Sent again from the held list: its held item goes once the chunk is done. */
  released?: boolean;
}

/**
 * Sends the campaign's message to these recipients (contact ids), each once; see the module comment.
 * One consistent read (TransactGetItems) brings the campaign (its status, body and counts), the
 * billing account (standing, plan), the sender's number claim, and each recipient and its contact.
 * Then per recipient one transaction claims it, records the message and charges it, with the
 * condition that its number is not suppressed; the provider; one transaction records the acceptance
 * and the recipient's outcome with the campaign's counts. The chunk that finishes the campaign's last
 * recipients marks it `sent`.
 */
export async function processChunk(
  workspaceId: string,
  campaignId: string,
  contactIds: string[],
  facts: ChunkFacts = {},
): Promise<string> {
  let organisationId = facts.organisationId;
  if (!organisationId) {
    const campaign = await getCampaign(workspaceId, campaignId);
    if (!campaign) return 'campaign gone';
    organisationId = campaign.organisationId;
  }
  const fromKey = facts.fromPhone ? [keyOf(PhoneClaimEntity.get({ phoneNumber: facts.fromPhone }))] : [];
  const items = await readItems([
    keyOf(SmsCampaignEntity.get({ workspaceId, campaignId })),
    keyOf(BillingAccountEntity.get({ organisationId })),
    ...fromKey,
    ...contactIds.flatMap((contactId) => [
      keyOf(SmsRecipientEntity.get({ workspaceId, campaignId, contactId })),
      keyOf(ContactEntity.get({ workspaceId, contactId })),
    ]),
  ]);
  const campaign = parsed<SmsCampaign>(SmsCampaignEntity, items[0]);
  const account = parsed<BillingAccount>(BillingAccountEntity, items[1]);
  const claim = facts.fromPhone ? parsed<{ workspaceId: string }>(PhoneClaimEntity, items[2]) : null;
  const rest = items.slice(2 + fromKey.length);
  const heldKey = { organisationId, key: `chunk:${campaignId}:${contactIds[0]}` };
  // Only a chunk sent again from the held list has a held item (a message queued before chunks said
  // so, without the campaign's facts, may have one too).
  const dropHeld = () =>
    facts.released || !facts.organisationId ? SmsHeldEntity.delete(heldKey).go() : Promise.resolve();
  if (!campaign) return 'campaign gone';
  if (campaign.status !== 'sending') {
    await dropHeld();
    return `campaign ${campaign.status}`;
  }
  if (!account || account.subscriptionStatus === 'past_due') {
    const message: SmsQueueMessage = {
      type: 'sms.campaign.chunk',
      workspace_id: workspaceId,
      campaign_id: campaignId,
      contact_ids: contactIds,
      organisation_id: organisationId,
      ...(facts.fromPhone ? { from_phone: facts.fromPhone } : {}),
      released: true,
    };
    await SmsHeldEntity.put({ ...heldKey, workspaceId, message, heldAt: clock.now().toISOString() }).go();
    return 'held: billing is past due';
  }
  // The sender as the campaign started with it, while it is still the workspace's; else found again.
  const from =
    facts.fromPhone && claim?.workspaceId === workspaceId
      ? facts.fromPhone
      : await senderNumber(workspaceId, campaign.fromPhone);
  const recipients = contactIds.flatMap((contactId, i) => {
    const recipient = parsed<SmsRecipient>(SmsRecipientEntity, rest[2 * i]);
    return recipient ? [{ recipient, contact: parsed<Contact>(ContactEntity, rest[2 * i + 1]) }] : [];
  });
  const outcomes: string[] = [];
  const queue = [...recipients];
  await Promise.all(
    Array.from({ length: SEND_CONCURRENCY }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        outcomes.push(await sendToRecipient(campaign, next.recipient, next.contact, from, account.plan));
      }
    }),
  );
  const unfinished = outcomes.filter((o) => o === 'pending' || o === 'sending').length;
  if (unfinished > 0)
    throw new Error(`${unfinished} recipients of the chunk are not finished; it is retried`);
  await dropHeld();
  // Finished by this delivery: when the campaign as read, plus these, is every recipient, it is done
  // (mark it without reading again); otherwise another chunk may have finished meanwhile: read.
  const finishedNow = outcomes.filter((o) => FINISHED_NOW.has(o)).length;
  if (campaign.planned && campaign.processed + finishedNow >= campaign.recipients)
    await markSent(workspaceId, campaignId, campaign.recipients);
  else await completeIfDone(workspaceId, campaignId);
  const counts = outcomes.reduce<Record<string, number>>(
    (all, o) => ({ ...all, [o]: (all[o] ?? 0) + 1 }),
    {},
  );
  return `chunk of ${contactIds.length}: ${JSON.stringify(counts)}`;
}

/** Outcomes of `sendToRecipient` that this delivery counted in the campaign's `processed`. */
const FINISHED_NOW = new Set(['sent', 'failed', 'skipped']);

function refusal(contact: Contact | null): string | undefined {
  if (!contact) return 'Contact not found';
  if (!contact.phone) return 'Contact has no phone number';
  if (contact.contactability === 'Unsubscribed') return CONTACT_UNSUBSCRIBED;
  if (contact.contactability === 'Do Not Contact') return CONTACT_DO_NOT_CONTACT;
  return undefined;
}
const SUPPRESSED = 'Number is on the suppression list';

/** The recipient's move from `from` to its outcome, with the campaign's counts: transaction items. */
function finishItems(
  recipient: SmsRecipient,
  from: 'pending' | 'sending',
  to: 'skipped' | 'sent' | 'failed',
  counts: { skipped?: number; sent?: number; failed?: number; creditUnits?: number },
  reason?: string,
): TxItem[] {
  const { workspaceId, campaignId, contactId } = recipient;
  return smsItems(({ smsRecipient, smsCampaign }) => [
    smsRecipient
      .patch({ workspaceId, campaignId, contactId })
      .set({
        state: to,
        updatedAt: clock.now().toISOString(),
        ...(reason ? { reason: reason.slice(0, 300) } : {}),
      })
      .where((attr, op) => op.eq(attr.state, from as SmsRecipient['state']))
      .commit(),
    smsCampaign
      .patch({ workspaceId, campaignId })
      .add({ ...counts, processed: 1 })
      .commit(),
  ]);
}

/** Writes the recipient's outcome; false when it had left `from` already (a redelivery finished it). */
async function finishRecipient(
  recipient: SmsRecipient,
  from: 'pending' | 'sending',
  to: 'skipped' | 'sent' | 'failed',
  counts: { skipped?: number; sent?: number; failed?: number; creditUnits?: number },
  reason?: string,
): Promise<boolean> {
  const result = await writeSmsItems(finishItems(recipient, from, to, counts, reason));
  if (result.ok) return true;
  if (result.codes[0] === 'ConditionalCheckFailed') return false;
  throw new Error(
    `recipient ${recipient.contactId} of ${recipient.campaignId}: its counts kept conflicting; the chunk is retried`,
  );
}

async function readRecipient(recipient: SmsRecipient): Promise<SmsRecipient | null> {
  const { workspaceId, campaignId, contactId } = recipient;
  return (await SmsRecipientEntity.get({ workspaceId, campaignId, contactId }).go({ consistent: true })).data;
}

async function sendToRecipient(
  campaign: SmsCampaign,
  recipient: SmsRecipient,
  contact: Contact | null,
  from: string,
  plan: PlanId,
): Promise<string> {
  const { workspaceId, campaignId, contactId } = recipient;
  let current: SmsRecipient | null = recipient;
  if (current.state === 'pending') {
    const why = refusal(contact);
    const body = contact && !why ? renderCampaignBody(campaign.body, contact) : '';
    if (why || body.length === 0) {
      return (await finishRecipient(current, 'pending', 'skipped', { skipped: 1 }, why ?? 'empty message'))
        ? 'skipped'
        : ((await readRecipient(current))?.state ?? 'gone');
    }
    const record = outboundRecord({
      workspaceId,
      organisationId: campaign.organisationId,
      contact: contact!,
      to: contact!.phone!,
      from,
      body: body.slice(0, 1600),
      kind: 'campaign',
      campaignId,
    });
    const claimRecipient = smsItems(({ smsRecipient }) => [
      smsRecipient
        .patch({ workspaceId, campaignId, contactId })
        .set({ state: 'sending', messageId: record.messageId, updatedAt: clock.now().toISOString() })
        .where((attr, op) => op.eq(attr.state, 'pending'))
        .commit(),
    ]);
    const claimed = await claimNew(record, { plan, also: claimRecipient });
    if (claimed.status === 'claimed') {
      return finishSend(current, claimed.message);
    }
    if (claimed.status === 'suppressed') {
      return (await finishRecipient(current, 'pending', 'skipped', { skipped: 1 }, SUPPRESSED))
        ? 'skipped'
        : ((await readRecipient(current))?.state ?? 'gone');
    }
    if (claimed.status === 'insufficient') {
      // Recorded failed (nothing charged), with the recipient and the counts.
      const failed: SmsMessage = { ...record, status: 'failed', failureReason: INSUFFICIENT_CREDITS };
      const result = await writeSmsItems([
        ...smsItems(({ smsMessage }) => [smsMessage.create(failed).commit()]),
        ...finishItems(current, 'pending', 'failed', { failed: 1 }, INSUFFICIENT_CREDITS),
      ]);
      if (result.ok) return 'failed';
    }
    // Another delivery of this chunk took the recipient: resume from where it stands.
    current = await readRecipient(current);
  }
  if (!current) return 'gone';
  if (current.state !== 'sending' || !current.messageId) return current.state;
  const message = await getMessage(workspaceId, current.messageId);
  if (!message) throw new Error(`campaign message ${current.messageId} not found`);
  if (message.status === 'queued') {
    const resumed = current;
    const { message: after, accepted } = await deliver(message, {
      insufficient: 'fail',
      also: (ok) =>
        ok ? finishItems(resumed, 'sending', 'sent', { sent: 1, creditUnits: message.creditUnits }) : [],
    });
    if (!accepted) await finishRecipient(resumed, 'sending', 'failed', { failed: 1 }, after.failureReason);
    return accepted ? 'sent' : 'failed';
  }
  // The message was finished (accepted, or refused) but not its recipient: finish it as it went.
  const accepted = message.acceptedAt !== undefined;
  await finishRecipient(
    current,
    'sending',
    accepted ? 'sent' : 'failed',
    accepted ? { sent: 1, creditUnits: message.creditUnits } : { failed: 1 },
    accepted ? undefined : message.failureReason,
  );
  return accepted ? 'sent' : 'failed';
}

/** The provider, then the outcome with the recipient's (one transaction each way). */
async function finishSend(recipient: SmsRecipient, message: SmsMessage): Promise<string> {
  const claimed: SmsRecipient = { ...recipient, state: 'sending', messageId: message.messageId };
  const { message: after, accepted } = await sendClaimed(message, (ok) =>
    ok ? finishItems(claimed, 'sending', 'sent', { sent: 1, creditUnits: message.creditUnits }) : [],
  );
  if (accepted) return 'sent';
  await finishRecipient(claimed, 'sending', 'failed', { failed: 1 }, after.failureReason);
  logger.info('campaign message failed', {
    campaignId: message.campaignId,
    messageId: after.messageId,
    reason: after.failureReason,
  });
  return 'failed';
}
