import type { EntityItem } from 'electrodb';
import { Entity, Service } from '../platform/entity.js';
import { entityConfig } from '../platform/table.js';
import { primaryIndex, gsi1 } from '../platform/keys.js';

/**
 * Agents. Access patterns:
 *   agent in workspace     pk WS#<ws>                sk AGENT#<ag>     (get, update, delete; list a workspace's agents)
 *   agents of organisation gsi1 ORG#<org>#AGENTS     <ag>              (switch every agent of an organisation on/off)
 * `phoneNumberId`/`phoneNumber` mirror the connected number; they change only in the same transaction
 * as the number's own record (functions/numbers), so start-call reads the agent's number with the agent.
 */
const cfg = entityConfig();

/** A call's length when the agent sets none (its settings' `max_duration_seconds`). */
export const DEFAULT_MAX_DURATION_SECONDS = 3600;

export const SPEECH_SPEEDS = ['slow', 'medium', 'fast'] as const;
export const EXPRESSIVENESS = ['natural', 'expressive', 'low'] as const;
export const AMBIENT_NOISE = ['none', 'office'] as const;
export const POST_CALL_ACTION_TYPES = [
  'sms_owner',
  'sms_caller',
  'email_summary',
  'webhook',
  'contact_update',
  'profile_enrichment',
] as const;
export type PostCallActionType = (typeof POST_CALL_ACTION_TYPES)[number];

export const ANALYSIS_FIELD_TYPES = ['string', 'number', 'boolean', 'enum'] as const;
export type AnalysisFieldType = (typeof ANALYSIS_FIELD_TYPES)[number];
export const MAX_ANALYSIS_FIELDS = 20;

/** The language of an agent that names none. */
export const DEFAULT_AGENT_LANGUAGE = 'en-AU';

export const AgentEntity = new Entity(
  {
    model: { entity: 'agent', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      agentId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      name: { type: 'string', required: true },
      prompt: { type: 'string', required: true, default: '' },
      greeting: { type: 'string', required: true, default: '' },
      /** The "Answering calls" switch as the user set it. */
      answeringCalls: { type: 'boolean', required: true, default: true },
      settings: {
        type: 'map',
        required: true,
        properties: {
          speechSpeed: { type: SPEECH_SPEEDS, required: true },
          expressiveness: { type: EXPRESSIVENESS, required: true },
          ambientNoise: { type: AMBIENT_NOISE, required: true },
          callRecording: { type: 'boolean', required: true },
          interruptible: { type: 'boolean', required: true },
          callerGrowthLoop: { type: 'boolean', required: true },
          /** Absent on agents made before it existed: off. */
          conversationMemories: { type: 'boolean' },
          timezone: { type: 'string', required: true },
          specialisedTerms: { type: 'list', items: { type: 'string' }, required: true },
          maxDurationSeconds: { type: 'number', required: true },
        },
      },
      /** BCP 47: what the caller speaks and hears (speech-to-text and text-to-speech). Absent: en-AU. */
      language: { type: 'string' },
      /** The text-to-speech voice (the provider's voice id); absent: the provider's default. */
      voice: { type: 'string' },
      /** Where `transfer_call` hands the caller (E.164); absent: the agent cannot transfer. */
      transferPhoneNumber: { type: 'string' },
      /**
       * Answering-machine detection of outbound calls (`voicemail`): absent, the agent's calls are not
       * checked. `message` (leave_message) has `{{parameters}}`, filled per call.
       */
      voicemail: {
        type: 'map',
        properties: {
          detection: { type: 'boolean', required: true },
          action: { type: ['hangup', 'leave_message'] as const, required: true },
          message: { type: 'string' },
        },
      },
      /** The transfer (`transfer`): cold or warm; absent: `transferPhoneNumber` (cold) if set. */
      transfer: {
        type: 'map',
        properties: {
          phoneNumber: { type: 'string', required: true },
          mode: { type: ['cold', 'warm'] as const, required: true },
          whisper: { type: 'string' },
        },
      },
      /**
       * PII redaction before storage (`pii_redaction`): absent, off. `categories` absent: all of them
       * (platform/pii/categories.ts); `recordings` absent: keep.
       */
      piiRedaction: {
        type: 'map',
        properties: {
          enabled: { type: 'boolean', required: true },
          categories: { type: 'list', items: { type: 'string' } },
          recordings: { type: ['keep', 'drop'] as const },
        },
      },
      /** What post-call analysis extracts from each call (`analysis_fields`); absent: none. */
      analysisFields: {
        type: 'list',
        items: {
          type: 'map',
          properties: {
            name: { type: 'string', required: true },
            type: { type: ANALYSIS_FIELD_TYPES, required: true },
            description: { type: 'string', required: true },
            enumValues: { type: 'list', items: { type: 'string' } },
          },
        },
      },
      /** What makes a call successful, judged by post-call analysis; absent: the agent's goal (its prompt). */
      successCriteria: { type: 'string' },
      /** The knowledge bases the agent searches (`kb_…` of its workspace). */
      knowledgeBaseIds: { type: 'list', items: { type: 'string' } },
      /**
       * The agents of the workspace it may hand a call over to (`handoffs`, agents/handoffs.ts): each
       * with when to hand over and the history the target gets. Absent: none (the conversation engine
       * offers `handoff_to_agent` only when there are targets).
       */
      handoffs: {
        type: 'list',
        items: {
          type: 'map',
          properties: {
            agentId: { type: 'string', required: true },
            description: { type: 'string', required: true },
            context: { type: ['full', 'summary', 'none'] as const, required: true },
          },
        },
      },
      postCallActions: {
        type: 'list',
        required: true,
        default: () => [],
        items: {
          type: 'map',
          properties: {
            actionId: { type: 'string', required: true },
            type: { type: POST_CALL_ACTION_TYPES, required: true },
            enabled: { type: 'boolean', required: true },
            config: { type: 'any' },
          },
        },
      },
      /** Function tools and MCP servers (agents/tool-definitions.ts `StoredTool[]`); absent: none. */
      tools: { type: 'any' },
      /** Sealed header values of the tools by id (`tsec_…` → `StoredToolSecret`, agents/tool-secrets.ts). */
      toolSecrets: { type: 'any' },
      phoneNumberId: { type: 'string' },
      phoneNumber: { type: 'string' },
      /**
       * The agent's current version (agents/versions.ts): 1 at creation, one more at each change of its
       * own fields, written with its version item in one transaction conditioned on the version read.
       * Absent on agents made before versions existed (their first change makes version 1).
       */
      version: { type: 'number' },
      createdBy: { type: 'string', required: true },
      createdAt: { type: 'string', required: true },
      updatedAt: { type: 'string' },
    },
    indexes: {
      byWorkspace: primaryIndex(['workspaceId'], 'WS#${workspaceId}', ['agentId'], 'AGENT#${agentId}'),
      byOrganisation: gsi1(['organisationId'], 'ORG#${organisationId}#AGENTS', ['agentId'], '${agentId}'),
    },
  },
  cfg,
);

export type Agent = EntityItem<typeof AgentEntity>;
export type AgentSettings = Agent['settings'];

/**
 * An agent's versions, immutable once written (agents/versions.ts). Access patterns:
 *   agent version  pk WS#<ws>#AGENT#<ag>  sk VERSION#<n, 10 digits>  (get one; an agent's versions, newest first)
 * `agent` holds the agent's own fields as they were (camelCase, as the agent item has them; not its keys,
 * `answeringCalls`, the connected number, `toolSecrets` or bookkeeping): tools keep their header
 * secrets by reference (`tsec_…` ids into the agent item's `toolSecrets`, never copies).
 */
export const AgentVersionEntity = new Entity(
  {
    model: { entity: 'agentVersion', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      agentId: { type: 'string', required: true },
      version: { type: 'number', required: true, padding: { length: 10, char: '0' } },
      /** The agent's own fields as they were (see above). */
      agent: { type: 'any', required: true },
      /** The wire names of the fields that differ from the version before (all of them for version 1). */
      changed: { type: 'list', items: { type: 'string' }, required: true },
      /** A restore's version: the version it restored (absent on a create's or a PATCH's). */
      restoredFrom: { type: 'number' },
      createdBy: { type: 'string', required: true },
      createdAt: { type: 'string', required: true },
    },
    indexes: {
      byAgent: primaryIndex(
        ['workspaceId', 'agentId'],
        'WS#${workspaceId}#AGENT#${agentId}',
        ['version'],
        'VERSION#${version}',
      ),
    },
  },
  cfg,
);
export type AgentVersion = EntityItem<typeof AgentVersionEntity>;

/**
 * Runs of the tool test route counted per agent and minute (429 past TOOL_TESTS_PER_MINUTE):
 *   tool test window  pk AGENT#<ag>  sk TOOLTESTS#<window>   (an atomic ADD conditioned on the count; TTL)
 */
export const ToolTestWindowEntity = new Entity(
  {
    model: { entity: 'agentToolTestWindow', version: '1', service: 'va' },
    attributes: {
      agentId: { type: 'string', required: true },
      /** Epoch seconds of the window's start. */
      windowStart: { type: 'number', required: true },
      count: { type: 'number', required: true },
      /** Epoch seconds; DynamoDB's TTL removes the counter after its window. */
      expiresAt: { type: 'number', required: true, field: 'expires_at' },
    },
    indexes: {
      byWindow: primaryIndex(['agentId'], 'AGENT#${agentId}', ['windowStart'], 'TOOLTESTS#${windowStart}'),
    },
  },
  cfg,
);

/**
 * The dashboard's test-chat tickets (agents/test-chat.ts): bought by a member with their token, spent
 * once by the relay's upgrade (`?channel=web&ticket=…`), so no token travels in a URL.
 *   ticket  pk TESTCHAT#<sha256 of the ticket>  sk TICKET   (create; a conditional delete spends it; TTL)
 * Only the ticket's hash is stored. `expiresAt` is also checked by the spending delete's condition:
 * DynamoDB's TTL removes items late (and the local table never does).
 */
export const TestChatTicketEntity = new Entity(
  {
    model: { entity: 'testChatTicket', version: '1', service: 'va' },
    attributes: {
      ticketHash: { type: 'string', required: true },
      workspaceId: { type: 'string', required: true },
      organisationId: { type: 'string', required: true },
      agentId: { type: 'string', required: true },
      userId: { type: 'string', required: true },
      /** The chat's `parameters`, JSON (already held to start-call's rules). */
      parameters: { type: 'string', required: true },
      runPostCallActions: { type: 'boolean', required: true },
      /**
       * A browser voice call's ticket (calling/web-call.ts): the call it opens, created already. Absent
       * for a test chat, whose call is created when the ticket is spent.
       */
      callId: { type: 'string' },
      /** A test chat with an earlier version of the agent (absent: the version it is at when the chat opens). */
      agentVersion: { type: 'number' },
      createdAt: { type: 'string', required: true },
      /** Epoch seconds: the ticket is refused from then on; DynamoDB's TTL removes it later. */
      expiresAt: { type: 'number', required: true, field: 'expires_at' },
    },
    indexes: {
      byTicket: primaryIndex(['ticketHash'], 'TESTCHAT#${ticketHash}', [], 'TICKET'),
    },
  },
  cfg,
);
export type TestChatTicket = EntityItem<typeof TestChatTicketEntity>;

/** An agent's change and its version, written together (agents/service.ts). */
export const agentService = new Service({ agent: AgentEntity, agentVersion: AgentVersionEntity }, cfg);
