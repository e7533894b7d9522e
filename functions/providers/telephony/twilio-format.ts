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
  /** The agent ended the conversation (its `end_call` tool) and the call. */
  'agent_hangup',
  /** Answering-machine detection found a machine: the call ended (with a message left, or not). */
  'voicemail',
  /** A warm transfer's person did not answer, was busy or could not be dialled: the caller was told, then the call ended. */
  'transfer_failed',
  /** A browser voice call (web-call) that was not connected within its minute: never billed. */
  'not_connected',
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
 * the recording, then connect the call to our voice relay (ConversationRelay: the provider does speech
 * to text and text to speech; the agent's words come from the service over the WebSocket). The agent's
 * greeting is the relay's welcome greeting; the call is named by `call_id` and `workspace_id`, which
 * the relay's `setup` message carries back. When the relay session ends, the provider asks the
 * `action` URL what to do next (hang up, or dial the transfer number).
 */
export function callTwiml(script: CallScript): string {
  const { relay } = script;
  const parts = ['<?xml version="1.0" encoding="UTF-8"?>', '<Response>'];
  if (script.record) {
    parts.push(
      `<Start><Recording recordingStatusCallback="${escapeXml(script.recordingCallbackUrl)}" recordingStatusCallbackEvent="completed" channels="dual"/></Start>`,
    );
  }
  const attributes: [string, string | undefined][] = [
    ['url', relay.url],
    ['welcomeGreeting', script.greeting.trim() || undefined],
    ['welcomeGreetingInterruptible', relay.interruptible ? 'any' : 'none'],
    ['language', relay.language],
    ['ttsProvider', relay.ttsProvider],
    ['voice', relay.voice],
    ['interruptible', relay.interruptible ? 'any' : 'none'],
    ['dtmfDetection', 'true'],
    ['hints', relay.hints.length > 0 ? relay.hints.join(',') : undefined],
  ];
  const parameters: [string, string][] = [
    ['call_id', script.callId],
    ['workspace_id', script.workspaceId],
    ...(script.agent ? ([['agent_id', script.agent.agentId]] as [string, string][]) : []),
    ...(script.agent?.version !== undefined
      ? ([['agent_version', String(script.agent.version)]] as [string, string][])
      : []),
  ];
  parts.push(
    `<Connect action="${escapeXml(relay.actionUrl)}"><ConversationRelay ` +
      attributes
        .filter((entry): entry is [string, string] => entry[1] !== undefined)
        .map(([name, value]) => `${name}="${escapeXml(value)}"`)
        .join(' ') +
      '>' +
      parameters
        .map(([name, value]) => `<Parameter name="${escapeXml(name)}" value="${escapeXml(value)}"/>`)
        .join('') +
      '</ConversationRelay></Connect>',
  );
  parts.push('</Response>');
  return parts.join('');
}

/** What the `<Connect action>` webhook answers when the relay session ended: hang up, or dial a person. */
export const relayEndedTwiml = (transferTo?: string): string =>
  transferTo
    ? `<?xml version="1.0" encoding="UTF-8"?><Response><Dial>${escapeXml(transferTo)}</Dial></Response>`
    : '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>';

/**
 * `<Say>` then hang up: a voicemail left on a machine, or the caller's line when a transfer failed.
 * `<Say>` speaks with Twilio's own text-to-speech (Amazon Polly and Google voices), never the relay's
 * ElevenLabs voice: the language picks its default voice (docs/voice-runtime.md).
 */
export const sayAndHangupTwiml = (text: string, language?: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?><Response><Say${language ? ` language="${escapeXml(language)}"` : ''}>${escapeXml(text)}</Say><Hangup/></Response>`;

/**
 * A warm transfer: dial the person; their leg first fetches `whisperUrl` (what they hear before being
 * connected), and when the dial ends the provider asks `actionUrl` (DialCallStatus) what next.
 */
export const warmDialTwiml = (to: string, whisperUrl: string, actionUrl: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?><Response><Dial action="${escapeXml(actionUrl)}"><Number url="${escapeXml(whisperUrl)}">${escapeXml(to)}</Number></Dial></Response>`;

/** What the person dialled for a warm transfer heard first (`<Number url>`'s answer): `<Say>`, then they are connected. */
export const whisperTwiml = (text: string, language?: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?><Response><Say${language ? ` language="${escapeXml(language)}"` : ''}>${escapeXml(text)}</Say></Response>`;

/** How a transfer's dial ended, ours. */
export type TransferStatus = 'connected' | 'no_answer' | 'busy' | 'failed';

/**
 * Twilio's `DialCallStatus` (the `<Dial action>`'s parameter) → ours: `completed` and `answered`
 * connected the person; `busy`; `no-answer`; `failed` and `canceled` (the caller hung up while it
 * rang) failed. Anything else: undefined (not a dial's end).
 */
export function transferStatus(value: string | undefined): TransferStatus | undefined {
  switch (value) {
    case 'completed':
    case 'answered':
      return 'connected';
    case 'busy':
      return 'busy';
    case 'no-answer':
      return 'no_answer';
    case 'failed':
    case 'canceled':
      return 'failed';
    default:
      return undefined;
  }
}

/** Twilio's `AnsweredBy` → ours: human; a machine (`machine_*`) or a fax; else unknown. */
export function answeredBy(value: string | undefined): 'human' | 'machine' | 'unknown' {
  if (value === 'human') return 'human';
  if (value === 'fax' || value?.startsWith('machine_')) return 'machine';
  return 'unknown';
}

export const REJECT_MESSAGE =
  'Sorry, no one is available to take your call right now. Please try again later. Goodbye.';

/** A polite refusal of an inbound call. */
export const rejectTwiml = (): string =>
  `<?xml version="1.0" encoding="UTF-8"?><Response><Say>${escapeXml(REJECT_MESSAGE)}</Say><Hangup/></Response>`;

/** A call leg refused outright (a browser's web call that is not its to connect): Twilio ends it unanswered. */
export const rejectLegTwiml = (): string =>
  '<?xml version="1.0" encoding="UTF-8"?><Response><Reject/></Response>';

export const emptyTwiml = (): string => '<?xml version="1.0" encoding="UTF-8"?><Response/>';

function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const match of tag.matchAll(/([A-Za-z_][\w-]*)="([^"]*)"/g)) out[match[1]] = unescapeXml(match[2]);
  return out;
}

/** What a provider reads back from our TwiML (the local simulator plays the call from it). */
export interface ParsedTwiml {
  hangup: boolean;
  say: string[];
  recordingCallbackUrl?: string;
  /** `<ConversationRelay>`'s attributes (url, welcomeGreeting, …), when the call is connected to a relay. */
  relay?: Record<string, string>;
  /** `<Connect action>`: asked what to do when the relay session ends. */
  connectAction?: string;
  /** `<Dial>`'s number. */
  dial?: string;
  /** `<Dial action>`: asked when the dialled leg ends. */
  dialAction?: string;
  /** `<Number url>`: the dialled person's leg fetches it first (a warm transfer's whisper). */
  numberUrl?: string;
  /** The relay's custom parameters (`<Parameter>`). */
  parameters: Record<string, string>;
}

export function parseTwiml(twiml: string): ParsedTwiml {
  const say = [...twiml.matchAll(/<Say(?:\s[^>]*)?>([\s\S]*?)<\/Say>/g)].map((m) => unescapeXml(m[1]));
  const recording = /<Recording\b[^>]*>/.exec(twiml);
  const relay = /<ConversationRelay\b[^>]*>/.exec(twiml);
  const connect = /<Connect\b[^>]*>/.exec(twiml);
  const dial = /<Dial(?:\s[^>]*)?>([\s\S]*?)<\/Dial>/.exec(twiml);
  const dialTag = /<Dial\b[^>]*>/.exec(twiml);
  const numberTag = /<Number\b[^>]*>([\s\S]*?)<\/Number>/.exec(twiml);
  const parameters: Record<string, string> = {};
  for (const match of twiml.matchAll(/<Parameter\b[^>]*\/?>/g)) {
    const { name, value } = attributes(match[0]);
    if (name !== undefined) parameters[name] = value ?? '';
  }
  return {
    hangup: /<(Hangup|Reject)\b/.test(twiml),
    say,
    recordingCallbackUrl: recording ? attributes(recording[0]).recordingStatusCallback : undefined,
    ...(relay ? { relay: attributes(relay[0]) } : {}),
    ...(connect && attributes(connect[0]).action ? { connectAction: attributes(connect[0]).action } : {}),
    ...(dial ? { dial: unescapeXml(numberTag ? numberTag[1] : dial[1]).trim() } : {}),
    ...(dialTag && attributes(dialTag[0]).action ? { dialAction: attributes(dialTag[0]).action } : {}),
    ...(numberTag && attributes(numberTag[0]).url ? { numberUrl: attributes(numberTag[0]).url } : {}),
    parameters,
  };
}
