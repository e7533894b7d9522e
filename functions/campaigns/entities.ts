import type { EntityItem } from 'electrodb';
import { Entity, Service } from '../platform/entity.js';
import { ContactImportRowEntity, ContactNoteEntity } from '../contacts/entities.js';
import { gsi1, primaryIndex } from '../platform/keys.js';
import { entityConfig } from '../platform/table.js';
import { BATCH_CONTACT_STATES, CAMPAIGN_STATUSES } from './model.js';

/**
 * Batch outbound campaigns. Access patterns:
 *   campaign         pk WS#<ws>                              sk CAMPAIGN#<cmp>          get; the list, newest first
 *   counters         pk WS#<ws>#CAMPAIGN#<cmp>               sk COUNTERS#<n>            the batch contacts per state,
 *                                                                                      n = 0…COUNTER_SHARDS-1 (summed)
 *   batch contact    pk WS#<ws>#CAMPAIGN#<cmp>               sk BC#<bc>                 the list in upload order
 *     by state       gsi1 WS#<ws>#CAMPAIGN#<cmp>#STATE#<state>  <due at>#<bc>           the dialer's work (due first),
 *                                                                                      the list's `state` filter
 *   phone key        pk WS#<ws>#CAMPAIGN#<cmp>               sk PHONE#<e164>            a number once per campaign
 *   active marker    pk CAMPAIGNS#ACTIVE                     sk <ws>#<cmp>              the dialer's list of campaigns
 *                                                                                      with work (running, or calls out)
 *
 * Invariants, each by conditions in one transaction (functions/campaigns/dialer.ts):
 * - A batch contact changes state only from the state (and attempt) it was read in, and its counter
 *   shard moves with it, so the counters always sum to the contacts' states.
 * - A claim (→ `calling`, attempt + 1) also adds 1 to the campaign's `activeCalls` on condition that
 *   the campaign is `running` and `activeCalls < maxConcurrency`: overlapping dialer passes never
 *   exceed the campaign's cap. Leaving `calling` takes it back.
 * - An upload row's outcome record (contacts' import row), the phone key and the batch contact are
 *   created together with "does not exist": a number is in a campaign once, a row counted once.
 */
const cfg = entityConfig();

export const COUNTER_SHARDS = 8;
/** `dueAt` of a contact that may be dialled now (sorts before every ISO time). */
export const DUE_NOW = '0';

export const CampaignEntity = new Entity(
  {
    model: { entity: 'campaign', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      campaignId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      name: { type: 'string', required: true },
      agentId: { type: 'string', required: true },
      fromPhone: { type: 'string' },
      /** The wire shapes (model.ts CallingWindow, RetryPolicy). */
      callingWindow: { type: 'any', required: true },
      retry: { type: 'any', required: true },
      maxConcurrency: { type: 'number', required: true },
      /** A voicemail is tried again under `retry` (absent: false, the contact is done). */
      retryOnVoicemail: { type: 'boolean' },
      status: { type: CAMPAIGN_STATUSES, required: true },
      pausedReason: { type: 'string' },
      /** Batch contacts in `calling` (a claim adds 1 under the cap; an outcome or a release takes it). */
      activeCalls: { type: 'number', required: true, default: 0 },
      /** The run job's id, set when the campaign first starts. */
      runJobId: { type: 'string' },
      createdBy: { type: 'string', required: true },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string', required: true },
      startedAt: { type: 'string' },
      completedAt: { type: 'string' },
      /** When `campaign.completed` was published (the active marker goes after it). */
      completionPublishedAt: { type: 'string' },
      /**
       * Set when the calling window changed or the campaign resumed: the dialer's next pass re-plans
       * the contacts the window deferred (dialer.ts replanDeferred), then removes it (on its value).
       */
      replanAt: { type: 'string' },
    },
    indexes: {
      byWorkspace: primaryIndex(
        ['workspaceId'],
        'WS#${workspaceId}',
        ['campaignId'],
        'CAMPAIGN#${campaignId}',
      ),
    },
  },
  cfg,
);

export const CampaignCountersEntity = new Entity(
  {
    model: { entity: 'campaignCounters', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      campaignId: { type: 'string', required: true },
      shard: { type: 'number', required: true },
      total: { type: 'number' },
      pending: { type: 'number' },
      calling: { type: 'number' },
      retryScheduled: { type: 'number' },
      completed: { type: 'number' },
      failed: { type: 'number' },
      skipped: { type: 'number' },
      cancelled: { type: 'number' },
      /** Attempts that ended on a machine. */
      voicemail: { type: 'number' },
      /** Units charged for the campaign's calls (1 credit = 60 units). */
      creditsUnits: { type: 'number' },
    },
    indexes: {
      byCampaign: primaryIndex(
        ['workspaceId', 'campaignId'],
        'WS#${workspaceId}#CAMPAIGN#${campaignId}',
        ['shard'],
        'COUNTERS#${shard}',
      ),
    },
  },
  cfg,
);

const attempt = {
  type: 'map',
  properties: {
    callId: { type: 'string', required: true },
    at: { type: 'string', required: true },
    outcome: { type: 'string' },
  },
} as const;

export const BatchContactEntity = new Entity(
  {
    model: { entity: 'batchContact', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      campaignId: { type: 'string', required: true },
      batchContactId: { type: 'string', required: true },
      contactId: { type: 'string' },
      /** E.164. */
      phone: { type: 'string', required: true },
      parameters: { type: 'any' },
      state: { type: BATCH_CONTACT_STATES, required: true },
      /** The earliest time it may be dialled (ISO), or DUE_NOW. */
      dueAt: { type: 'string', required: true },
      /**
       * While the calling window defers it: the `dueAt` it had before (DUE_NOW, or a retry's time), so a
       * changed window re-plans it from there. Removed when it is claimed.
       */
      deferredFrom: { type: 'string' },
      /** Attempts claimed so far (the attempt being placed while `calling`). */
      attempt: { type: 'number', required: true, default: 0 },
      attempts: { type: 'list', items: attempt },
      /** The state a claim came from (a released claim goes back to it). */
      claimedFrom: { type: BATCH_CONTACT_STATES },
      claimedAt: { type: 'string' },
      /** The call of the current attempt, once placed. */
      callId: { type: 'string' },
      reason: { type: 'string' },
      shard: { type: 'number', required: true },
      jobId: { type: 'string' },
      row: { type: 'number' },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string', required: true },
    },
    indexes: {
      byCampaign: primaryIndex(
        ['workspaceId', 'campaignId'],
        'WS#${workspaceId}#CAMPAIGN#${campaignId}',
        ['batchContactId'],
        'BC#${batchContactId}',
      ),
      byState: gsi1(
        ['workspaceId', 'campaignId', 'state'],
        'WS#${workspaceId}#CAMPAIGN#${campaignId}#STATE#${state}',
        ['dueAt', 'batchContactId'],
        '${dueAt}#${batchContactId}',
      ),
    },
  },
  cfg,
);

export const CampaignPhoneEntity = new Entity(
  {
    model: { entity: 'campaignPhone', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      campaignId: { type: 'string', required: true },
      phone: { type: 'string', required: true },
      batchContactId: { type: 'string', required: true },
    },
    indexes: {
      byPhone: primaryIndex(
        ['workspaceId', 'campaignId'],
        'WS#${workspaceId}#CAMPAIGN#${campaignId}',
        ['phone'],
        'PHONE#${phone}',
      ),
    },
  },
  cfg,
);

export const ActiveCampaignEntity = new Entity(
  {
    model: { entity: 'activeCampaign', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      campaignId: { type: 'string', required: true },
      since: { type: 'string', required: true },
      /** The dialer's next follow-up pass (dialer.ts `followUp`): one chain of them per campaign. */
      nextPassAt: { type: 'string' },
    },
    indexes: {
      all: primaryIndex(
        [],
        'CAMPAIGNS#ACTIVE',
        ['workspaceId', 'campaignId'],
        '${workspaceId}#${campaignId}',
      ),
    },
  },
  cfg,
);

export const campaignsService = new Service(
  {
    campaign: CampaignEntity,
    campaignCounters: CampaignCountersEntity,
    batchContact: BatchContactEntity,
    campaignPhone: CampaignPhoneEntity,
    activeCampaign: ActiveCampaignEntity,
    contactImportRow: ContactImportRowEntity,
    contactNote: ContactNoteEntity,
  },
  cfg,
);

export type Campaign = EntityItem<typeof CampaignEntity>;
export type BatchContact = EntityItem<typeof BatchContactEntity>;
export type CampaignCounters = EntityItem<typeof CampaignCountersEntity>;
