import { renderTemplate } from '../agents/template.js';
import { isInGoodStanding } from '../billing/standing.js';
import type { Contact } from '../contacts/entities.js';
import { listContacts } from '../contacts/list.js';
import { getContact } from '../contacts/lookup.js';
import { suppressedAmong } from '../contacts/suppression.js';
import { attributesOf, namesOf } from '../contacts/views.js';
import { clock } from '../platform/clock.js';
import { conflict, notFound } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { queryPage, type ListQuery, type Page } from '../platform/pagination.js';
import { sendMessage } from '../platform/queue.js';
import type { SmsMessage as SmsQueueMessage } from '../platform/queue-messages.js';
import {
  SmsCampaignEntity,
  SmsHeldEntity,
  SmsRecipientEntity,
  smsService,
  type SmsCampaign,
  type SmsRecipient,
} from './entities.js';
import {
  CONTACT_DO_NOT_CONTACT,
  CONTACT_UNSUBSCRIBED,
  deliver,
  getMessage,
  outboundRecord,
  senderNumber,
} from './messages.js';
import type { Audience, CreateCampaignBody, UpdateCampaignBody } from './schemas.js';

/**
 * SMS campaigns: one body (with placeholders) to an audience — given contacts, the contacts with a
 * tag, or every contactable contact — sent in the background on the `sms` queue.
 *
 * `PATCH {status: sending}` (202) moves a draft to `sending` and queues its first audience page. A
 * page (50 contacts) becomes recipients in one transaction with the campaign's `recipients` count and
 * its page counter (conditioned on it, so a redelivered page adds nobody twice); then the page's
 * contacts go on the queue as one chunk, and the next page follows. A chunk sends to each recipient:
 * at send time the contact is checked again (unsubscribed, do not contact, or a suppressed number:
 * `skipped`, nothing charged), the message is recorded with the recipient (`sending`, one transaction),
 * charged and sent (functions/sms/messages.ts `deliver`, once per message id), and the recipient ends
 * `sent` or `failed` with the campaign's counts, conditioned on `sending`. A redelivered chunk resumes
 * each recipient where it stood. The campaign is `sent` when every recipient of the last page is done.
 * While billing is past due a chunk is held (nothing sent) and queued again when billing recovers.
 * `cancelled` stops the sends that have not started.
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
    await senderNumber(workspaceId, current.fromPhone);
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

/** Turns page `page` of the campaign's audience into recipients (once), then queues its chunk and the next page. */
export async function planPage(
  workspaceId: string,
  campaignId: string,
  page: number,
  cursor: string | null,
): Promise<string> {
  const campaign = await getCampaign(workspaceId, campaignId);
  if (!campaign || campaign.status !== 'sending') return 'campaign not sending';
  if (campaign.pagesPlanned > page + 1 || (campaign.planned && campaign.pagesPlanned >= page + 1)) {
    return `page ${page} planned already`;
  }
  const { contactIds, next } = await audiencePage(workspaceId, campaign.audience as Audience, cursor);
  if (campaign.pagesPlanned === page) {
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
    });
  }
  if (next !== null) {
    await sendMessage('sms', {
      type: 'sms.campaign.page',
      workspace_id: workspaceId,
      campaign_id: campaignId,
      page: page + 1,
      cursor: next,
    });
  } else {
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
  const now = clock.now().toISOString();
  await SmsCampaignEntity.patch({ workspaceId, campaignId })
    .set({ status: 'sent', completedAt: now, updatedAt: now })
    .where(
      (attr, op) =>
        `${op.eq(attr.status, 'sending')} AND ${op.eq(attr.planned, true)} AND ${op.gte(attr.processed, campaign.recipients)}`,
    )
    .go()
    .catch(() => undefined);
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

/** Sends the campaign's message to these recipients (contact ids), each once; see the module comment. */
export async function processChunk(
  workspaceId: string,
  campaignId: string,
  contactIds: string[],
): Promise<string> {
  const campaign = await getCampaign(workspaceId, campaignId);
  if (!campaign) return 'campaign gone';
  const heldKey = { organisationId: campaign.organisationId, key: `chunk:${campaignId}:${contactIds[0]}` };
  if (campaign.status !== 'sending') {
    await SmsHeldEntity.delete(heldKey).go();
    return `campaign ${campaign.status}`;
  }
  if (!(await isInGoodStanding(campaign.organisationId))) {
    const message: SmsQueueMessage = {
      type: 'sms.campaign.chunk',
      workspace_id: workspaceId,
      campaign_id: campaignId,
      contact_ids: contactIds,
    };
    await SmsHeldEntity.put({ ...heldKey, workspaceId, message, heldAt: clock.now().toISOString() }).go();
    return 'held: billing is past due';
  }
  const from = await senderNumber(workspaceId, campaign.fromPhone);
  const { data: recipients } = await SmsRecipientEntity.get(
    contactIds.map((contactId) => ({ workspaceId, campaignId, contactId })),
  ).go({
    consistent: true,
  });
  const contacts = new Map<string, Contact>();
  await Promise.all(
    recipients
      .filter((r) => r.state === 'pending')
      .map(async (r) => {
        const contact = await getContact(workspaceId, r.contactId);
        if (contact) contacts.set(r.contactId, contact);
      }),
  );
  const suppressed = await suppressedAmong(
    campaign.organisationId,
    [...contacts.values()].map((c) => c.phone).filter((p): p is string => Boolean(p)),
  );
  const outcomes: string[] = [];
  const queue = [...recipients];
  await Promise.all(
    Array.from({ length: SEND_CONCURRENCY }, async () => {
      for (let recipient = queue.shift(); recipient; recipient = queue.shift()) {
        outcomes.push(
          await sendToRecipient(
            campaign,
            recipient,
            contacts.get(recipient.contactId) ?? null,
            suppressed,
            from,
          ),
        );
      }
    }),
  );
  const unfinished = outcomes.filter((o) => o === 'pending' || o === 'sending').length;
  if (unfinished > 0)
    throw new Error(`${unfinished} recipients of the chunk are not finished; it is retried`);
  await SmsHeldEntity.delete(heldKey).go();
  await completeIfDone(workspaceId, campaignId);
  const counts = outcomes.reduce<Record<string, number>>(
    (all, o) => ({ ...all, [o]: (all[o] ?? 0) + 1 }),
    {},
  );
  return `chunk of ${contactIds.length}: ${JSON.stringify(counts)}`;
}

function refusal(contact: Contact | null, suppressed: Set<string>): string | undefined {
  if (!contact) return 'Contact not found';
  if (!contact.phone) return 'Contact has no phone number';
  if (contact.contactability === 'Unsubscribed') return CONTACT_UNSUBSCRIBED;
  if (contact.contactability === 'Do Not Contact') return CONTACT_DO_NOT_CONTACT;
  if (suppressed.has(contact.phone)) return 'Number is on the suppression list';
  return undefined;
}

async function finishRecipient(
  recipient: SmsRecipient,
  from: 'pending' | 'sending',
  to: 'skipped' | 'sent' | 'failed',
  counts: { skipped?: number; sent?: number; failed?: number; creditUnits?: number },
  reason?: string,
): Promise<boolean> {
  const { workspaceId, campaignId, contactId } = recipient;
  for (let attempt = 0; attempt < MAX_TRIES; attempt += 1) {
    const result = await smsService.transaction
      .write(({ smsRecipient, smsCampaign }) => [
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
      ])
      .go();
    if (!result.canceled) return true;
    // Refused: by its condition (finished already, the normal case of a redelivery), or by a conflict
    // with another transaction on the campaign's counters (then it is tried again).
    if ((await recipientState(recipient)) !== from) return false;
    await backOff(attempt);
  }
  throw new Error(
    `recipient ${contactId} of ${campaignId}: its counts kept conflicting; the chunk is retried`,
  );
}

const MAX_TRIES = 8;
const backOff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.min(1000, 20 * 2 ** attempt) * (0.5 + Math.random())));

async function recipientState(recipient: SmsRecipient): Promise<SmsRecipient['state'] | undefined> {
  const { workspaceId, campaignId, contactId } = recipient;
  const { data } = await SmsRecipientEntity.get({ workspaceId, campaignId, contactId }).go({
    consistent: true,
  });
  return data?.state;
}

async function sendToRecipient(
  campaign: SmsCampaign,
  recipient: SmsRecipient,
  contact: Contact | null,
  suppressed: Set<string>,
  from: string,
): Promise<string> {
  const { workspaceId, campaignId, contactId } = recipient;
  let current: SmsRecipient | null = recipient;
  if (current.state === 'pending') {
    const why = refusal(contact, suppressed);
    const body = contact && !why ? renderCampaignBody(campaign.body, contact) : '';
    if (why || body.length === 0) {
      await finishRecipient(current, 'pending', 'skipped', { skipped: 1 }, why ?? 'empty message');
      return 'skipped';
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
    for (let attempt = 0; current?.state === 'pending' && attempt < MAX_TRIES; attempt += 1) {
      const now = clock.now().toISOString();
      const result = await smsService.transaction
        .write(({ smsMessage, smsThread, smsRecipient }) => [
          smsMessage.create(record).commit(),
          smsThread
            .update({ workspaceId, contactId })
            .set({
              inboxOf: workspaceId,
              phone: record.toPhone,
              lastMessage: record.body.slice(0, 200),
              lastMessageId: record.messageId,
              lastMessageAt: record.createdAt,
            })
            .add({ unread: 0 })
            .commit(),
          smsRecipient
            .patch({ workspaceId, campaignId, contactId })
            .set({ state: 'sending', messageId: record.messageId, updatedAt: now })
            .where((attr, op) => op.eq(attr.state, 'pending'))
            .commit(),
        ])
        .go();
      if (!result.canceled) {
        current = { ...current, state: 'sending', messageId: record.messageId };
        break;
      }
      // Refused: another delivery of this chunk took the recipient, or a conflict (tried again).
      current = (
        await SmsRecipientEntity.get({ workspaceId, campaignId, contactId }).go({ consistent: true })
      ).data;
      if (current?.state === 'pending') await backOff(attempt);
    }
  }
  if (!current) return 'gone';
  if (current.state !== 'sending' || !current.messageId) return current.state;
  const message = await getMessage(workspaceId, current.messageId);
  if (!message) throw new Error(`campaign message ${current.messageId} not found`);
  const { message: after, accepted } = await deliver(message, { insufficient: 'fail' });
  if (accepted) {
    await finishRecipient(current, 'sending', 'sent', { sent: 1, creditUnits: after.creditUnits });
    return 'sent';
  }
  await finishRecipient(current, 'sending', 'failed', { failed: 1 }, after.failureReason);
  logger.info('campaign message failed', {
    campaignId,
    messageId: after.messageId,
    reason: after.failureReason,
  });
  return 'failed';
}
