import { listContacts } from '../contacts/list.js';
import { clock } from '../platform/clock.js';
import { sendMessage } from '../platform/queue.js';
import { completeIfDone, getCampaign, type CarriedCampaign } from './campaigns.js';
import { SmsCampaignEntity, SmsRecipientEntity, smsService } from './entities.js';
import { senderNumber } from './messages.js';
import type { Audience } from './schemas.js';

/**
 * An SMS campaign's audience, a page (50 contacts) at a time, on the `sms` queue. A page becomes
 * recipients in one transaction with the campaign's `recipients` count and its page counter
 * (conditioned on it and on the campaign still `sending`, so a redelivered page adds nobody twice and
 * a cancelled one nobody); then the page's contacts go on the queue as one chunk
 * (functions/sms/campaign-chunks.ts sends it), and the next page follows.
 */

const PAGE_SIZE = 50;

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
    // Refused when a redelivered copy of this page already counted it: the count stands once, as meant.
    .catch(() => {
      // Refused when a redelivered copy of this page already counted it: the count stands once.
    });
}
