import twilioWebhooks from 'twilio/lib/webhooks/webhooks.js';
import * as z from 'zod';
import type { CallScript, ProviderCallState } from './port.js';
import { schemaOnFirstUse } from '../../platform/first-use.js';

/**
 * Twilio's webhook dialect, spoken by both adapters: the `X-Twilio-Signature` algorithm (the official
 * library's own implementation), the form parameters of status and recording callbacks mapped to a
 * provider-neutral event, and the TwiML that tells the voice runtime what to do on a call.
 */

export const SIGNATURE_HEADER = 'x-twilio-signature';

/** HMAC-SHA1 over the URL and the sorted parameters, base64 — what the provider puts in the header. */
export function signTwilioRequest(authToken: string, url: string, params: Record<string, string>): string {
  return twilioWebhooks.getExpectedTwilioSignature(authToken, url, params);
}

export function validTwilioSignature(
  authToken: string,
  url: string,
  params: Record<string, string>,
  signature: string | undefined,
): boolean {
  if (!signature || !authToken) return false;
  return twilioWebhooks.validateRequest(authToken, signature, url, params);
}

// ── Callbacks → events ───────────────────────────────────────────────────────────────────────────────

export const PROVIDER_STATUSES = ['initiated', 'connected', 'inprogress', 'completed', 'failed'] as const;
export type ProviderStatus = (typeof PROVIDER_STATUSES)[number];
export const END_REASONS = [
  'completed',
  'no_answer',
  'busy',
  'failed',
  'canceled',
  'hangup',
  'lost',
  /** An inbound call refused because its agent was not answering (switched off, or suspended by billing). */
  'not_answering',
] as const;
export type EndReason = (typeof END_REASONS)[number];

export const TranscriptTurn = schemaOnFirstUse(() =>
  z.object({
    role: z.enum(['agent', 'user']),
    text: z.string().max(10_000),
    offset_seconds: z.number().min(0),
  }),
);
export type TranscriptTurn = z.infer<typeof TranscriptTurn>;
export const QuotedListing = schemaOnFirstUse(() =>
  z.object({
    listing_id: z.string().max(200),
    address: z.string().max(500),
    price: z.string().max(100),
  }),
);
export type QuotedListing = z.infer<typeof QuotedListing>;

export type VoiceEvent =
  | {
      kind: 'status';
      providerCallId: string;
      status: ProviderStatus;
      endReason?: EndReason;
      /** The provider's time of the event (ISO 8601), when it sent one. */
      at?: string;
      durationSeconds?: number;
      transcript?: TranscriptTurn[];
      quotedListings?: QuotedListing[];
    }
  | {
      kind: 'recording';
      providerCallId: string;
      recordingUrl: string;
      recordingId?: string;
      durationSeconds?: number;
    }
  | { kind: 'ignored'; providerCallId?: string; reason: string };

/** Twilio `CallStatus` → our status and end reason. `ringing` is still `initiated` for us. */
const CALL_STATUS: Record<string, { status: ProviderStatus; endReason?: EndReason }> = {
  queued: { status: 'initiated' },
  initiated: { status: 'initiated' },
  ringing: { status: 'initiated' },
  'in-progress': { status: 'connected' },
  answered: { status: 'connected' },
  completed: { status: 'completed', endReason: 'completed' },
  busy: { status: 'failed', endReason: 'busy' },
  'no-answer': { status: 'failed', endReason: 'no_answer' },
  failed: { status: 'failed', endReason: 'failed' },
  canceled: { status: 'failed', endReason: 'canceled' },
};

/**
 * A call's state from Twilio's Call resource (`status`, `duration`, `end_time`: the REST API's
 * fields, which both adapters return): our status and end reason, and the duration and end once ended.
 */
export function callState(resource: {
  status?: string | null;
  duration?: string | number | null;
  end_time?: string | null;
}): ProviderCallState {
  const mapped = CALL_STATUS[resource.status ?? ''];
  if (!mapped) return {};
  if (!mapped.endReason) return { status: mapped.status };
  return {
    status: mapped.status,
    endReason: mapped.endReason,
    durationSeconds: parseSeconds(resource.duration == null ? undefined : String(resource.duration)),
    endedAt: parseTime(resource.end_time ?? undefined),
  };
}

function parseTime(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

function parseSeconds(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,7}$/.test(value)) return undefined;
  return Number(value);
}

function parseJsonList<T>(value: string | undefined, schema: z.ZodType<T>): T[] | undefined {
  if (!value) return undefined;
  try {
    const parsed = z.array(schema).max(2000).safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A status or recording callback as an event. `ConversationStatus=started` is the voice runtime's
 * report that the agent is talking (→ `inprogress`); a final status callback may carry the runtime's
 * `Transcript` and `QuotedListings` (JSON).
 */
export function parseVoiceCallback(params: Record<string, string>): VoiceEvent {
  const providerCallId = params.CallSid;
  if (!providerCallId) return { kind: 'ignored', reason: 'no CallSid' };
  if (params.RecordingStatus !== undefined || params.RecordingUrl !== undefined) {
    if (params.RecordingStatus !== 'completed' || !params.RecordingUrl) {
      return {
        kind: 'ignored',
        providerCallId,
        reason: `recording ${params.RecordingStatus ?? 'without status'}`,
      };
    }
    return {
      kind: 'recording',
      providerCallId,
      recordingUrl: params.RecordingUrl,
      recordingId: params.RecordingSid,
      durationSeconds: parseSeconds(params.RecordingDuration),
    };
  }
  const at = parseTime(params.Timestamp);
  if (params.ConversationStatus === 'started')
    return { kind: 'status', providerCallId, status: 'inprogress', at };
  const mapped = CALL_STATUS[params.CallStatus ?? ''];
  if (!mapped) return { kind: 'ignored', providerCallId, reason: `unknown CallStatus ${params.CallStatus}` };
  return {
    kind: 'status',
    providerCallId,
    status: mapped.status,
    ...(mapped.endReason ? { endReason: mapped.endReason } : {}),
    at,
    durationSeconds: parseSeconds(params.CallDuration),
    transcript: parseJsonList(params.Transcript, TranscriptTurn),
    quotedListings: parseJsonList(params.QuotedListings, QuotedListing),
  };
}

// ── TwiML ──────────────────────────────────────────────────────────────────────────────────────────

export const escapeXml = (value: string): string =>
  value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');

const unescapeXml = (value: string): string =>
  value
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

/**
 * What the provider executes when the callee answers (outbound) or when we accept (inbound): start
 * the recording, say the greeting, then hand the call to the voice runtime with the agent's context.
 */
export function callTwiml(script: CallScript, voiceRuntimeUrl: string): string {
  const parts = ['<?xml version="1.0" encoding="UTF-8"?>', '<Response>'];
  if (script.record) {
    parts.push(
      `<Start><Recording recordingStatusCallback="${escapeXml(script.recordingCallbackUrl)}" recordingStatusCallbackEvent="completed" channels="dual"/></Start>`,
    );
  }
  if (script.greeting.trim() !== '') parts.push(`<Say>${escapeXml(script.greeting)}</Say>`);
  const parameters: [string, string][] = [
    ['call_id', script.callId],
    ['workspace_id', script.workspaceId],
    ['prompt', script.prompt],
    ['parameters', JSON.stringify(script.parameters)],
    ...(script.memories && script.memories.length > 0
      ? ([['memories', JSON.stringify(script.memories)]] as [string, string][])
      : []),
  ];
  parts.push(
    `<Connect><Stream url="${escapeXml(voiceRuntimeUrl)}">` +
      parameters
        .map(([name, value]) => `<Parameter name="${escapeXml(name)}" value="${escapeXml(value)}"/>`)
        .join('') +
      '</Stream></Connect>',
  );
  parts.push('</Response>');
  return parts.join('');
}

export const REJECT_MESSAGE =
  'Sorry, no one is available to take your call right now. Please try again later. Goodbye.';

/** A polite refusal of an inbound call. */
export const rejectTwiml = (): string =>
  `<?xml version="1.0" encoding="UTF-8"?><Response><Say>${escapeXml(REJECT_MESSAGE)}</Say><Hangup/></Response>`;

export const emptyTwiml = (): string => '<?xml version="1.0" encoding="UTF-8"?><Response/>';

function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const match of tag.matchAll(/([A-Za-z_][\w-]*)="([^"]*)"/g)) out[match[1]] = unescapeXml(match[2]);
  return out;
}

/** What a voice runtime reads back from `callTwiml` (the simulator plays the call from it). */
export interface ParsedTwiml {
  hangup: boolean;
  say: string[];
  recordingCallbackUrl?: string;
  streamParameters: Record<string, string>;
}

export function parseTwiml(twiml: string): ParsedTwiml {
  const say = [...twiml.matchAll(/<Say(?:\s[^>]*)?>([\s\S]*?)<\/Say>/g)].map((m) => unescapeXml(m[1]));
  const recording = /<Recording\b[^>]*>/.exec(twiml);
  const streamParameters: Record<string, string> = {};
  for (const match of twiml.matchAll(/<Parameter\b[^>]*\/?>/g)) {
    const { name, value } = attributes(match[0]);
    if (name !== undefined) streamParameters[name] = value ?? '';
  }
  return {
    hangup: /<(Hangup|Reject)\b/.test(twiml),
    say,
    recordingCallbackUrl: recording ? attributes(recording[0]).recordingStatusCallback : undefined,
    streamParameters,
  };
}
