import * as z from 'zod';
import { freeText, labelText } from '../platform/validation.js';
import { PII_CATEGORIES } from '../platform/pii/categories.js';
import { callParameters } from './parameters.js';
import { isTimeZone } from '../platform/time-zones.js';
import { isId } from '../platform/ids.js';
import { pageOf } from '../platform/pagination.js';
import {
  AMBIENT_NOISE,
  ANALYSIS_FIELD_TYPES,
  EXPRESSIVENESS,
  MAX_ANALYSIS_FIELDS,
  POST_CALL_ACTION_TYPES,
  SPEECH_SPEEDS,
} from './entities.js';
import { schemaOnFirstUse } from '../platform/first-use.js';
import { ToolResponse, ToolsInput } from './tools-schema.js';
import { HANDOFF_CONTEXTS, MAX_HANDOFFS } from './handoffs.js';

/**
 * Request and response shapes of the agent routes (docs/api.md "Agent fields" and "PostCallAction").
 * Bodies are strict: unknown fields are 422 `extra_forbidden`, and nothing changes.
 */

export const MAX_POST_CALL_ACTIONS = 10;
export const MIN_MAX_DURATION_SECONDS = 30;
export const MAX_MAX_DURATION_SECONDS = 4 * 3600;
const MAX_ACTION_CONFIG_BYTES = 4096;

export const SettingsInput = schemaOnFirstUse(() =>
  z.strictObject({
    speech_speed: z.enum(SPEECH_SPEEDS).optional(),
    expressiveness: z.enum(EXPRESSIVENESS).optional(),
    ambient_noise: z.enum(AMBIENT_NOISE).optional().meta({
      description:
        "Kept for your own records, not played: Twilio ConversationRelay has no background-sound parameter (a play is part of the agent's speech, not an ambience).",
    }),
    call_recording: z.boolean().optional(),
    interruptible: z.boolean().optional(),
    caller_growth_loop: z.boolean().optional(),
    /** Give the runtime the summaries of the contact's earlier calls (+5 credits per call minute when used). */
    conversation_memories: z.boolean().optional(),
    timezone: z
      .string()
      .max(64)
      .refine(isTimeZone, { message: 'timezone must be an IANA time zone name' })
      .optional(),
    specialised_terms: z.array(labelText().min(1).max(100)).max(200).optional(),
    /** The provider ends a call after this; the sweeper fails a call still open well past it. */
    max_duration_seconds: z
      .number()
      .int()
      .min(MIN_MAX_DURATION_SECONDS)
      .max(MAX_MAX_DURATION_SECONDS)
      .optional(),
  }),
);
export type SettingsInput = z.infer<typeof SettingsInput>;

/** A webhook action's URL: http(s); https only in the cloud. */
function webhookUrlProblem(url: unknown): string | undefined {
  if (typeof url !== 'string' || url.length > 2048) return 'config.url must be a URL';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'config.url must be a URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'config.url must be an http(s) URL';
  if (process.env.STAGE === 'cloud' && parsed.protocol !== 'https:') return 'config.url must be an https URL';
  return undefined;
}

export const PostCallActionInput = schemaOnFirstUse(() =>
  z
    .strictObject({
      /** Assigned by the server when absent. */
      id: z
        .string()
        .refine((id) => isId('action', id), { message: 'id must be an action id (act_…)' })
        .optional(),
      type: z.enum(POST_CALL_ACTION_TYPES),
      enabled: z.boolean().default(true),
      config: z.record(z.string(), z.unknown()).default({}),
    })
    .superRefine((action, ctx) => {
      if (action.type === 'webhook') {
        const extra = Object.keys(action.config).filter((key) => key !== 'url');
        for (const key of extra) {
          ctx.addIssue({ code: 'unrecognized_keys', keys: [key], path: ['config'], input: action.config });
        }
        const problem = webhookUrlProblem(action.config.url);
        if (problem)
          ctx.addIssue({
            code: 'custom',
            path: ['config', 'url'],
            message: problem,
            input: action.config.url,
          });
      }
      if (JSON.stringify(action.config).length > MAX_ACTION_CONFIG_BYTES) {
        ctx.addIssue({
          code: 'custom',
          path: ['config'],
          message: `config must be at most ${MAX_ACTION_CONFIG_BYTES} bytes of JSON`,
          input: action.config,
        });
      }
    }),
);
export type PostCallActionInput = z.infer<typeof PostCallActionInput>;

const PostCallActions = schemaOnFirstUse(() =>
  z
    .array(PostCallActionInput)
    .max(MAX_POST_CALL_ACTIONS)
    .refine(
      (actions) => {
        const ids = actions.map((a) => a.id).filter((id): id is string => id !== undefined);
        return new Set(ids).size === ids.length;
      },
      { message: 'each action id may appear once' },
    ),
);

const name = () => labelText().min(1).max(100);
const prompt = () => freeText().max(20_000);
/** The knowledge bases the agent searches (ids of the workspace's bases; the handler checks they exist). */
export const MAX_KNOWLEDGE_BASES = 20;
const knowledgeBaseIds = () =>
  z
    .array(z.string().trim().min(1).max(64))
    .max(MAX_KNOWLEDGE_BASES)
    .refine((ids) => new Set(ids).size === ids.length, { message: 'each knowledge base may appear once' });
/** The agents a call may be handed over to (agents/handoffs.ts; the handler checks they exist). */
const handoffs = () =>
  z
    .array(
      z.strictObject({
        agent_id: z.string().trim().min(1).max(64),
        /** When to hand over, in words: the model reads it in the tool's description. */
        description: freeText().trim().min(1).max(500),
        /** The history the target gets: the words so far, only the note, or nothing. */
        context: z.enum(HANDOFF_CONTEXTS).default('full'),
      }),
    )
    .max(MAX_HANDOFFS)
    .refine((list) => new Set(list.map((h) => h.agent_id)).size === list.length, {
      message: 'each agent may appear once',
    })
    .meta({
      examples: [
        [
          {
            agent_id: 'agent_01JBX8S2C6V0Q4M9E7R3T5Y1ZA',
            description: 'The caller wants to buy, or asks about a listing price or sale',
            context: 'full',
          },
        ],
      ],
    });
const greeting = () => freeText().max(1_000);
/** BCP 47 (language, optional script and region): what the relay hears and speaks. */
const language = () =>
  z
    .string()
    .regex(/^[a-z]{2,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|\d{3}))?$/, 'a BCP 47 language tag, e.g. en-AU')
    .meta({ examples: ['en-AU'] });
const voice = () =>
  z
    .string()
    .trim()
    .min(1)
    .max(200)
    .regex(/^[\w.:-]+$/, 'a voice id')
    .meta({ examples: ['UgBBYS2sOqTuMpoF3BR0'] });
const transferPhoneNumber = () =>
  z
    .string()
    .regex(/^\+[1-9]\d{6,14}$/, 'an E.164 phone number, e.g. +61291234567')
    .meta({ examples: ['+61291234567'] });

/** Answering-machine detection of the agent's outbound calls (docs/voice-runtime.md "Voicemail"). */
export const VoicemailInput = schemaOnFirstUse(() =>
  z
    .strictObject({
      /** Default true once the field is set. */
      detection: z.boolean().default(true),
      action: z.enum(['hangup', 'leave_message']).default('hangup'),
      /** What is said after the beep (`{{parameters}}` filled); required for leave_message. */
      message: freeText().trim().min(1).max(1_000).optional(),
    })
    .superRefine((value, ctx) => {
      if (value.action === 'leave_message' && !value.message)
        ctx.addIssue({
          code: 'custom',
          path: ['message'],
          message: 'message is required for leave_message',
          input: value,
        });
    })
    .meta({
      examples: [{ detection: true, action: 'leave_message', message: 'Hi {{name}}, please call us back.' }],
    }),
);

/** Where `transfer_call` hands the caller, and how (docs/voice-runtime.md "Transfers"). */
export const TransferInput = schemaOnFirstUse(() =>
  z
    .strictObject({
      phone_number: transferPhoneNumber(),
      mode: z.enum(['cold', 'warm']).default('cold'),
      /** Warm: what the person hears first (`{{summary}}` and parameters filled); default: the summary. */
      whisper: freeText().trim().min(1).max(500).optional(),
    })
    .meta({
      examples: [{ phone_number: '+61291234567', mode: 'warm', whisper: 'Incoming call: {{summary}}' }],
    }),
);

/** One value post-call analysis extracts from each call (docs/api.md "AnalysisField"). */
export const AnalysisFieldInput = schemaOnFirstUse(() =>
  z
    .strictObject({
      name: z
        .string()
        .regex(
          /^[a-z][a-z0-9_]{0,39}$/,
          'a lower-case name: a letter, then letters, digits or _ (at most 40)',
        )
        .meta({ example: 'budget' }),
      type: z.enum(ANALYSIS_FIELD_TYPES),
      /** What the value is, in words: the model reads it. */
      description: z.string().trim().min(1).max(500),
      /** The allowed values of an `enum` field (required for it, not allowed for the others). */
      enum_values: z.array(z.string().trim().min(1).max(100)).min(1).max(50).optional(),
    })
    .superRefine((field, ctx) => {
      if (field.type === 'enum' && !field.enum_values)
        ctx.addIssue({
          code: 'custom',
          path: ['enum_values'],
          message: 'enum_values is required for an enum field',
          input: field,
        });
      if (field.type !== 'enum' && field.enum_values)
        ctx.addIssue({
          code: 'custom',
          path: ['enum_values'],
          message: 'enum_values is only for an enum field',
          input: field,
        });
      if (field.enum_values && new Set(field.enum_values).size !== field.enum_values.length)
        ctx.addIssue({
          code: 'custom',
          path: ['enum_values'],
          message: 'each enum value may appear once',
          input: field,
        });
    }),
);
export type AnalysisFieldInput = z.infer<typeof AnalysisFieldInput>;

const analysisFields = () =>
  z
    .array(AnalysisFieldInput)
    .max(MAX_ANALYSIS_FIELDS)
    .refine((fields) => new Set(fields.map((f) => f.name)).size === fields.length, {
      message: 'each analysis field name may appear once',
    })
    .meta({
      examples: [
        [
          { name: 'budget', type: 'number', description: 'The budget the caller named, in dollars' },
          {
            name: 'buyer_stage',
            type: 'enum',
            description: 'How far along the caller is',
            enum_values: ['browsing', 'ready_to_buy'],
          },
        ],
      ],
    });
const successCriteria = () =>
  z
    .string()
    .trim()
    .max(2_000)
    .meta({ examples: ['The caller booked an inspection or asked for a follow-up call'] });

/** PII redaction before storage (docs/api.md "PII redaction before storage"). */
const PiiRedactionInput = z
  .strictObject({
    enabled: z.boolean(),
    /** Default: every category. */
    categories: z
      .array(z.enum(PII_CATEGORIES))
      .min(1)
      .refine((list) => new Set(list).size === list.length, { message: 'each category may appear once' })
      .optional(),
    /** `drop`: the recording is deleted once post-call analysis is done. Default `keep`. */
    recordings: z.enum(['keep', 'drop']).optional(),
  })
  .meta({ examples: [{ enabled: true, categories: ['email', 'credit_card'], recordings: 'keep' }] });

export const CreateAgentBody = schemaOnFirstUse(() =>
  z.strictObject({
    name: name(),
    prompt: prompt().default(''),
    greeting: greeting().default(''),
    answering_calls: z.boolean().default(true),
    settings: SettingsInput.optional(),
    post_call_actions: PostCallActions.optional(),
    knowledge_base_ids: knowledgeBaseIds().optional(),
    language: language().optional(),
    voice: voice().nullable().optional(),
    transfer_phone_number: transferPhoneNumber().nullable().optional(),
    /** Answering-machine detection of outbound calls; absent or null: not checked. */
    voicemail: VoicemailInput.nullable().optional(),
    /** The transfer (cold or warm); wins over transfer_phone_number. */
    transfer: TransferInput.nullable().optional(),
    /** What post-call analysis extracts from each call (at most 20). */
    analysis_fields: analysisFields().optional(),
    /** What makes a call successful (post-call analysis judges it); absent: the agent's goal. */
    success_criteria: successCriteria().nullable().optional(),
    /** PII redaction before storage; absent or null: off. */
    pii_redaction: PiiRedactionInput.nullable().optional(),
    /** Function tools and MCP servers the model may call (at most 20; docs/api.md "Agent tools"). */
    tools: ToolsInput.optional(),
    /** Agents of the workspace a call may be handed over to (at most 10; not the agent itself). */
    handoffs: handoffs().optional(),
  }),
);
export type CreateAgentBody = z.input<typeof CreateAgentBody>;

export const UpdateAgentBody = schemaOnFirstUse(() =>
  z.strictObject({
    name: name().optional(),
    prompt: prompt().optional(),
    greeting: greeting().optional(),
    answering_calls: z.boolean().optional(),
    /** Merged into the current settings. */
    settings: SettingsInput.optional(),
    /** Replaces the whole list (actions keep their ids when sent back with them). */
    post_call_actions: PostCallActions.optional(),
    /** Replaces the whole list. */
    knowledge_base_ids: knowledgeBaseIds().optional(),
    language: language().optional(),
    /** null: the provider's default voice. */
    voice: voice().nullable().optional(),
    /** null: the agent cannot transfer calls. */
    transfer_phone_number: transferPhoneNumber().nullable().optional(),
    /** Replaces the whole setting; null: not checked. */
    voicemail: VoicemailInput.nullable().optional(),
    /** Replaces the whole setting; null: none (transfer_phone_number, if set, is still a cold transfer). */
    transfer: TransferInput.nullable().optional(),
    /** Replaces the whole list. */
    analysis_fields: analysisFields().optional(),
    /** null: the agent's goal (its prompt) is the measure. */
    success_criteria: successCriteria().nullable().optional(),
    /** Replaces the whole setting; null: off. Applies to calls created after it (a new version). */
    pii_redaction: PiiRedactionInput.nullable().optional(),
    /** Replaces the whole list; a header value sent back as its mask keeps the stored value. */
    tools: ToolsInput.optional(),
    /** Replaces the whole list ([]: no handoffs). */
    handoffs: handoffs().optional(),
  }),
);
export type UpdateAgentBody = z.infer<typeof UpdateAgentBody>;

// ── Responses ─────────────────────────────────────────────────────────────────────────────────────

export const PostCallActionResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    type: z.enum(POST_CALL_ACTION_TYPES),
    enabled: z.boolean(),
    config: z.record(z.string(), z.unknown()),
  }),
);

export const AgentResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    workspace_id: z.string(),
    name: z.string(),
    prompt: z.string(),
    greeting: z.string(),
    answering_calls: z.boolean(),
    /** Off because the organisation's Free plan ran out of credits (billing turns it back on). */
    suspended_by_billing: z.boolean(),
    phone_number: z.string().nullable(),
    phone_number_id: z.string().nullable(),
    settings: z.object({
      speech_speed: z.enum(SPEECH_SPEEDS),
      expressiveness: z.enum(EXPRESSIVENESS),
      ambient_noise: z.enum(AMBIENT_NOISE).meta({
        description:
          'Not played: Twilio ConversationRelay has no background-sound parameter (kept for your records).',
      }),
      call_recording: z.boolean(),
      interruptible: z.boolean(),
      caller_growth_loop: z.boolean(),
      conversation_memories: z.boolean(),
      timezone: z.string(),
      specialised_terms: z.array(z.string()),
      max_duration_seconds: z.number().int(),
    }),
    post_call_actions: z.array(PostCallActionResponse),
    knowledge_base_ids: z.array(z.string()),
    /** BCP 47: the language the agent hears and speaks. */
    language: z.string().meta({ examples: ['en-AU'] }),
    /** The text-to-speech voice id; null: the provider's default. */
    voice: z
      .string()
      .nullable()
      .meta({ examples: ['UgBBYS2sOqTuMpoF3BR0'] }),
    /** Where the agent's `transfer_call` tool hands the caller; null: it cannot transfer. */
    transfer_phone_number: z
      .string()
      .nullable()
      .meta({ examples: ['+61291234567'] }),
    /** Answering-machine detection of outbound calls; null: not checked. */
    voicemail: z
      .object({
        detection: z.boolean(),
        action: z.enum(['hangup', 'leave_message']),
        message: z.string().nullable(),
      })
      .nullable(),
    /** How `transfer_call` hands the caller over; null: no transfer set (or only transfer_phone_number). */
    transfer: z
      .object({
        phone_number: z.string(),
        mode: z.enum(['cold', 'warm']),
        whisper: z.string().nullable(),
      })
      .nullable(),
    /** What post-call analysis extracts from each call (the call's `analysis.custom`). */
    analysis_fields: z
      .array(
        z.object({
          name: z.string(),
          type: z.enum(ANALYSIS_FIELD_TYPES),
          description: z.string(),
          enum_values: z.array(z.string()).optional(),
        }),
      )
      .meta({
        examples: [
          [
            { name: 'budget', type: 'number', description: 'The budget the caller named, in dollars' },
            {
              name: 'buyer_stage',
              type: 'enum',
              description: 'How far along the caller is',
              enum_values: ['browsing', 'ready_to_buy'],
            },
          ],
        ],
      }),
    /** What makes a call successful; null: the agent's goal (its prompt). */
    success_criteria: z
      .string()
      .nullable()
      .meta({ examples: ['The caller booked an inspection or asked for a follow-up call'] }),
    /** PII redaction before storage (off: `enabled` false). */
    pii_redaction: z.object({
      enabled: z.boolean(),
      categories: z.array(z.enum(PII_CATEGORIES)),
      recordings: z.enum(['keep', 'drop']),
    }),
    /** Function tools and MCP servers; header values are masked (`••••` and the last 4 characters). */
    tools: z.array(ToolResponse),
    /**
     * The agents a call may be handed over to (the built-in tool `handoff_to_agent`): each target, when
     * to hand over, and the history it gets (`full`: the words so far; `summary`: only the note; `none`).
     */
    handoffs: z.array(
      z.object({
        agent_id: z.string(),
        description: z.string(),
        context: z.enum(HANDOFF_CONTEXTS),
      }),
    ),
    /**
     * The agent's current version (1 at creation, one more at each change of its own fields); null for
     * an agent made before versions existed and not changed since.
     */
    version: z
      .number()
      .int()
      .nullable()
      .meta({ examples: [3] }),
    created_by: z.string(),
    created_at: z.string(),
    updated_at: z.string().nullable(),
  }),
);

export const AgentList = pageOf(AgentResponse);

/** One of an agent's versions in its list. */
export const AgentVersionSummaryResponse = schemaOnFirstUse(() =>
  z.object({
    agent_id: z.string(),
    version: z
      .number()
      .int()
      .meta({ examples: [2] }),
    created_at: z.string(),
    /** Who made the change: a user id, an API key id, or `system`. */
    created_by: z.string(),
    /** The fields that differ from the version before, by their names in the agent (every field for version 1). */
    changed: z.array(z.string()).meta({ examples: [['greeting', 'prompt']] }),
    /** A restore's version: the version it restored; null for a create's or a PATCH's. */
    restored_from: z
      .number()
      .int()
      .nullable()
      .meta({ examples: [null] }),
  }),
);

export const AgentVersionList = pageOf(AgentVersionSummaryResponse);

/**
 * One version: the agent as it was (`agent`: the agent's fields then; `answering_calls` and the
 * phone number are not part of a version and show the agent's now).
 */
export const AgentVersionResponse = schemaOnFirstUse(() =>
  AgentVersionSummaryResponse.unwrap().extend({ agent: AgentResponse }),
);

// ── The test chat's ticket (test-chat.ts) ─────────────────────────────────────────────────────────

export const TestChatBody = schemaOnFirstUse(() =>
  z.strictObject({
    /** Filled into the agent's prompt and greeting as for a phone call's; the call's `parameters`. */
    parameters: callParameters()
      .nullish()
      .meta({ examples: [{ name: 'Sam', listing_address: '12 Beach Road, Manly' }] }),
    /** Run the agent's post-call actions when the chat ends (default: analysis only). */
    run_post_call_actions: z.boolean().nullish(),
    /**
     * Chat with this version of the agent (`GET …/agents/{agent_id}/versions`) instead of its current one;
     * 404 `Agent version not found` when the agent has no such version.
     */
    agent_version: z
      .number()
      .int()
      .min(1)
      .max(9_999_999_999)
      .nullish()
      .meta({ examples: [2] }),
  }),
);

export const TestChatTicketResponse = schemaOnFirstUse(() =>
  z.object({
    /** Open `relay_url` with `?channel=web&ticket=<ticket>` within `expires_at`; it works once. */
    ticket: z.string(),
    relay_url: z.string(),
    expires_at: z.string(),
  }),
);
