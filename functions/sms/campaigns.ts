import { renderTemplate } from '../agents/template.js';
import { BillingAccountEntity, type BillingAccount } from '../billing/entities.js';
import { INSUFFICIENT_CREDITS } from '../billing/ledger.js';
import type { PlanId } from '../billing/model.js';
import { ContactEntity, type Contact } from '../contacts/entities.js';
import { listContacts } from '../contacts/list.js';
import { attributesOf, namesOf } from '../contacts/views.js';
import { clock } from '../platform/clock.js';
import { conflict, notFound } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { isConditionFailure } from '../platform/table.js';
import { PhoneClaimEntity } from '../numbers/entities.js';
import { queryPage, type ListQuery, type Page } from '../platform/pagination.js';
import { sendMessage } from '../platform/queue.js';
import type { SmsMessage as SmsQueueMessage } from '../platform/queue-messages.js';
import {
  SmsCampaignEntity,
  SmsHeldEntity,
  SmsRecipientEntity,
  smsService,
  type SmsCampaign,
  type SmsMessage,
  type SmsRecipient,
} from './entities.js';
import {
  claimNew,
  CONTACT_DO_NOT_CONTACT,
  CONTACT_UNSUBSCRIBED,
  deliver,
  getMessage,
  keyOf,
  outboundRecord,
  parsed,
  readItems,
  senderNumber,
  sendClaimed,
  smsItems,
  writeSmsItems,
  type TxItem,
} from './messages.js';
import type { Audience, CreateCampaignBody, UpdateCampaignBody } from './schemas.js';

/**
 * SMS campaigns: one body (with placeholders) to an audience — given contacts, the contacts with a
 * tag, or every contactable contact — sent in the background on the `sms` queue.
 *
 * `PATCH {status: sending}` (202) moves a draft to `sending` and queues its first audience page,
 * carrying what the campaign fixed at its start (organisation, resolved sender, audience; an audience
 * of more than 500 given contacts is read instead). A page (50 contacts) becomes recipients in one
 * transaction with the campaign's `recipients` count and its page counter (conditioned on it and on
 * the campaign still `sending`, so a redelivered page adds nobody twice and a cancelled one nobody);
 * then the page's contacts go on the queue as one chunk, and the next page follows. A chunk reads, in
 * one consistent TransactGetItems, the campaign, the billing account, the sender's number and each
 * recipient and contact; per recipient the contact is checked again (unsubscribed or do not contact:
 * `skipped`, nothing charged), and ONE transaction records the message, claims the recipient
 * (`pending → sending`), charges the ledger (once per message id) and checks that the number is not
 * suppressed (else `skipped`), with the number's last outbound message; the provider; ONE transaction
 * records the acceptance (`sent`) with the recipient `sent` and the campaign's counts, conditioned on
 * `sending` (a refusal is refunded and counted `failed`). A redelivered chunk resumes each recipient
 * where it stood. The chunk that finishes the last recipients of a planned campaign marks it `sent`
 * (without reading it again when its own read shows it is the last). While billing is past due a
 * chunk is held (nothing sent) and queued again when billing recovers. `cancelled` stops the sends
 * that have not started.
 *
 * Placeholders: `{{first_name}}`, `{{last_name}}`, `{{name}}`, `{{phone}}`, `{{email}}` and any of the
 * contact's attribute keys (`{{suburb}}`). A placeholder the contact has no value for renders as empty
 * text (the space it leaves is tidied: "Hi {{first_name}}, …" → "Hi, …"); a message that is empty
 * once rendered is skipped (reason `empty message`), never sent blank.
 */

export const CAMPAIGN_NOT_FOUND = 'SMS campaign not found';
const PAGE_SIZE = 50;
const SEND_CONCURRENCY = 8;

export async function getCampaign(workspaceId: string, campaignId: string): Promise<SmsCampaign | null> {
  if (!isId('campaign', campaignId)) return null;
  const { data } = await SmsCampaignEntity.get({ workspaceId, campaignId }).go({ consistent: true });
  return data;
}

export async function requireCampaign(workspaceId: string, campaignId: string): Promise<SmsCampaign> {
  const campaign = await getCampaign(workspaceId, campaignId);
  if (!campaign) throw notFound(CAMPAIGN_NOT_FOUND);
  return campaign;
}

export async function createCampaign(
  workspaceId: string,
  organisationId: string,
  body: CreateCampaignBody,
  createdBy: string,
): Promise<SmsCampaign> {
  const fromPhone = body.from_phone ? await senderNumber(workspaceId, body.from_phone) : undefined;
  const campaign: SmsCampaign = {
    workspaceId,
    campaignId: newId('campaign'),
    organisationId,
    name: body.name,
    body: body.body,
    ...(fromPhone ? { fromPhone } : {}),
    audience: body.audience,
    status: 'draft',
    recipients: 0,
    sent: 0,
    delivered: 0,
    failed: 0,
    skipped: 0,
    replies: 0,
    optOuts: 0,
    creditUnits: 0,
    processed: 0,
    pagesPlanned: 0,
    planned: false,
    createdBy,
    createdAt: clock.now().toISOString(),
  };
  await SmsCampaignEntity.create(campaign).go();
  return campaign;
}

export async function listCampaigns(workspaceId: string, query: ListQuery): Promise<Page<SmsCampaign>> {
  return queryPage(query.cursor, (cursor) =>
    SmsCampaignEntity.query.byId({ workspaceId }).go({ cursor, limit: query.limit, order: 'desc' }),
  );
}

/**
 * Changes a draft (name, body, sender, audience), starts it (`status: sending`: 202) or cancels it
 * (`status: cancelled`, a draft or a campaign still sending). Anything else is 409.
 */
export async function updateCampaign(
  workspaceId: string,
  campaignId: string,
  body: UpdateCampaignBody,
): Promise<{ campaign: SmsCampaign; started: boolean }> {
  const campaign = await requireCampaign(workspaceId, campaignId);
  const edits =
    body.name !== undefined ||
    body.body !== undefined ||
    body.from_phone !== undefined ||
    body.audience !== undefined;
  if (edits && campaign.status !== 'draft')
    throw conflict(`Only a draft campaign can be changed (it is ${campaign.status})`);
  const now = clock.now().toISOString();
  let current = campaign;
  if (edits) {
    const fromPhone =
      body.from_phone === undefined
        ? undefined
        : body.from_phone === null
          ? null
          : await senderNumber(workspaceId, body.from_phone);
    const patch = SmsCampaignEntity.patch({ workspaceId, campaignId }).set({
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.body !== undefined ? { body: body.body } : {}),
      ...(fromPhone ? { fromPhone } : {}),
      ...(body.audience !== undefined ? { audience: body.audience } : {}),
      updatedAt: now,
    });
    const { data } = await (fromPhone === null ? patch.remove(['fromPhone']) : patch)
      .where((attr, op) => op.eq(attr.status, 'draft'))
      .go({ response: 'all_new' })
      .catch(() => {
        throw conflict('Only a draft campaign can be changed');
      });
    current = data as SmsCampaign;
  }
  if (body.status === 'sending') {
    if (current.status !== 'draft')
      throw conflict(`The campaign is ${current.status}: only a draft can be sent`);
    // The sender is checked now: a campaign that cannot send does not start.
    const from = await senderNumber(workspaceId, current.fromPhone);
    const { data } = await SmsCampaignEntity.patch({ workspaceId, campaignId })
      .set({ status: 'sending', startedAt: now, updatedAt: now })
      .where((attr, op) => op.eq(attr.status, 'draft'))
      .go({ response: 'all_new' })
      .catch(() => {
        throw conflict('The campaign is not a draft any more');
      });
    await sendMessage('sms', {
      type: 'sms.campaign.page',
      workspace_id: workspaceId,
      campaign_id: campaignId,
      page: 0,
      cursor: null,
      ...carried(current, from),
    });
    return { campaign: data as SmsCampaign, started: true };
  }
  if (body.status === 'cancelled') {
    if (current.status !== 'draft' && current.status !== 'sending')
      throw conflict(`The campaign is ${current.status}: it cannot be cancelled`);
    const { data } = await SmsCampaignEntity.patch({ workspaceId, campaignId })
      .set({ status: 'cancelled', updatedAt: now, completedAt: now })
      .where((attr, op) => `${op.eq(attr.status, 'draft')} OR ${op.eq(attr.status, 'sending')}`)
      .go({ response: 'all_new' })
      .catch(() => {
        throw conflict('The campaign has finished');
      });
    return { campaign: data as SmsCampaign, started: false };
  }
  return { campaign: current, started: false };
}

/** Deletes a campaign that is not sending (409 while it is: cancel it first). */
export async function deleteCampaign(workspaceId: string, campaignId: string): Promise<void> {
  const campaign = await requireCampaign(workspaceId, campaignId);
  if (campaign.status === 'sending') throw conflict('The campaign is sending: cancel it first');
  await SmsCampaignEntity.delete({ workspaceId, campaignId })
    .where((attr, op) => op.ne(attr.status, 'sending'))
    .go()
    .catch(() => {
      throw conflict('The campaign is sending: cancel it first');
    });
}

/** 2 to 5 campaigns of the workspace, in the order asked (404 when one is not the workspace's). */
export async function compareCampaigns(workspaceId: string, ids: string[]): Promise<SmsCampaign[]> {
  return Promise.all(ids.map((id) => requireCampaign(workspaceId, id)));
}

// ── Sending in the background ───────────────────────────────────────────────────────────────────────

/** One page of the audience: contact ids, and where the next page starts (null at the end). */
async function audiencePage(
  workspaceId: string,
  audience: Audience,
  cursor: string | null,
): Promise<{ contactIds: string[]; next: string | null }> {
  if (audience.contact_ids) {
    const offset = cursor ? Number(cursor) : 0;
    const contactIds = audience.contact_ids.slice(offset, offset + PAGE_SIZE);
    const end = offset + PAGE_SIZE;
    return { contactIds, next: end < audience.contact_ids.length ? String(end) : null };
  }
  const page = await listContacts(workspaceId, {
    limit: PAGE_SIZE,
    ...(cursor ? { cursor } : {}),
    ...(audience.tag ? { tag: audience.tag } : { contactability: 'contactable' }),
  });
  return { contactIds: page.items.map((c) => c.contactId), next: page.nextCursor };
}

/** What a page message carries of its campaign: fixed from the start, so a page need not read it. */
export interface CarriedCampaign {
  organisation_id: string;
  from_phone: string;
  audience: Audience;
}

/** Audiences of given contacts carried up to this many ids (a queue message stays small). */
const CARRY_CONTACT_IDS = 500;

function carried(campaign: SmsCampaign, from: string): { campaign?: CarriedCampaign } {
  const audience = campaign.audience as Audience;
  if ((audience.contact_ids?.length ?? 0) > CARRY_CONTACT_IDS) return {};
  return { campaign: { organisation_id: campaign.organisationId, from_phone: from, audience } };
}

/**
 * Turns page `page` of the campaign's audience into recipients (once), then queues its chunk and the
 * next page. The page message carries the campaign's audience, organisation and sender (fixed once it
 * is sending): the recipients' transaction is conditioned on the campaign still `sending` at this
 * page, so nothing is read first; only a refused transaction (a redelivery, a cancel) reads it.
 */
export async function planPage(
  workspaceId: string,
  campaignId: string,
  page: number,
  cursor: string | null,
  given?: CarriedCampaign,
): Promise<string> {
  let facts = given;
  let pagesPlanned = page;
  if (!facts) {
    const campaign = await getCampaign(workspaceId, campaignId);
    if (!campaign || campaign.status !== 'sending') return 'campaign not sending';
    if (campaign.pagesPlanned > page + 1 || (campaign.planned && campaign.pagesPlanned >= page + 1)) {
      return `page ${page} planned already`;
    }
    pagesPlanned = campaign.pagesPlanned;
    facts = {
      organisation_id: campaign.organisationId,
      from_phone: await senderNumber(workspaceId, campaign.fromPhone),
      audience: campaign.audience as Audience,
    };
  }
  const { contactIds, next } = await audiencePage(workspaceId, facts.audience, cursor);
  if (pagesPlanned === page) {
    const now = clock.now().toISOString();
    const result = await smsService.transaction
      .write(({ smsRecipient, smsCampaign }) => [
        ...contactIds.map((contactId) =>
          smsRecipient
            .create({ workspaceId, campaignId, contactId, state: 'pending', updatedAt: now })
            .commit(),
        ),
        smsCampaign
          .patch({ workspaceId, campaignId })
          .add({ recipients: contactIds.length, pagesPlanned: 1 })
          .set({ updatedAt: now, ...(next === null ? { planned: true } : {}) })
          .where((attr, op) => `${op.eq(attr.pagesPlanned, page)} AND ${op.eq(attr.status, 'sending')}`)
          .commit(),
      ])
      .go();
    if (result.canceled) {
      const again = await getCampaign(workspaceId, campaignId);
      if (!again || again.status !== 'sending') return 'campaign not sending';
      if (again.pagesPlanned > page + 1 || (again.planned && again.pagesPlanned >= page + 1)) {
        return `page ${page} planned already`;
      }
      if (again.pagesPlanned === page) {
        // A contact of this page was a recipient already (the audience moved under us): add the rest one by one.
        await planOneByOne(workspaceId, campaignId, page, contactIds, next === null);
      }
    }
  }
  if (contactIds.length > 0) {
    await sendMessage('sms', {
      type: 'sms.campaign.chunk',
      workspace_id: workspaceId,
      campaign_id: campaignId,
      contact_ids: contactIds,
      organisation_id: facts.organisation_id,
      from_phone: facts.from_phone,
    });
  }
  if (next !== null) {
    await sendMessage('sms', {
      type: 'sms.campaign.page',
      workspace_id: workspaceId,
      campaign_id: campaignId,
      page: page + 1,
      cursor: next,
      ...(given ? { campaign: given } : {}),
    });
  } else if (contactIds.length === 0) {
    // No chunk of this last page will look: the campaign may be done now.
    await completeIfDone(workspaceId, campaignId);
  }
  return `page ${page}: ${contactIds.length} recipients${next === null ? ' (the last page)' : ''}`;
}

async function planOneByOne(
  workspaceId: string,
  campaignId: string,
  page: number,
  contactIds: string[],
  last: boolean,
): Promise<void> {
  let added = 0;
  const now = clock.now().toISOString();
  for (const contactId of contactIds) {
    try {
      await SmsRecipientEntity.create({
        workspaceId,
        campaignId,
        contactId,
        state: 'pending',
        updatedAt: now,
      }).go();
      added += 1;
    } catch {
      // a recipient already
    }
  }
  await SmsCampaignEntity.patch({ workspaceId, campaignId })
    .add({ recipients: added, pagesPlanned: 1 })
    .set({ updatedAt: now, ...(last ? { planned: true } : {}) })
    .where((attr, op) => op.eq(attr.pagesPlanned, page))
    .go()
    .catch(() => undefined);
}

/** `sent` once the last page is planned and every recipient is done. */
async function completeIfDone(workspaceId: string, campaignId: string): Promise<void> {
  const campaign = await getCampaign(workspaceId, campaignId);
  if (!campaign || campaign.status !== 'sending' || !campaign.planned) return;
  if (campaign.processed < campaign.recipients) return;
  await markSent(workspaceId, campaignId, campaign.recipients);
}

/** The campaign `sent`, conditioned on it still sending, planned, and `recipients` done. */
async function markSent(workspaceId: string, campaignId: string, recipients: number): Promise<void> {
  const now = clock.now().toISOString();
  await SmsCampaignEntity.patch({ workspaceId, campaignId })
    .set({ status: 'sent', completedAt: now, updatedAt: now })
    .where(
      (attr, op) =>
        `${op.eq(attr.status, 'sending')} AND ${op.eq(attr.planned, true)} AND ${op.gte(attr.processed, recipients)}`,
    )
    .go()
    .catch((error: unknown) => {
      if (!isConditionFailure(error)) throw error;
    });
}

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
