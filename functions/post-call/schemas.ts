import * as z from 'zod';
import { freeText } from '../platform/validation.js';
import { isE164 } from '../platform/phone.js';
import { ACTION_TYPES } from './entities.js';
import { schemaOnFirstUse } from '../platform/first-use.js';

/**
 * Shapes of the post-call pipeline: queue messages, the configs of each action type, and the
 * post-call webhook payload (docs/webhooks.md documents the same fields for our users).
 */

// ── Queue messages: the postCall and postCallActions shapes, declared with the queues ─────────────

export type { ActionMessage, CallEndedMessage } from '../platform/queue-messages.js';

// ── Action configs (the agent's `post_call_actions[].config`) ────────────────────────────────────

const phone = () => z.string().refine(isE164, { message: 'must be an E.164 phone number' });
const message = () => freeText().trim().min(1).max(480);

export const ACTION_CONFIGS = {
  /** SMS to the business owner: `to` is their mobile; `message` a template (`{{summary}}`, `{{caller}}`, …). */
  sms_owner: z.object({ to: phone(), message: message().optional() }),
  /** SMS to the other party of the call; `message` a template (`{{agent_name}}`, call parameters). */
  sms_caller: z.object({ message: message().optional() }),
  /** Email summary; `to` defaults to the workspace's admins. */
  email_summary: z.object({ to: z.union([z.email(), z.array(z.email()).min(1).max(10)]).optional() }),
  webhook: z.object({ url: z.string().url() }),
  contact_update: z.object({}),
  profile_enrichment: z.object({}),
} as const satisfies Record<(typeof ACTION_TYPES)[number], z.ZodType>;

// ── The post-call webhook payload ────────────────────────────────────────────────────────────────

export const TranscriptTurnWire = schemaOnFirstUse(() =>
  z.object({
    role: z.enum(['agent', 'user']),
    text: z.string(),
    offset_seconds: z.number(),
    /** The agent that said it (the agents' lines only): the call's agent, or the one it was handed to. */
    agent_id: z.string().optional(),
  }),
);

export const SentimentWire = schemaOnFirstUse(() =>
  z.object({
    label: z.enum(['positive', 'neutral', 'negative']),
    score: z.number(),
    turns: z.array(
      z.object({
        index: z.number().int(),
        role: z.enum(['agent', 'user']),
        score: z.number(),
        label: z.enum(['positive', 'neutral', 'negative']),
      }),
    ),
  }),
);

export const PropertyWire = schemaOnFirstUse(() =>
  z.object({ listing_id: z.string(), address: z.string(), price: z.string() }),
);

export const ContactWire = schemaOnFirstUse(() =>
  z.object({
    contact_id: z.string(),
    name: z.string().nullable(),
    phone: z.string().nullable(),
    email: z.string().nullable(),
  }),
);

export const RecordingWire = schemaOnFirstUse(() =>
  z.object({
    /** Storage key of the audio (`recordings/<ws>/<call>.wav`). */
    key: z.string(),
    /** The API route that redirects to a short-lived download URL (needs a token of the workspace). */
    url: z.string(),
    content_type: z.string(),
    duration_seconds: z.number().nullable(),
    /** The public recording page (`/r/{short_code}`, no sign-in): the link post-call SMS carry. */
    short_url: z.string().nullable(),
  }),
);

/** Post-call analysis (by the model, or by the rules when the model failed). */
export const AnalysisWire = schemaOnFirstUse(() =>
  z.object({
    source: z.enum(['model', 'rules']),
    summary: z.string(),
    call_successful: z.boolean(),
    user_sentiment: z.enum(['positive', 'neutral', 'negative']),
    /** The agent's `analysis_fields`, each a value or null when the call did not say. */
    custom: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  }),
);

/** The call's record: the `data` of the post-call webhook. */
export const CallRecordWire = schemaOnFirstUse(() =>
  z.object({
    call_id: z.string(),
    workspace_id: z.string(),
    agent_id: z.string(),
    agent_name: z.string().nullable(),
    /** The agent's version the call ran; null for calls made before versions. */
    agent_version: z.number().int().nullable(),
    direction: z.enum(['inbound', 'outbound']),
    status: z.enum(['completed', 'failed']),
    end_reason: z.string().nullable(),
    /** Answering-machine detection's result: `human`, `machine` or `unknown` (not checked). */
    answered_by: z.enum(['human', 'machine', 'unknown']),
    /** A voicemail message was left on a machine. */
    voicemail_message_left: z.boolean(),
    /** PII redaction was on for the call: the transcript and analysis hold tokens (`[EMAIL_1]`). */
    pii_redacted: z.boolean(),
    /** The agent's transfer of the call; null when it made none. */
    transfer: z
      .object({
        mode: z.enum(['cold', 'warm']),
        to: z.string(),
        summary: z.string().nullable(),
        status: z.enum(['connected', 'no_answer', 'busy', 'failed']).nullable(),
      })
      .nullable(),
    from_phone: z.string(),
    to_phone: z.string(),
    created_by: z.string().nullable(),
    created_at: z.string(),
    connected_at: z.string().nullable(),
    ended_at: z.string().nullable(),
    duration_seconds: z.number(),
    parameters: z.record(z.string(), z.string()),
    transcript: z.array(TranscriptTurnWire),
    /** The agent speaking when the conversation ended: `agent_id`, or the last one the call was handed to. */
    active_agent_id: z.string(),
    /** Each time the conversation handed the caller to another agent, in order (the call stays `agent_id`'s). */
    handoffs: z.array(
      z.object({
        from_agent_id: z.string(),
        to_agent_id: z.string(),
        to_agent_version: z.number().int().nullable(),
        at: z.string(),
        reason: z.string(),
        summary: z.string(),
      }),
    ),
    sentiment: SentimentWire,
    summary: z.string(),
    recording: RecordingWire.nullable(),
    contact: ContactWire.nullable(),
    properties: z.array(PropertyWire),
    /** Post-call analysis; null when the call had no conversation. */
    analysis: AnalysisWire.nullable(),
  }),
);
export type CallRecordWire = z.infer<typeof CallRecordWire>;

export const WebhookPayload = schemaOnFirstUse(() =>
  z.object({
    type: z.enum(['call.ended', 'webhook.test']),
    /** When the event happened (the call's end). */
    timestamp: z.string(),
    data: CallRecordWire,
  }),
);
export type WebhookPayload = z.infer<typeof WebhookPayload>;
