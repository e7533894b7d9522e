import * as z from 'zod';
import { ListQuery, pageOf } from '../platform/pagination.js';
import { isE164, toE164 } from '../platform/phone.js';
import { CALL_STATUSES, END_REASONS } from './status.js';
import { schemaOnFirstUse } from '../platform/first-use.js';
import { callParameters } from '../agents/parameters.js';

/**
 * Start-call exactly as docs/api.md (plus `id`, `agent_id`, `workspace_id` in the
 * response), and the call-log shapes. Bodies are strict: unknown fields are 422 `extra_forbidden`.
 */

export { MAX_PARAMETERS, MAX_PARAMETER_NAME, MAX_PARAMETER_VALUE } from '../agents/parameters.js';

const e164 = z.string().refine(isE164, { message: 'value is not a valid phone number in E.164 format' });

/** A call's `parameters`: the same rules for start-call, campaign rows and the test chat's ticket. */
const Parameters = schemaOnFirstUse(callParameters);

export const StartCallBody = schemaOnFirstUse(() =>
  z.strictObject({
    to_phone: e164,
    from_phone: e164.nullish(),
    record: z.boolean().nullish(),
    parameters: Parameters.nullish(),
    /**
     * Run this version of the agent (`GET …/agents/{agent_id}/versions`) instead of its current one;
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
export type StartCallBody = z.infer<typeof StartCallBody>;

export const CallCreateResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    agent_id: z.string(),
    workspace_id: z.string(),
    to_phone: z.string(),
    from_phone: z.string().nullable(),
    record: z.boolean().nullable(),
    created_by: z.string(),
    status: z.enum(CALL_STATUSES),
    created_at: z.string().nullable(),
    /** The agent's version the call runs (null for an agent made before versions and not changed since). */
    agent_version: z.number().int().nullable().optional(),
  }),
);
export type CallCreateResponse = z.infer<typeof CallCreateResponse>;

// ── Browser voice calls ───────────────────────────────────────────────────────────────────────────

export const WebCallBody = schemaOnFirstUse(() =>
  z.strictObject({
    /** Filled into the agent's prompt and greeting as for a phone call's; the call's `parameters`. */
    parameters: Parameters.nullish().meta({
      examples: [{ name: 'Sam', listing_address: '12 Beach Road, Manly' }],
    }),
    /** Run this version of the agent instead of its current one; 404 `Agent version not found` when it has none. */
    agent_version: z
      .number()
      .int()
      .min(1)
      .max(9_999_999_999)
      .nullish()
      .meta({ examples: [2] }),
    /** Run the agent's post-call actions when the call ends (default: analysis only). */
    run_post_call_actions: z.boolean().nullish(),
  }),
);
export type WebCallBody = z.infer<typeof WebCallBody>;

export const WebCallResponse = schemaOnFirstUse(() =>
  z.object({
    /** The call, created already (`channel: web`, status `created`). */
    call_id: z.string(),
    /** `twilio`: connect with `@twilio/voice-sdk` and `token`; `browser`: open `relay_url` with the ticket. */
    transport: z.enum(['twilio', 'browser']),
    /** Not connected by then (60 s), the call ends `failed`, `end_reason: not_connected`, unbilled. */
    expires_at: z.string(),
    /** `twilio`: a Twilio Access Token (JWT, 5 minutes) for `Device(token).connect()`. */
    token: z.string().optional(),
    /** `browser`: open `relay_url` with `?channel=web&ticket=<ticket>`; it works once. */
    ticket: z.string().optional(),
    /** `browser`: the relay's web route. */
    relay_url: z.string().optional(),
  }),
);
export type WebCallResponse = z.infer<typeof WebCallResponse>;

// ── Call log ───────────────────────────────────────────────────────────────────────────────────────

/** `2026-11-22` (the whole day) or an ISO 8601 date-time with offset. */
const DateBound = schemaOnFirstUse(() =>
  z
    .string()
    .max(40)
    .refine(
      (value) =>
        /^\d{4}-\d{2}-\d{2}$/.test(value)
          ? Number.isFinite(Date.parse(`${value}T00:00:00Z`))
          : /^\d{4}-\d{2}-\d{2}T/.test(value) && Number.isFinite(Date.parse(value)),
      {
        message: 'must be a date (YYYY-MM-DD) or an ISO 8601 date-time',
      },
    ),
);

/**
 * A phone number to filter by, normalised to E.164 (`+61 491 570 156` → `+61491570156`); a `+` sent
 * unencoded in a query string arrives as a space and is read as the `+`. Anything else is 422.
 */
const phoneFilter = () =>
  z
    .string()
    .max(40)
    .transform((value, ctx) => {
      const e164 = toE164(value.replace(/^ (?=\d)/, '+'));
      if (e164) return e164;
      ctx.addIssue({ code: 'custom', message: 'value is not a valid phone number in E.164 format' });
      return z.NEVER;
    })
    .meta({ examples: ['+61491570156'] });

export const ListCallsQuery = schemaOnFirstUse(() =>
  ListQuery.extend({
    status: z.enum(CALL_STATUSES).optional(),
    agent_id: z.string().max(64).optional(),
    direction: z.enum(['outbound', 'inbound']).optional(),
    /** Only the calls a batch outbound campaign placed. */
    campaign_id: z.string().max(64).optional(),
    /** Only the calls with this contact (to it, or from it): the contact's calls. */
    contact_id: z.string().max(64).optional(),
    /**
     * Only the calls with this number as the other party (`remote_phone`: the caller of an inbound
     * call, the called number of an outbound one), E.164; written with separators, it is normalised.
     */
    phone: phoneFilter().optional(),
    /** Calls created at or after this date (a date means its start, UTC). */
    from: DateBound.optional(),
    /** Calls created at or before this date (a date means its end, UTC). */
    to: DateBound.optional(),
    /** Only the calls that ended this way (`voicemail`, `transfer`, `agent_hangup`, …). */
    end_reason: z.enum(END_REASONS).optional(),
    /** `phone`, or `web` (the dashboard's test chat). */
    channel: z.enum(['phone', 'web']).optional(),
    /** Answering-machine detection's result, as a call shows it (`answered_by`). */
    answered_by: z.enum(['human', 'machine', 'unknown']).optional(),
    /** Only the calls that ran this version of their agent (with `agent_id`: that agent's). */
    agent_version: z.coerce.number().int().min(1).max(9_999_999_999).optional(),
    /** `true`: only the calls handed to another agent (`handoff_count` above 0); `false`: only the others. */
    handed_off: z.enum(['true', 'false']).optional(),
  }),
);
export type ListCallsQuery = z.infer<typeof ListCallsQuery>;

/** Epoch milliseconds of a bound; a bare date is the start (`from`) or the end (`to`) of that UTC day. */
export function boundMillis(value: string, edge: 'start' | 'end'): number {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const start = Date.parse(`${value}T00:00:00Z`);
    return edge === 'start' ? start : start + 86_400_000 - 1;
  }
  return Date.parse(value);
}

const TranscriptTurnResponse = schemaOnFirstUse(() =>
  z.object({
    role: z.enum(['agent', 'user']),
    text: z.string(),
    offset_seconds: z.number(),
    /** The agent that said it (the agents' lines only): the call's agent, or the one it was handed to. */
    agent_id: z.string().optional(),
  }),
);
const QuotedListingResponse = schemaOnFirstUse(() =>
  z.object({
    /** The listing's own id (its external id, e.g. `L-1001`, when it has one; else the knowledge item's). */
    listing_id: z.string(),
    /** The knowledge item the agent quoted it from; null when it came from the call's parameters. */
    item_id: z.string().nullable(),
    address: z.string(),
    price: z.string(),
  }),
);
const Percentiles = () => z.object({ p50: z.number().int().nullable(), p90: z.number().int().nullable() });

export const CallSummaryResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    workspace_id: z.string(),
    agent_id: z.string(),
    agent_name: z.string(),
    /** The agent's version the call ran, recorded when the call was created; null for calls before versions. */
    agent_version: z
      .number()
      .int()
      .nullable()
      .meta({ examples: [3] }),
    /** The batch outbound campaign that placed the call; null for single calls. */
    campaign_id: z.string().nullable(),
    /**
     * The workspace's contact with the other party's number when the call was made (outbound: to_phone;
     * inbound: the caller's number); null when there was none.
     */
    contact_id: z.string().nullable(),
    direction: z.enum(['outbound', 'inbound']),
    to_phone: z.string(),
    from_phone: z.string(),
    /**
     * The other party: the caller of an inbound call, the called number of an outbound one (what the
     * `phone` filter matches); null for a test chat (`channel: web`).
     */
    remote_phone: z.string().nullable(),
    record: z.boolean(),
    status: z.enum(CALL_STATUSES),
    end_reason: z.enum(END_REASONS).nullable(),
    created_by: z.string(),
    created_at: z.string(),
    initiated_at: z.string().nullable(),
    connected_at: z.string().nullable(),
    inprogress_at: z.string().nullable(),
    ended_at: z.string().nullable(),
    duration_seconds: z.number().int().nullable(),
    /** Credits charged for the call (20 a minute, per second); null until it has been charged. */
    credits: z.number().nullable(),
    recording_available: z.boolean(),
    /** `phone`, or `web` for the dashboard's test chat. */
    channel: z.enum(['phone', 'web']),
    /**
     * Answering-machine detection's result: `human`, `machine` (a machine or a fax), `unknown` (not
     * checked, or detection could not tell); an inbound call's caller is `human`.
     */
    answered_by: z.enum(['human', 'machine', 'unknown']),
    /** From the post-call analysis (null until it ran): the caller's sentiment. */
    user_sentiment: z.enum(['positive', 'neutral', 'negative']).nullable(),
    /** From the post-call analysis: whether the call met the agent's success criteria. */
    call_successful: z.boolean().nullable(),
    /** The analysis summary's first line (at most 200 characters, cut with …), for a list; the detail has it whole. */
    summary_line: z.string().nullable(),
    /** How many times the conversation handed the caller to another agent (the detail's `handoffs`, counted); 0 when none. */
    handoff_count: z
      .number()
      .int()
      .min(0)
      .meta({ examples: [1] }),
    /** The agent speaking when the conversation ended: the call's agent, or the last one it was handed to. */
    active_agent_id: z.string(),
  }),
);

export const CallDetailResponse = schemaOnFirstUse(() =>
  CallSummaryResponse.unwrap().extend({
    parameters: z.record(z.string(), z.string()),
    status_history: z.array(
      z.object({
        status: z.enum(CALL_STATUSES),
        at: z.string(),
        end_reason: z.enum(END_REASONS).nullable(),
        source: z.string(),
      }),
    ),
    transcript: z.array(TranscriptTurnResponse),
    quoted_listings: z.array(QuotedListingResponse),
    recording: z.object({ url: z.string(), duration_seconds: z.number().nullable() }).nullable(),
    sentiment: z.unknown().nullable(),
    /**
     * Post-call analysis: by the model (`source: model`), or today's rules when it failed
     * (`source: rules`); `custom` holds the agent's `analysis_fields`. Null until the post-call
     * pipeline ran, and for a call without a conversation.
     */
    analysis: z
      .object({
        source: z.enum(['model', 'rules']),
        summary: z.string(),
        call_successful: z.boolean(),
        user_sentiment: z.enum(['positive', 'neutral', 'negative']),
        custom: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
      })
      .nullable(),
    /** The public recording page (`/r/{short_code}`), once the call has a recording. */
    short_url: z.string().nullable(),
    /** The telephony provider's id of the call (Twilio's CallSid); null until it was dialled. */
    provider_call_id: z.string().nullable(),
    /** The agent's tools, as it used them during the conversation. */
    tool_calls: z.array(
      z.object({
        name: z.string(),
        arguments: z.record(z.string(), z.unknown()),
        ok: z.boolean(),
        at: z.string(),
        error: z.string().optional(),
        /** builtin (end, transfer, knowledge search), function (the agent's HTTP tools) or mcp. */
        type: z.enum(['builtin', 'function', 'mcp']).optional(),
        status: z.enum(['ok', 'error', 'timeout', 'cancelled']).optional(),
        /** The tool endpoint's HTTP status, when one answered. */
        http_status: z.number().int().optional(),
        duration_ms: z.number().int().optional(),
        /** The agent whose tool call it was (the call's agent, or one it was handed to). */
        agent_id: z.string(),
      }),
    ),
    /**
     * How fast the agent answered: per turn, the caller's words in → the agent's first words out
     * (`total_ms`), the model's part (request → first token, `model_ms`) and the service's (`service_ms`).
     */
    latency: z.object({
      turns: z.number().int(),
      total_ms: Percentiles(),
      model_ms: Percentiles(),
      service_ms: Percentiles(),
    }),
    /** What went wrong during the conversation (the model failed, a tool failed, a turn ran out of time). */
    conversation_incidents: z.array(z.object({ at: z.string(), kind: z.string(), detail: z.string() })),
    /** How the conversation ended: `agent_hangup`, `transfer`, `caller_hangup`; null without one. */
    conversation_ended_by: z.enum(['agent_hangup', 'transfer', 'caller_hangup', 'voicemail']).nullable(),
    /** Where the agent transferred the call, when it did. */
    transferred_to: z.string().nullable(),
    /** Each time the conversation handed the caller to another agent, in order (docs/api.md "Agents that hand off"). */
    handoffs: z.array(
      z.object({
        from_agent_id: z.string(),
        to_agent_id: z.string(),
        /** The target's version the call ran from then on. */
        to_agent_version: z.number().int().nullable(),
        at: z.string(),
        reason: z.string(),
        summary: z.string(),
      }),
    ),
    /** A voicemail message was left on the machine that answered. */
    voicemail_message_left: z.boolean(),
    /** PII redaction was on for the call: its transcript, tool calls and analysis hold tokens (`[EMAIL_1]`). */
    pii_redacted: z.boolean(),
    /** The agent's transfer: cold or warm, to whom, the summary (warm) and how the dial ended. */
    transfer: z
      .object({
        mode: z.enum(['cold', 'warm']),
        to: z.string(),
        summary: z.string().nullable(),
        status: z.enum(['connected', 'no_answer', 'busy', 'failed']).nullable(),
      })
      .nullable(),
  }),
);

export const CallList = pageOf(CallSummaryResponse);
