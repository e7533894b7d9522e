import { clock } from '../platform/clock.js';
import { conflict, notFound } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { isConditionFailure } from '../platform/table.js';
import { queryPage, type ListQuery, type Page } from '../platform/pagination.js';
import { sendMessage } from '../platform/queue.js';
import { SmsCampaignEntity, type SmsCampaign } from './entities.js';
import { senderNumber } from './messages.js';
import type { Audience, CreateCampaignBody, UpdateCampaignBody } from './schemas.js';

/**
 * SMS campaigns: one body (with placeholders) to an audience — given contacts, the contacts with a
 * tag, or every contactable contact — sent in the background on the `sms` queue. Here the campaign
 * itself: created, listed, changed, started, cancelled, deleted, compared, and marked `sent` at the end.
 *
 * `PATCH {status: sending}` (202) moves a draft to `sending` and queues its first audience page,
 * carrying what the campaign fixed at its start (organisation, resolved sender, audience; an audience
 * of more than 500 given contacts is read instead). The pages become recipients
 * (functions/sms/campaign-pages.ts) and their chunks are sent (functions/sms/campaign-chunks.ts).
 * `cancelled` stops the sends that have not started.
 */

export const CAMPAIGN_NOT_FOUND = 'SMS campaign not found';

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

/** `sent` once the last page is planned and every recipient is done. */
export async function completeIfDone(workspaceId: string, campaignId: string): Promise<void> {
  const campaign = await getCampaign(workspaceId, campaignId);
  if (!campaign || campaign.status !== 'sending' || !campaign.planned) return;
  if (campaign.processed < campaign.recipients) return;
  await markSent(workspaceId, campaignId, campaign.recipients);
}

/** The campaign `sent`, conditioned on it still sending, planned, and `recipients` done. */
export async function markSent(workspaceId: string, campaignId: string, recipients: number): Promise<void> {
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
