import { IdempotencyEntity } from '../platform/idempotency.js';
import type { EntityItem } from 'electrodb';
import { Entity, Service } from '../platform/entity.js';
import { WorkspaceEntity, WorkspaceMemberEntity, OrgMemberEntity } from '../access/entities.js';
import { AgentEntity, EXPRESSIVENESS, SPEECH_SPEEDS } from '../agents/entities.js';
import { BillingAccountEntity } from '../billing/entities.js';
import { PhoneClaimEntity } from '../numbers/entities.js';
import { entityConfig } from '../platform/table.js';
import { primaryIndex, gsi1, gsi2 } from '../platform/keys.js';
import { END_REASONS } from '../providers/telephony/twilio-format.js';
import { callShardOf } from './call-shards.js';
import { NO_REMOTE_PHONE, remotePhoneOf } from './remote-phone.js';
import { INTERNAL_STATUSES } from './status.js';

/**
 * Calls. Access patterns:
 *   call in workspace      pk WS#<ws>#CALLS#<shard>      sk CALL#<call>            (get, by callKey: the shard comes from the
 *                                                                                  id (call-shards.ts); call log newest first,
 *                                                                                  the shards merged (call-log-merge.ts) — call
 *                                                                                  ids are ULIDs, so date filters are key ranges)
 *   calls of an agent      gsi1 WS#<ws>#AGENT#<ag>#CALLS#<shard>  <call>           (call log filtered by agent,
 *                                                                                  the shards merged; calls
 *                                                                                  written before: …#CALLS)
 *   calls with a number    gsi2 WS#<ws>#PHONE#<e164>#CALLS <call>                  (call log filtered by the other party,
 *                                                                                  `phone`: the caller of an inbound call,
 *                                                                                  the called number of an outbound one;
 *                                                                                  sparse: a test chat has none)
 *   status history         pk CALL#<call>                sk STATUS#<rank>#<status> (one item per status, created with a
 *                                                                                  condition: a status is recorded once)
 *   open call marker       pk OPENCALLS#<shard>          sk <created at>#<call>    (the sweeper's work list: calls not yet
 *                                                                                  handed to the post-call pipeline)
 *   provider call          pk PROVIDERCALL#<provider>#<provider call id>  sk CALL  (callbacks without our call id —
 *                                                                                  inbound calls — find the call here)
 *   recording link         pk SHORTCODE#<code>           sk RECORDING              (the public page's short code → the call)
 *   call counters          pk WS#<ws>#CALLSTATS#<shard>  sk DAY#<day>[#AGENT#<ag>] (analytics, kept on write: call-stats.ts;
 *                                                                                  the call's shard, summed on read)
 *   idempotency key        functions/platform/idempotency.ts, scope = the workspace and the caller
 *                          (platform/http/idempotency.ts idempotencyScope; start-call retries; TTL 24 h)
 */
const cfg = entityConfig();

export const OPEN_CALL_SHARDS = 8;

const transcriptTurn = {
  type: 'map',
  properties: {
    role: { type: ['agent', 'user'] as const, required: true },
    text: { type: 'string', required: true },
    offsetSeconds: { type: 'number', required: true },
    /** The agent that said it (agents' lines of a call with handoffs, calling/handoffs.ts); absent: the call's agent. */
    agentId: { type: 'string' },
  },
} as const;

const quotedListing = {
  type: 'map',
  properties: {
    listingId: { type: 'string', required: true },
    /** The knowledge item the listing was quoted from (absent: from the call's parameters). */
    itemId: { type: 'string' },
    address: { type: 'string', required: true },
    price: { type: 'string', required: true },
  },
} as const;

export const CallEntity = new Entity(
  {
    model: { entity: 'call', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      callId: { type: 'string', required: true },
      /** The call's shard of its workspace's calls (call-shards.ts), from its id: part of its key. */
      callShard: {
        type: 'number',
        watch: ['callId'],
        set: (_value: unknown, item: { callId?: string }) =>
          item.callId === undefined ? undefined : callShardOf(item.callId),
      },
      organisationId: { type: 'string', required: true },
      agentId: { type: 'string', required: true },
      /** The batch outbound campaign that placed the call (functions/campaigns/), absent for single calls. */
      campaignId: { type: 'string' },
      /**
       * The workspace's contact with the other party's number when the call was made (outbound: to_phone,
       * inbound: the caller), absent when there was none. Set once, at creation.
       */
      contactId: { type: 'string' },
      direction: { type: ['outbound', 'inbound'] as const, required: true },
      toPhone: { type: 'string', required: true },
      fromPhone: { type: 'string', required: true },
      /** The other party (remote-phone.ts), kept from direction and numbers when the call is written. */
      remotePhone: {
        type: 'string',
        watch: ['direction', 'toPhone', 'fromPhone', 'channel'],
        set: (
          _value: unknown,
          item: {
            direction?: 'outbound' | 'inbound';
            toPhone?: string;
            fromPhone?: string;
            channel?: 'phone' | 'web';
          },
        ) => remotePhoneOf(item) ?? NO_REMOTE_PHONE,
      },
      record: { type: 'boolean', required: true },
      parameters: { type: 'any' },
      status: { type: INTERNAL_STATUSES, required: true },
      statusRank: { type: 'number', required: true },
      endReason: { type: END_REASONS },
      createdBy: { type: 'string', required: true },
      createdAt: { type: 'string', required: true },
      initiatedAt: { type: 'string' },
      connectedAt: { type: 'string' },
      inprogressAt: { type: 'string' },
      endedAt: { type: 'string' },
      durationSeconds: { type: 'number' },
      /** What the agent was when the call was placed: the call plays out with this. */
      agentName: { type: 'string', required: true },
      /**
       * The agent's version the call runs (agents/versions.ts), recorded at its creation; the
       * conversation reads that version, never the agent as it is later. Absent on calls made before
       * versions existed (and on calls of an agent not changed since).
       */
      agentVersion: { type: 'number' },
      greeting: { type: 'string', required: true },
      prompt: { type: 'string', required: true },
      maxDurationSeconds: { type: 'number', required: true },
      /** When the sweeper gives the call up as lost if it has not ended. */
      deadlineAt: { type: 'string', required: true },
      openShard: { type: 'number', required: true },
      provider: { type: ['simulator', 'twilio'] as const },
      providerCallId: { type: 'string' },
      dispatchedAt: { type: 'string' },
      /**
       * What dialling needs of the agent's version the call runs, copied when the call is created
       * (start-call has the agent in hand): the relay settings (relay-settings.ts), answering-machine
       * detection's mode when the agent has `voicemail` detection, and whether it uses conversation
       * memories. The dispatcher dials from it without reading the agent again. Absent on inbound calls
       * (never dialled) and on calls made before it existed (the dispatcher then reads the agent).
       */
      dial: {
        type: 'map',
        properties: {
          language: { type: 'string' },
          voice: { type: 'string' },
          speechSpeed: { type: SPEECH_SPEEDS, required: true },
          expressiveness: { type: EXPRESSIVENESS, required: true },
          interruptible: { type: 'boolean', required: true },
          specialisedTerms: { type: 'list', items: { type: 'string' }, required: true },
          machineDetection: { type: ['DetectMessageEnd', 'Enable'] as const },
          memories: { type: 'boolean' },
        },
      },
      transcriptExpected: { type: 'boolean' },
      /** The call was counted in analytics' `handoffs` (call-stats.ts `countHandoffs`: once). */
      handoffsCounted: { type: 'boolean' },
      transcript: { type: 'list', items: transcriptTurn },
      quotedListings: { type: 'list', items: quotedListing },
      recordingKey: { type: 'string' },
      recordingDurationSeconds: { type: 'number' },
      /** The recording's public short code (short-codes.ts), made with the recording. */
      shortCode: { type: 'string' },
      /** Units charged for the call (1 credit = 60 units). */
      chargedUnits: { type: 'number' },
      postCallSentAt: { type: 'string' },
      endedBy: { type: 'string' },
      /** Who asked us to hang up, set before the provider is told: its terminal callback answers that request. */
      hangupRequestedBy: { type: 'string' },
      sentiment: { type: 'any' },
      /** Post-call analysis (functions/post-call/call-analysis.ts), stored with the sentiment. */
      analysis: { type: 'any' },
      /** The day the call's turn latencies were added to the latency histogram (once: call-stats.ts). */
      latencyDay: { type: 'string' },
      /** The runtime got the contact's earlier calls' summaries (conversation memories): billed on top. */
      memoriesUsed: { type: 'boolean' },
      /** Those summaries, newest first (the conversation engine gives them to the model). */
      memories: { type: 'list', items: { type: 'string' } },
      /**
       * PII redaction before storage, as the agent had it when the call was made (absent: off):
       * the categories (absent: all) and what becomes of the recording. Set at the call's creation.
       */
      piiRedaction: {
        type: 'map',
        properties: {
          categories: { type: 'list', items: { type: 'string' } },
          recordings: { type: ['keep', 'drop'] as const },
        },
      },
      /** The stored transcript, tool calls and incidents were redacted (the call detail's `pii_redacted`). */
      piiRedacted: { type: 'boolean' },
      /** The voice relay's connection of the call's conversation: set once (one session per call). */
      relayConnectionId: { type: 'string' },
      /** `phone` (absent) or `web` (the dashboard's test chat). */
      channel: { type: ['phone', 'web'] as const },
      /** A test chat's choice (its ticket's `run_post_call_actions`): absent on a web call, its post-call actions do not run. */
      runPostCallActions: { type: 'boolean' },
      /** How the agent ended the conversation (`agent_hangup`, `transfer`), set before the provider ends the call. */
      agentEnded: { type: ['agent_hangup', 'transfer'] as const },
      transferTo: { type: 'string' },
      /**
       * Answering-machine detection asked of the provider at the dial (an outbound call of an agent with
       * `voicemail`): what to do on a machine, and the message (parameters filled) for leave_message.
       */
      voicemailAction: { type: ['hangup', 'leave_message'] as const },
      voicemailMessage: { type: 'string' },
      /** The detection's result, set once by the AMD callback (amd.ts); absent: not known. */
      answeredBy: { type: ['human', 'machine', 'unknown'] as const },
      /** The voicemail message was handed to the provider to say (relay-ended.ts). */
      voicemailMessageLeft: { type: 'boolean' },
      /**
       * A transfer's details (the agent's `transfer` setting when it ran): warm ones carry the summary
       * written when the model called transfer_call and the whisper the person hears; `status` once the
       * dial ended.
       */
      transfer: {
        type: 'map',
        properties: {
          mode: { type: ['cold', 'warm'] as const, required: true },
          to: { type: 'string', required: true },
          summary: { type: 'string' },
          whisper: { type: 'string' },
          status: { type: ['connected', 'no_answer', 'busy', 'failed'] as const },
        },
      },
      /**
       * A warm transfer's whisper as the person hears it, when the call's PII redaction stores
       * `transfer.whisper` with tokens: the real values, kept only until the dial ends (its outcome
       * recorded, or the call's end), never returned by the API or sent on.
       */
      liveWhisper: { type: 'string' },
      /** The conversation's tool calls, latency and incidents (conversation/), JSON, written when it ends. */
      conversation: { type: 'string' },
      /** The day (workspace time zone) the call is counted in by the analytics counters; set once, when counted. */
      statsDay: { type: 'string' },
      /**
       * The workspace's time zone when the call was created, read with the rest then: the day it is
       * counted in (call-stats.ts) without reading the workspace again. Absent on older calls.
       */
      statsTimezone: { type: 'string' },
      updatedAt: { type: 'string' },
    },
    indexes: {
      byWorkspace: primaryIndex(
        ['workspaceId', 'callShard'],
        'WS#${workspaceId}#CALLS#${callShard}',
        ['callId'],
        'CALL#${callId}',
      ),
      /** Sharded as the calls are (an agent's calls are as busy as its workspace's): merged on read. */
      byAgent: gsi1(
        ['workspaceId', 'agentId', 'callShard'],
        'WS#${workspaceId}#AGENT#${agentId}#CALLS#${callShard}',
        ['callId'],
        '${callId}',
      ),
      /** Sparse: a call without another party (a test chat) is not in it. */
      byRemotePhone: {
        ...gsi2(
          ['workspaceId', 'remotePhone'],
          'WS#${workspaceId}#PHONE#${remotePhone}#CALLS',
          ['callId'],
          '${callId}',
        ),
        condition: (attr: Record<string, unknown>) => attr.remotePhone !== NO_REMOTE_PHONE,
      },
    },
  },
  cfg,
);

export const CallStatusEventEntity = new Entity(
  {
    model: { entity: 'callStatusEvent', version: '1', service: 'va' },
    attributes: {
      callId: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
      rank: { type: 'number', required: true },
      status: { type: INTERNAL_STATUSES, required: true },
      /** When it happened (the provider's time when it gave one). */
      at: { type: 'string', required: true },
      endReason: { type: END_REASONS },
      /** Who moved the call: api, provider, dispatcher, hangup, sweeper. */
      source: { type: 'string', required: true },
      recordedAt: { type: 'string', required: true },
    },
    indexes: {
      byCall: primaryIndex(['callId'], 'CALL#${callId}', ['rank', 'status'], 'STATUS#${rank}#${status}'),
    },
  },
  cfg,
);

export const OpenCallEntity = new Entity(
  {
    model: { entity: 'openCall', version: '1', service: 'va' },
    attributes: {
      shard: { type: 'number', required: true },
      createdAt: { type: 'string', required: true },
      callId: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
    },
    indexes: {
      byShard: primaryIndex(
        ['shard'],
        'OPENCALLS#${shard}',
        ['createdAt', 'callId'],
        '${createdAt}#${callId}',
      ),
    },
  },
  cfg,
);

export const ProviderCallEntity = new Entity(
  {
    model: { entity: 'providerCall', version: '1', service: 'va' },
    attributes: {
      provider: { type: ['simulator', 'twilio'] as const, required: true },
      providerCallId: { type: 'string', required: true },
      callId: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
      /** The TwiML we answered an inbound call with (a repeated webhook gets the same answer). */
      twiml: { type: 'string' },
    },
    indexes: {
      byProviderId: primaryIndex(
        ['provider', 'providerCallId'],
        'PROVIDERCALL#${provider}#${providerCallId}',
        [],
        'CALL',
      ),
    },
  },
  cfg,
);

/** A recording's short code → its call (the public recording page). Created once, with the recording. */
export const RecordingLinkEntity = new Entity(
  {
    model: { entity: 'recordingLink', version: '1', service: 'va' },
    attributes: {
      shortCode: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
      callId: { type: 'string', required: true },
      createdAt: { type: 'string', required: true },
    },
    indexes: {
      byCode: primaryIndex(['shortCode'], 'SHORTCODE#${shortCode}', [], 'RECORDING'),
    },
  },
  cfg,
);

/** The counters of calls per status, kept on write (call-stats.ts); one set per status. */
export const STATS_STATUSES = ['completed', 'failed'] as const;
export type StatsStatus = (typeof STATS_STATUSES)[number];
export const STATS_MEASURES = [
  'Calls',
  'Answered',
  'Seconds',
  'Units',
  'Positive',
  'Neutral',
  'Negative',
  /** Calls with a post-call analysis, and those whose analysis says `call_successful`. */
  'Analysed',
  'Successful',
  /** Calls whose conversation handed the caller to another agent (at least once). */
  'Handoffs',
] as const;
export type StatsMeasure = (typeof STATS_MEASURES)[number];
export type StatsCounter = `${StatsStatus}${StatsMeasure}`;
const counter = { type: 'number' } as const;

/**
 * Call analytics counters, kept on write (call-stats.ts): per workspace and day (`DAY#<day>`) and per
 * workspace, day and agent (`DAY#<day>#AGENT#<agent>`), so any range of days is one Query a shard.
 * Each is spread over CALL_SHARDS partition keys (a call adds to its own shard's, call-shards.ts) and
 * summed on read: one key took ~9 writes a call, over its partition's budget at 100 calls a second in
 * one workspace (docs/scale.md). Counters written before are at `WS#<ws>#CALLSTATS` (the legacy key,
 * read with the shards).
 */
export const CallStatsEntity = new Entity(
  {
    model: { entity: 'callStats', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      statsShard: { type: 'number', required: true },
      statKey: { type: 'string', required: true },
      day: { type: 'string' },
      agentId: { type: 'string' },
      /** On an agent version's day (`DAY#<day>#AGENT#<ag>#VERSION#<n>`): the version. */
      agentVersion: { type: 'number' },
      completedCalls: counter,
      completedAnswered: counter,
      completedSeconds: counter,
      completedUnits: counter,
      completedPositive: counter,
      completedNeutral: counter,
      completedNegative: counter,
      failedCalls: counter,
      failedAnswered: counter,
      failedSeconds: counter,
      failedUnits: counter,
      failedPositive: counter,
      failedNeutral: counter,
      failedNegative: counter,
      completedAnalysed: counter,
      completedSuccessful: counter,
      failedAnalysed: counter,
      failedSuccessful: counter,
      completedHandoffs: counter,
      failedHandoffs: counter,
      /** Turn latency buckets (latency-histogram.ts: bucket i counts turns of at most its bound). */
      turnLatency00: counter,
      turnLatency01: counter,
      turnLatency02: counter,
      turnLatency03: counter,
      turnLatency04: counter,
      turnLatency05: counter,
      turnLatency06: counter,
      turnLatency07: counter,
      turnLatency08: counter,
      turnLatency09: counter,
      turnLatency10: counter,
      turnLatency11: counter,
      turnLatency12: counter,
      turnLatency13: counter,
      turnLatency14: counter,
      turnLatency15: counter,
      turnLatency16: counter,
      turnLatency17: counter,
      turnLatency18: counter,
      turnLatency19: counter,
      turnLatency20: counter,
      turnLatency21: counter,
    },
    indexes: {
      byWorkspace: primaryIndex(
        ['workspaceId', 'statsShard'],
        'WS#${workspaceId}#CALLSTATS#${statsShard}',
        ['statKey'],
        '${statKey}',
      ),
    },
  },
  cfg,
);

/**
 * Everything a call is read and written with in one batch or transaction (inbound calls, the
 * lifecycle; start-call writes the same items plainly: start-call-items.ts, held to these).
 */
export const callingService = new Service(
  {
    workspace: WorkspaceEntity,
    workspaceMember: WorkspaceMemberEntity,
    orgMember: OrgMemberEntity,
    billingAccount: BillingAccountEntity,
    agent: AgentEntity,
    phoneClaim: PhoneClaimEntity,
    call: CallEntity,
    callStatusEvent: CallStatusEventEntity,
    openCall: OpenCallEntity,
    providerCall: ProviderCallEntity,
    recordingLink: RecordingLinkEntity,
    callStats: CallStatsEntity,
    idempotencyKey: IdempotencyEntity,
  },
  cfg,
);

export type Call = EntityItem<typeof CallEntity>;
export type CallStatusEvent = EntityItem<typeof CallStatusEventEntity>;
