import type { z } from 'zod';
import type { WorkspaceAccess } from '../access/workspace-access.js';
import { AgentEntity, type Agent } from '../agents/entities.js';
import { referencedParameters } from '../agents/template.js';
import { displayCredits } from '../billing/credits.js';
import { requireFeature } from '../billing/features.js';
import { ContactEntity } from '../contacts/entities.js';
import { PhoneClaimEntity } from '../numbers/entities.js';
import { actorId } from '../platform/auth/principal.js';
import { clock } from '../platform/clock.js';
import { conflict, notFound, ValidationError } from '../platform/errors.js';
import { isId, newId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { queryPage, type Page } from '../platform/pagination.js';
import { sendMessage } from '../platform/queue.js';
import { isConditionFailure } from '../platform/table.js';
import {
  ActiveCampaignEntity,
  BatchContactEntity,
  CampaignCountersEntity,
  CampaignEntity,
  CampaignPhoneEntity,
  campaignsService,
  COUNTER_SHARDS,
  DUE_NOW,
  type BatchContact,
  type Campaign,
} from './entities.js';
import {
  DEFAULT_CALLING_WINDOW,
  DEFAULT_MAX_CONCURRENCY,
  DEFAULT_RETRY,
  type BatchContactState,
  type CallingWindow,
  type CampaignStatus,
  type RetryPolicy,
} from './model.js';
import type {
  BatchContactResponse,
  CampaignProgress,
  CampaignResponse,
  CreateCampaignBody,
  UpdateCampaignBody,
} from './schemas.js';
import { nextOpening, recipientZones, windowOpening } from './window.js';

/**
 * Campaigns: their settings, their status (draft → running ⇄ paused → completed | cancelled), their
 * batch contacts and progress. The dialer (dialer.ts) places the calls; uploads (uploads.ts) add the
 * contacts. Every route is the workspace's (404 for another's) and needs the plan's `batch_outbound`
 * to create, start or upload (402); reading stays open after a downgrade.
 */
export const CAMPAIGN_NOT_FOUND = 'Campaign not found';
export const NO_CONTACTS_TO_CALL = 'The campaign has no contacts to call: upload some first';

type TransactionResult = { canceled: boolean; data: { code?: string }[] };

/** A transaction, tried again while DynamoDB reports a conflict with another one (not a condition). */
export async function transact(
  build: Parameters<typeof campaignsService.transaction.write>[0],
): Promise<{ canceled: boolean; codes: string[] }> {
  for (let attempt = 0; ; attempt += 1) {
    const result = (await campaignsService.transaction.write(build).go()) as TransactionResult;
    const codes = result.data.map((d) => d.code ?? 'None');
    if (!result.canceled) return { canceled: false, codes };
    if (!codes.includes('TransactionConflict') || attempt >= 12) return { canceled: true, codes };
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * (attempt + 1)));
  }
}

// ── Reading ──────────────────────────────────────────────────────────────────────────────────────────

export async function getCampaign(workspaceId: string, campaignId: string): Promise<Campaign | null> {
  if (!isId('campaign', campaignId)) return null;
  const { data } = await CampaignEntity.get({ workspaceId, campaignId }).go({ consistent: true });
  return data;
}

export async function requireCampaign(workspaceId: string, campaignId: string): Promise<Campaign> {
  const campaign = await getCampaign(workspaceId, campaignId);
  if (!campaign) throw notFound(CAMPAIGN_NOT_FOUND);
  return campaign;
}

export interface Progress {
  total: number;
  pending: number;
  calling: number;
  retryScheduled: number;
  completed: number;
  failed: number;
  skipped: number;
  cancelled: number;
  /** Attempts that ended on a machine (not a state: a contact is counted once per such attempt). */
  voicemail: number;
  creditsUnits: number;
}

/** The counter shards summed (one BatchGet). */
export async function readProgress(workspaceId: string, campaignId: string): Promise<Progress> {
  const { data } = await CampaignCountersEntity.get(
    Array.from({ length: COUNTER_SHARDS }, (_, shard) => ({ workspaceId, campaignId, shard })),
  ).go({ consistent: true });
  const sum: Progress = {
    total: 0,
    pending: 0,
    calling: 0,
    retryScheduled: 0,
    completed: 0,
    failed: 0,
    skipped: 0,
    cancelled: 0,
    voicemail: 0,
    creditsUnits: 0,
  };
  for (const shard of data)
    for (const key of Object.keys(sum) as (keyof Progress)[]) sum[key] += shard[key] ?? 0;
  return sum;
}

/** Contacts still to be dialled or being dialled. */
export const unfinished = (p: Progress): number => p.pending + p.calling + p.retryScheduled;

export async function listCampaigns(
  workspaceId: string,
  query: { limit: number; cursor?: string; status?: CampaignStatus },
): Promise<Page<Campaign>> {
  const page = await queryPage(query.cursor, (cursor) => {
    const base = CampaignEntity.query.byWorkspace({ workspaceId });
    const filtered = query.status ? base.where((attr, op) => op.eq(attr.status, query.status!)) : base;
    return filtered.go({ order: 'desc', count: query.limit, cursor });
  });
  return { items: page.items as Campaign[], nextCursor: page.nextCursor };
}

export async function listBatchContacts(
  workspaceId: string,
  campaignId: string,
  query: { limit: number; cursor?: string; state?: BatchContactState },
): Promise<Page<BatchContact>> {
  const page = await queryPage(query.cursor, (cursor) =>
    query.state
      ? BatchContactEntity.query
          .byState({ workspaceId, campaignId, state: query.state })
          .go({ count: query.limit, cursor })
      : BatchContactEntity.query.byCampaign({ workspaceId, campaignId }).go({ count: query.limit, cursor }),
  );
  return { items: page.items as BatchContact[], nextCursor: page.nextCursor };
}

// ── Checks ───────────────────────────────────────────────────────────────────────────────────────────

const invalid = (loc: (string | number)[], msg: string, input: unknown = null) =>
  new ValidationError([{ type: 'value_error', loc: ['body', ...loc], msg: `Value error, ${msg}`, input }]);

/** The agent, and the number the campaign calls from: 422 when the agent cannot call. */
async function checkAgent(
  workspaceId: string,
  agentId: string,
  fromPhone: string | undefined,
): Promise<{ agent: Agent; fromPhone: string }> {
  const agent = isId('agent', agentId)
    ? (await AgentEntity.get({ workspaceId, agentId }).go({ consistent: true })).data
    : null;
  if (!agent) throw invalid(['agent_id'], 'no such agent in this workspace', agentId);
  if (fromPhone) {
    const { data: claim } = await PhoneClaimEntity.get({ phoneNumber: fromPhone }).go({ consistent: true });
    if (!claim || claim.workspaceId !== workspaceId || claim.agentId !== agentId)
      throw invalid(['from_phone'], 'from_phone is not a number of this agent', fromPhone);
    return { agent, fromPhone };
  }
  if (!agent.phoneNumber)
    throw invalid(['from_phone'], 'the agent has no phone number: connect one to it or give from_phone');
  return { agent, fromPhone: agent.phoneNumber };
}

function checkConcurrency(maxConcurrency: number, access: WorkspaceAccess): void {
  const limit = access.workspace.concurrentCallLimit;
  if (maxConcurrency > limit)
    throw invalid(
      ['max_concurrency'],
      `max_concurrency may not be above the workspace's concurrent_call_limit (${limit})`,
      maxConcurrency,
    );
}

/** The `{{names}}` an agent's prompt and greeting use: every batch contact must give them. */
export const agentParameters = (agent: Pick<Agent, 'prompt' | 'greeting'>): string[] => [
  ...new Set([...referencedParameters(agent.prompt), ...referencedParameters(agent.greeting)]),
];

// ── Writing ──────────────────────────────────────────────────────────────────────────────────────────

export async function createCampaign(access: WorkspaceAccess, body: CreateCampaignBody): Promise<Campaign> {
  const workspaceId = access.workspace.workspaceId;
  await requireFeature(access.organisationId, 'batchOutbound');
  const maxConcurrency =
    body.max_concurrency ?? Math.min(DEFAULT_MAX_CONCURRENCY, access.workspace.concurrentCallLimit);
  checkConcurrency(maxConcurrency, access);
  await checkAgent(workspaceId, body.agent_id, body.from_phone ?? undefined);
  const now = clock.now().toISOString();
  const { data } = await CampaignEntity.create({
    workspaceId,
    campaignId: newId('campaign'),
    organisationId: access.organisationId,
    name: body.name,
    agentId: body.agent_id,
    fromPhone: body.from_phone ?? undefined,
    callingWindow: body.calling_window ?? DEFAULT_CALLING_WINDOW,
    retry: body.retry ?? DEFAULT_RETRY,
    maxConcurrency,
    ...(body.retry_on_voicemail ? { retryOnVoicemail: true } : {}),
    status: 'draft',
    activeCalls: 0,
    createdBy: actorId(access.principal),
    createdAt: now,
    updatedAt: now,
  }).go();
  return data as Campaign;
}

/** Sends one dialer pass for the campaign now (best effort: the schedule sends one each tick anyway). */
export async function nudgeDialer(campaign: Pick<Campaign, 'workspaceId' | 'campaignId'>): Promise<void> {
  try {
    await sendMessage('campaigns', {
      type: 'campaign.dial',
      workspace_id: campaign.workspaceId,
      campaign_id: campaign.campaignId,
    });
  } catch (error) {
    logger.warn('dialer pass not sent; the next tick runs it', {
      campaignId: campaign.campaignId,
      error: String(error),
    });
  }
}

const TRANSITIONS: Record<CampaignStatus, CampaignStatus[]> = {
  draft: ['running', 'cancelled'],
  running: ['paused', 'cancelled'],
  paused: ['running', 'cancelled'],
  completed: [],
  cancelled: [],
};

/**
 * PATCH: settings and/or a status change. `running` starts a draft (409 without contacts to call) or
 * resumes a paused campaign; `paused` pauses; `cancelled` cancels (contacts not yet called become
 * `cancelled`; calls under way finish). A completed or cancelled campaign is 409.
 */
export async function updateCampaign(
  access: WorkspaceAccess,
  campaignId: string,
  body: UpdateCampaignBody,
): Promise<Campaign> {
  const workspaceId = access.workspace.workspaceId;
  const campaign = await requireCampaign(workspaceId, campaignId);
  if (campaign.status === 'completed' || campaign.status === 'cancelled')
    throw conflict(`The campaign is ${campaign.status}: it can no longer change`);
  const to = body.status && body.status !== campaign.status ? body.status : undefined;
  if (to && !TRANSITIONS[campaign.status].includes(to))
    throw conflict(`A ${campaign.status} campaign cannot become ${to}`);
  if (to === 'running' || body.max_concurrency !== undefined)
    await requireFeature(access.organisationId, 'batchOutbound');
  if (body.max_concurrency !== undefined) checkConcurrency(body.max_concurrency, access);
  if (to === 'running') {
    await checkAgent(workspaceId, campaign.agentId, campaign.fromPhone);
    if (campaign.status === 'draft' && unfinished(await readProgress(workspaceId, campaignId)) === 0)
      throw conflict(NO_CONTACTS_TO_CALL);
  }
  const now = clock.now().toISOString();
  const set: Partial<Campaign> = { updatedAt: now };
  if (body.name !== undefined) set.name = body.name;
  if (body.calling_window !== undefined) set.callingWindow = body.calling_window as CallingWindow;
  if (body.retry !== undefined) set.retry = body.retry as RetryPolicy;
  if (body.max_concurrency !== undefined) set.maxConcurrency = body.max_concurrency;
  if (body.retry_on_voicemail !== undefined) set.retryOnVoicemail = body.retry_on_voicemail;
  if (to) set.status = to;
  if (to === 'running' && !campaign.startedAt) {
    set.startedAt = now;
    set.runJobId = newId('job');
  }
  // Contacts the old window deferred keep their old time unless re-planned (dialer.ts replanDeferred).
  const replan = body.calling_window !== undefined || (to === 'running' && campaign.status === 'paused');
  if (replan) set.replanAt = now;
  const { canceled } = await transact(({ campaign: campaigns, activeCampaign }) => [
    campaigns
      .patch({ workspaceId, campaignId })
      .set(set)
      .remove(to === 'running' ? ['pausedReason'] : [])
      .where((attr, op) => op.eq(attr.status, campaign.status))
      .commit(),
    // Running or cancelled campaigns have work for the dialer (a cancelled one: its contacts to cancel).
    ...(to === 'running' || to === 'cancelled'
      ? [activeCampaign.put({ workspaceId, campaignId, since: now }).commit()]
      : []),
  ]);
  if (canceled) throw conflict('The campaign changed meanwhile: read it again and retry');
  const updated = await requireCampaign(workspaceId, campaignId);
  if (to === 'running' || to === 'cancelled' || (replan && updated.status === 'running'))
    await nudgeDialer(updated);
  return updated;
}

/** DELETE: a running campaign must be paused or cancelled first (409); its batch contacts go with it. */
export async function deleteCampaign(access: WorkspaceAccess, campaignId: string): Promise<void> {
  const workspaceId = access.workspace.workspaceId;
  const campaign = await requireCampaign(workspaceId, campaignId);
  if (campaign.status === 'running' || campaign.activeCalls > 0)
    throw conflict('The campaign has calls under way or to place: pause or cancel it, and let them end');
  try {
    await CampaignEntity.delete({ workspaceId, campaignId })
      .where((attr, op) => op.eq(attr.status, campaign.status))
      .go();
  } catch (error) {
    if (isConditionFailure(error)) throw conflict('The campaign changed meanwhile: read it again and retry');
    throw error;
  }
  await ActiveCampaignEntity.delete({ workspaceId, campaignId }).go();
  for (let cursor: string | null = null, first = true; first || cursor; first = false) {
    const page: { data: BatchContact[]; cursor: string | null } = await BatchContactEntity.query
      .byCampaign({ workspaceId, campaignId })
      .go({ cursor, count: 500 });
    cursor = page.cursor;
    if (page.data.length === 0) continue;
    await BatchContactEntity.delete(
      page.data.map((bc) => ({ workspaceId, campaignId, batchContactId: bc.batchContactId })),
    ).go();
    await CampaignPhoneEntity.delete(
      page.data.map((bc) => ({ workspaceId, campaignId, phone: bc.phone })),
    ).go();
  }
  await CampaignCountersEntity.delete(
    Array.from({ length: COUNTER_SHARDS }, (_, shard) => ({ workspaceId, campaignId, shard })),
  ).go();
}

// ── When the next call is placed ─────────────────────────────────────────────────────────────────────

/** When the campaign dials its first waiting contact, and why then (both null when it dials no more). */
export interface NextDial {
  at: string | null;
  reason: string | null;
}

const RETRY_AFTER: Record<string, string> = {
  busy: 'retry after a busy line',
  no_answer: 'retry after no answer',
  failed: 'retry after a failed call',
};

/**
 * The campaign's next dial: its first waiting contact (pending or retry_scheduled, earliest due;
 * one single-item query per state) and, for a running campaign, when the calling window lets it be
 * dialled in that contact's zones — "window opens 09:00 Australia/Perth", "retry after no answer",
 * "due now". A draft, a paused campaign (with the pause's reason) and an ended one say so.
 */
export async function nextDial(
  campaign: Campaign,
  workspaceTimezone: string,
  now = clock.now(),
): Promise<NextDial> {
  switch (campaign.status) {
    case 'draft':
      return { at: null, reason: 'not started: set status running' };
    case 'paused':
      return { at: null, reason: campaign.pausedReason ? `paused (${campaign.pausedReason})` : 'paused' };
    case 'completed':
    case 'cancelled':
      return { at: null, reason: null };
    case 'running':
      break;
  }
  const { workspaceId, campaignId } = campaign;
  const firsts = await Promise.all(
    (['pending', 'retry_scheduled'] as const).map(
      async (state) =>
        (await BatchContactEntity.query.byState({ workspaceId, campaignId, state }).go({ count: 1 })).data[0],
    ),
  );
  const first = firsts
    .filter((bc): bc is BatchContact => bc !== undefined)
    .sort((a, b) => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : 0))[0];
  if (!first) return { at: null, reason: 'no contact waiting' };
  const window = campaign.callingWindow as CallingWindow;
  const contact = first.contactId
    ? (await ContactEntity.get({ workspaceId, contactId: first.contactId }).go()).data
    : null;
  const zones = recipientZones({
    window,
    contactTimezone: contact?.timezone,
    phone: first.phone,
    workspaceTimezone,
  });
  // A contact the window deferred is planned from when it was due before (the window may have changed).
  const base = first.deferredFrom ?? first.dueAt;
  const due = base === DUE_NOW || Date.parse(base) <= now.getTime() ? now : new Date(base);
  const opening = nextOpening(window, zones, due);
  if (opening) return { at: opening.toISOString(), reason: windowOpening(window, zones, opening, now) };
  if (due > now) {
    const outcome = first.attempts?.at(-1)?.outcome;
    return { at: due.toISOString(), reason: (outcome && RETRY_AFTER[outcome]) ?? 'retry scheduled' };
  }
  const full = campaign.activeCalls >= campaign.maxConcurrency;
  return { at: now.toISOString(), reason: full ? 'due now, once a line is free' : 'due now' };
}

// ── Wire shapes ──────────────────────────────────────────────────────────────────────────────────────

export function progressView(campaignId: string, p: Progress): z.infer<typeof CampaignProgress> {
  return {
    id: campaignId,
    total: p.total,
    pending: p.pending,
    calling: p.calling,
    completed: p.completed,
    failed: p.failed,
    skipped: p.skipped,
    retry_scheduled: p.retryScheduled,
    cancelled: p.cancelled,
    voicemail: p.voicemail,
    credits_used: displayCredits(p.creditsUnits),
  };
}

/** A campaign on the wire (view.ts reads what it shows beside its record). */
export function campaignView(
  campaign: Campaign,
  progress: Progress,
  next: NextDial,
  warnings: z.infer<typeof CampaignResponse>['warnings'],
): z.infer<typeof CampaignResponse> {
  const window = campaign.callingWindow as CallingWindow;
  return {
    id: campaign.campaignId,
    workspace_id: campaign.workspaceId,
    name: campaign.name,
    agent_id: campaign.agentId,
    from_phone: campaign.fromPhone ?? null,
    calling_window: { ...window, day_hours: window.day_hours ?? {} },
    retry: campaign.retry as RetryPolicy,
    max_concurrency: campaign.maxConcurrency,
    retry_on_voicemail: campaign.retryOnVoicemail === true,
    status: campaign.status,
    paused_reason: campaign.pausedReason ?? null,
    progress: progressView(campaign.campaignId, progress),
    created_by: campaign.createdBy,
    created_at: campaign.createdAt,
    updated_at: campaign.updatedAt,
    started_at: campaign.startedAt ?? null,
    completed_at: campaign.completedAt ?? null,
    next_dial_at: next.at,
    next_dial_reason: next.reason,
    warnings,
  };
}

export function batchContactView(bc: BatchContact, now = clock.now()): z.infer<typeof BatchContactResponse> {
  const due = bc.dueAt !== DUE_NOW && Date.parse(bc.dueAt) > now.getTime() ? bc.dueAt : null;
  const waiting = bc.state === 'pending' || bc.state === 'retry_scheduled';
  return {
    id: bc.batchContactId,
    campaign_id: bc.campaignId,
    contact_id: bc.contactId ?? null,
    phone: bc.phone,
    parameters: (bc.parameters ?? {}) as Record<string, string>,
    state: bc.state,
    attempts: (bc.attempts ?? []).map((a) => ({
      call_id: a.callId,
      at: a.at,
      outcome: (a.outcome ?? null) as z.infer<typeof BatchContactResponse>['attempts'][number]['outcome'],
    })),
    next_attempt_at: waiting ? due : null,
    reason: bc.reason ?? null,
  };
}
