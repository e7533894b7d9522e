/**
 * The telephony port: what the service needs from a telephony / voice-runtime provider. Adapters:
 * the local simulator (`simulator-adapter.ts`, an HTTP service the local stack runs) and Twilio
 * (`twilio-adapter.ts`, credentials from Secrets Manager). Both speak Twilio's webhook dialect back to
 * us: form-encoded callbacks signed with `X-Twilio-Signature` (see `twilio-format.ts`).
 */
import type { EndReason, ProviderStatus } from './twilio-format.js';

export interface ProvisionRequest {
  /** ISO 3166 alpha-2; only AU is offered. */
  country: string;
  /** National area code without the trunk prefix (`2`, `3`), when the buyer asked for one. */
  areaCode?: string;
  /** A specific number to buy (E.164). */
  phoneNumber?: string;
  /** Where the provider sends inbound calls (`…/webhooks/telephony/voice?event=incoming`). */
  voiceUrl: string;
  /** Where the provider sends status callbacks of inbound calls. */
  statusCallbackUrl: string;
}

export interface ProvisionedNumber {
  phoneNumber: string;
  /** The provider's id of the number (Twilio `PN…` sid), needed to release it. */
  providerNumberId: string;
}

/** How the provider connects a call to the voice relay (ConversationRelay's attributes). */
export interface RelaySettings {
  /** The relay's WebSocket URL (signed by the provider; the relay checks it). */
  url: string;
  /** Asked what to do when the relay session ends (`<Connect action>`). */
  actionUrl: string;
  /** BCP 47. */
  language: string;
  ttsProvider?: string;
  voice?: string;
  interruptible: boolean;
  /** Speech-to-text hints (the agent's specialised terms). */
  hints: string[];
}

/** What the provider is told to do on a call (rendered into TwiML by both adapters). */
export interface CallScript {
  callId: string;
  workspaceId: string;
  /** The agent and version the call speaks with: the relay's session reads them with the call, at once. */
  agent?: { agentId: string; version?: number };
  /** The agent's greeting with `{{parameter}}` references filled in: the relay's welcome greeting. */
  greeting: string;
  /** Record the call; recording callbacks go to `recordingCallbackUrl`. */
  record: boolean;
  recordingCallbackUrl: string;
  relay: RelaySettings;
}

/**
 * The call progress events a status callback is sent for (Twilio's `StatusCallbackEvent`): `answered`
 * is the answer (`in-progress`), `completed` every end (completed, busy, no-answer, failed, canceled).
 * The provider sends no other.
 */
export type StatusCallbackEvent = 'initiated' | 'ringing' | 'answered' | 'completed';

export interface PlaceCallRequest {
  from: string;
  to: string;
  /** Our status-callback URL for this call (carries call_id and workspace_id). */
  statusCallbackUrl: string;
  /** The events the status callback is sent for (the provider sends nothing for the others). */
  statusCallbackEvents: readonly StatusCallbackEvent[];
  /** The provider ends the call after this many seconds (Twilio `timeLimit`). */
  maxDurationSeconds: number;
  script: CallScript;
  /**
   * Asynchronous answering-machine detection (Twilio `AsyncAmd`): `DetectMessageEnd` reports after
   * the greeting's beep (to leave a message), `Enable` as soon as it knows; the result is POSTed to
   * `callbackUrl` while the call goes on.
   */
  machineDetection?: { mode: 'DetectMessageEnd' | 'Enable'; callbackUrl: string };
}

/**
 * Times and durations from a provider: a time is when the event happened on the wall clock (never in
 * the future); a duration is the provider's own figure, which is what is billed. They need not agree
 * with each other: the local simulator plays calls faster than real time (SIMULATOR_TIME_SCALE), so
 * its 60-second call lasts a second between its timestamps.
 */
export interface HangupResult {
  /** When the provider ended the call (wall clock). */
  endedAt?: string;
  /** Seconds from answer to end, when the provider knows (else computed from our timestamps). */
  durationSeconds?: number;
}

/**
 * A call as the provider knows it now (Twilio's Call resource), in our terms: how the sweeper ends a
 * call whose callbacks stopped coming.
 */
export interface ProviderCallState {
  /** Our status for the provider's; undefined for a status we do not know (the call is left alone). */
  status?: ProviderStatus;
  /** Why it ended, for an ended call (`completed`, `busy`, `no_answer`, …). */
  endReason?: EndReason;
  /** Seconds from answer to end, once it has ended (the provider's figure: what is billed). */
  durationSeconds?: number;
  /** When it ended (wall clock), once it has. */
  endedAt?: string;
}

export interface TelephonyPort {
  readonly name: 'simulator' | 'twilio';
  /**
   * Call seconds per wall-clock second: 1 for a real provider; the local simulator plays calls faster
   * (SIMULATOR_TIME_SCALE), and a transcript's offsets are in the call's seconds.
   */
  readonly callSecondsPerWallSecond: number;
  /**
   * The same for one call: the simulator plays its own calls faster, but a call a person holds in
   * real time (`call talk`) runs at 1, so its transcript offsets are real seconds.
   */
  callSecondsPerWallSecondOf(providerCallId: string): Promise<number>;
  provisionNumber(request: ProvisionRequest): Promise<ProvisionedNumber>;
  releaseNumber(providerNumberId: string): Promise<void>;
  /** Dials; resolves to the provider's call id. Never retried by the caller (no second dial). */
  placeCall(request: PlaceCallRequest): Promise<{ providerCallId: string }>;
  hangupCall(providerCallId: string): Promise<HangupResult>;
  /** The call as the provider knows it now; undefined when the provider does not know it (404). */
  getCall(providerCallId: string): Promise<ProviderCallState | undefined>;
  /** The TwiML that answers an inbound call we accept (the same script an outbound call plays). */
  answerTwiml(script: CallScript): Promise<string>;
  /** Checks `X-Twilio-Signature` of a callback to `url` with these form parameters. */
  verifySignature(
    url: string,
    params: Record<string, string>,
    signature: string | undefined,
  ): Promise<boolean>;
  /** Downloads a finished recording (WAV) the provider announced in a recording callback. */
  fetchRecording(recordingUrl: string): Promise<Uint8Array>;
}

/** The provider refused or failed a request. `definitive`: it certainly did not act (e.g. a 4xx). */
export class TelephonyError extends Error {
  constructor(
    message: string,
    readonly definitive: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TelephonyError';
  }
}
