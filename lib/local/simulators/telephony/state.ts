import { randomBytes } from 'node:crypto';
import type { TranscriptTurn } from '../../../../functions/providers/telephony/twilio-format.js';
import type { RelaySession } from './relay-client.js';
import type { Scenario, StatusEvent, Step, Timeline } from './scenarios.js';

/** The telephony simulator's state (server.ts): its options, numbers, calls and recordings, and what is under way. */

export interface TelephonySimulatorOptions {
  /** The service's gateway (inbound calls to a number the simulator does not know go to its voice webhook). */
  gatewayUrl: string;
  /** Simulated seconds per wall-clock second. */
  timeScale: number;
  /** Callbacks are signed with it; REST requests must carry it. */
  authToken: string;
  /** 0 or absent: any free port. */
  port?: number;
  /**
   * `outbox/telephony.jsonl` of the stack's state folder: what the far end heard outside the relay
   * conversation (a voicemail left on a machine, a warm transfer's whisper), one JSON line each.
   */
  outboxPath?: string;
}

/** One line of the telephony outbox. */
export interface TelephonyOutboxLine {
  at: string;
  /** The original call's (a whisper's too: the caller's call, not the transfer's leg). */
  provider_call_id: string;
  kind: 'voicemail' | 'whisper';
  text: string;
}

export interface SimulatedCallback {
  kind: Step['kind'];
  status?: string;
  duplicate: boolean;
  http_status?: number;
  error?: string;
}

export interface SimCall {
  sid: string;
  /** Our call id, as the TwiML's relay parameters name it. */
  callId?: string;
  from: string;
  to: string;
  direction: 'outbound-api' | 'inbound';
  scenario: Scenario;
  statusCallback: string;
  /** The events the status callback asked for (Twilio's `StatusCallbackEvent`); absent: every one. */
  statusEvents?: readonly StatusEvent[];
  recordingCallback?: string;
  startWall: number;
  timeline: Timeline;
  /** Where the call's TwiML connects it: the relay (url, parameters) and the `<Connect action>`. */
  relay?: { url: string; parameters: Record<string, string>; greeting: string; action?: string };
  /** Someone else opens the relay session (the `+61491570116` scenario, `call talk`): the call waits. */
  externalRelay: boolean;
  /**
   * Held by a person in real time (`call talk`): its time is the wall clock's, not scaled by
   * SIMULATOR_TIME_SCALE, so its duration (what is billed) and its transcript offsets are real seconds.
   */
  realTime: boolean;
  /** What the caller says (`call receive --say`); empty: the default caller. */
  says: string[];
  session?: RelaySession;
  /** What was said, for the recording (offsets in simulated seconds from the answer). */
  transcript: TranscriptTurn[];
  /** The number the call was handed to (`<Dial>` after the agent's transfer), once the person answered. */
  dialled?: string;
  /** Answering-machine detection the dial asked for (`AsyncAmd`), and the result it reported. */
  amd?: {
    mode: 'DetectMessageEnd' | 'Enable';
    callbackUrl: string;
    reported?: string;
    /** When the result was posted (wall-clock ms). */
    reportedAt?: number;
  };
  /** What the provider said on the call after the relay (`<Say>` of the `<Connect action>` or `<Dial action>`). */
  said: string[];
  /** The relay session's opening (resolves once `setup` was sent; false: refused). */
  relayOpened?: Promise<boolean>;
  /** How the relay session ended (the simulator's view: agent, caller, refused, dropped, none). */
  relayEnd?: string;
  /** A transfer's dial: to whom, and how it ended (DialCallStatus). */
  transfer?: { to: string; status: string; whisper?: string };
  /** Ends the conversation's wait early (a hang-up). */
  stopConversation?: () => void;
  sequence: number;
  hungUp: boolean;
  finished: boolean;
  callbacks: SimulatedCallback[];
  /** How it ended (Twilio's CallStatus, simulated seconds, wall-clock end), once its end is played. */
  outcome?: { status: string; duration: number; endTime: string };
}

export const ENDED_STATUSES = ['completed', 'busy', 'no-answer', 'failed', 'canceled'];
export const ACCOUNT_SID = `AC${'0'.repeat(32)}`;
export const RECORDING_TTL_MS = 10 * 60_000;
/**
 * Wall-clock ms the service is given to handle a relay session's `setup` before the call moves on (a
 * detection result, the caller's first line). On a phone line the session's welcome greeting alone
 * takes seconds before either; a call played faster than real time would otherwise race the setup.
 */
export const SETUP_GRACE_MS = 300;
export const sid = (prefix: string) => `${prefix}${randomBytes(16).toString('hex')}`;

/** One simulator's state, shared by its parts. */
export interface SimState {
  options: TelephonySimulatorOptions;
  /** Simulated seconds per wall-clock second (> 0). */
  scale: number;
  numbers: Map<string, { phoneNumber: string; voiceUrl: string; statusCallback: string }>;
  calls: Map<string, SimCall>;
  recordings: Map<string, { wav: Buffer; expires: number }>;
  timers: Set<NodeJS.Timeout>;
  stopped: boolean;
  baseUrl: string;
  // For activity(): timelines being played, hang-ups still sending their end, callbacks on the wire.
  playing: Set<SimCall>;
  hangupsEnding: number;
  callbacksInFlight: number;
  /** The parameters each step was sent with (a duplicate step sends the same ones). */
  sent: Map<Step, Record<string, string>>;
}

export function newSimState(options: TelephonySimulatorOptions): SimState {
  return {
    options,
    scale: options.timeScale > 0 ? options.timeScale : 1,
    numbers: new Map(),
    calls: new Map(),
    recordings: new Map(),
    timers: new Set(),
    stopped: false,
    baseUrl: '',
    playing: new Set(),
    hangupsEnding: 0,
    callbacksInFlight: 0,
    sent: new Map(),
  };
}

/** A call's seconds per wall-clock second: 1 for a call a person holds (`call talk`), else the simulator's. */
export const scaleOf = (sim: SimState, call: SimCall) => (call.realTime ? 1 : sim.scale);

/** Wall-clock ms for a call's simulated seconds. */
export const wallMs = (sim: SimState, call: SimCall, simulatedSeconds: number) =>
  (simulatedSeconds * 1000) / scaleOf(sim, call);

/** The call's simulated seconds since it started. */
export const elapsedSeconds = (sim: SimState, call: SimCall) =>
  ((Date.now() - call.startWall) * scaleOf(sim, call)) / 1000;

export const sleepUntil = (sim: SimState, wallTime: number) =>
  new Promise<void>((resolveSleep) => {
    const timer = setTimeout(
      () => {
        sim.timers.delete(timer);
        resolveSleep();
      },
      Math.max(0, wallTime - Date.now()),
    );
    sim.timers.add(timer);
  });

/** Simulated seconds since the call was answered. */
export const talkedSoFar = (sim: SimState, call: SimCall) =>
  Math.max(0, elapsedSeconds(sim, call) - (call.timeline.answerAt ?? 0));
