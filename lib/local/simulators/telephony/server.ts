import { randomBytes, randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  parseTwiml,
  signTwilioRequest,
  SIGNATURE_HEADER,
  type TranscriptTurn,
} from '../../../../functions/providers/telephony/twilio-format.js';
import { RelaySession } from './relay-client.js';
import {
  CONVERSATION_SECONDS,
  inboundTimeline,
  LONG_CONVERSATION_SECONDS,
  outboundTimeline,
  scenarioFor,
  TRANSFER_SECONDS,
  type Scenario,
  type Step,
  type Timeline,
} from './scenarios.js';
import { wavRecording } from './wav.js';

/**
 * The telephony simulator: a small HTTP service standing in for Twilio's REST API and for Twilio's side
 * of ConversationRelay. It provisions numbers in the Australian drama ranges (+61 2 5550 xxxx,
 * +61 3 5550 xxxx), places calls and plays each one out through the service's real voice webhook —
 * form-encoded callbacks signed with `X-Twilio-Signature` — with realistic timings scaled by
 * SIMULATOR_TIME_SCALE (simulated seconds ÷ scale = wall-clock seconds). The fate of a call is chosen by
 * the called number (scenarios.ts). Once a call is answered, the simulator is the relay client
 * (relay-client.ts): it opens the signed relay session the call's TwiML names, sends `setup`, then
 * the caller's lines as `prompt`s (a short default caller, or the lines given), each once the agent's
 * reply to the one before ended, and hangs up after the agent's `end` or its last line; after an
 * `end` it asks the `<Connect action>` what next (`<Dial>`: the call goes on with a person). What the
 * agent says is the service's own (its language model). A recorded call gets a WAV of what was said.
 *
 * Time: what the simulator reports as a time (a callback's `Timestamp`, a hang-up's `ended_at`) is the
 * wall clock, when the event happens here, never in the future; what it reports as a duration
 * (`CallDuration`, `RecordingDuration`, a hang-up's `duration_seconds`, the recording's length) is in
 * simulated seconds — the length of the call being simulated. So a 60-second call played at 60x has
 * `duration_seconds` 60 and timestamps a second apart: the service bills the provider's duration, and
 * its timestamps say when it heard of each event.
 *
 * REST (JSON, `Authorization: Bearer <auth token>`):
 *   POST   /numbers              {country, area_code?, phone_number?, voice_url, status_callback} → {sid, phone_number}
 *   DELETE /numbers/{sid}
 *   POST   /calls                {from, to, status_callback, time_limit, twiml} → {sid}
 *   POST   /calls/{sid}/hangup   → {ended_at, duration_seconds}
 *   POST   /calls/{sid}/relay-ended → an outside relay client's session ended with the agent's `end`: the
 *                                   simulator asks the call's `<Connect action>` and hangs up unless told to
 *                                   `<Dial>` (what Twilio does) → {dialled}
 *   GET    /calls/{sid}          → Twilio's Call resource fields (status, duration, end_time) and what was
 *                                   sent so far (tests, debugging); 404 for a call it does not know
 *                                   (it keeps calls in memory: after a restart it knows none)
 *   GET    /calls?call_id=…      → the calls placed for one of our calls (a test counts the dials)
 *   POST   /inbound              {from, to, says?, external_relay?} → someone dials one of our numbers →
 *                                   {sid, accepted, call_id (ours, when the service answered), relay?}
 *                                   (`npm run cli -- call receive`). `says` (a line or a list): what the
 *                                   caller says. `external_relay: true`: the simulator opens no relay
 *                                   session; `relay` {url, parameters} tells the caller how to (`call talk`)
 *   GET    /recordings/{sid}     → audio/wav (no auth, like a provider's media URL)
 */

export interface TelephonySimulatorOptions {
  /** The service's gateway (inbound calls to a number the simulator does not know go to its voice webhook). */
  gatewayUrl: string;
  /** Simulated seconds per wall-clock second. */
  timeScale: number;
  /** Callbacks are signed with it; REST requests must carry it. */
  authToken: string;
  /** 0 or absent: any free port. */
  port?: number;
}

export interface SimulatedCallback {
  kind: Step['kind'];
  status?: string;
  duplicate: boolean;
  http_status?: number;
  error?: string;
}

interface SimCall {
  sid: string;
  /** Our call id, as the TwiML's relay parameters name it. */
  callId?: string;
  from: string;
  to: string;
  direction: 'outbound-api' | 'inbound';
  scenario: Scenario;
  statusCallback: string;
  recordingCallback?: string;
  startWall: number;
  timeline: Timeline;
  /** Where the call's TwiML connects it: the relay (url, parameters) and the `<Connect action>`. */
  relay?: { url: string; parameters: Record<string, string>; greeting: string; action?: string };
  /** Someone else opens the relay session (the `+61491570116` scenario, `call talk`): the call waits. */
  externalRelay: boolean;
  /** What the caller says (`call receive --say`); empty: the default caller. */
  says: string[];
  session?: RelaySession;
  /** What was said, for the recording (offsets in simulated seconds from the answer). */
  transcript: TranscriptTurn[];
  /** The number the call was handed to (`<Dial>` after the agent's transfer). */
  dialled?: string;
  /** Ends the conversation's wait early (a hang-up). */
  stopConversation?: () => void;
  sequence: number;
  hungUp: boolean;
  finished: boolean;
  callbacks: SimulatedCallback[];
  /** How it ended (Twilio's CallStatus, simulated seconds, wall-clock end), once its end is played. */
  outcome?: { status: string; duration: number; endTime: string };
}

const ENDED_STATUSES = ['completed', 'busy', 'no-answer', 'failed', 'canceled'];

/** What the simulator is doing now (the local stack's quiescence signal, GET /_local/quiescence). */
export interface TelephonyActivity {
  /** No timeline still to play, no hang-up still ending, no callback on its way. */
  idle: boolean;
  /** Calls whose timeline still has callbacks to send (a hung-up call's timeline is not played on). */
  calls_playing: number;
  /** The callbacks those timelines have still to send. */
  callbacks_pending: number;
  /** Callbacks being delivered now (the request out, or its retries). */
  callbacks_in_flight: number;
  /** Hang-ups whose final callbacks (end, recording) are still being sent. */
  hangups_ending: number;
  /**
   * Calls still up with nothing left to send (the `silent` scenario): they change only when hung up,
   * so they do not keep the simulator busy.
   */
  calls_open: number;
  /** The first few playing calls: which, and when their next callback is due. */
  playing: { sid: string; call_id?: string; to: string; callbacks_pending: number; next_in_ms: number }[];
}

export interface TelephonySimulator {
  url: string;
  port: number;
  activity(): TelephonyActivity;
  stop(): Promise<void>;
}

const ACCOUNT_SID = `AC${'0'.repeat(32)}`;
const RECORDING_TTL_MS = 10 * 60_000;
const sid = (prefix: string) => `${prefix}${randomBytes(16).toString('hex')}`;
const DRAMA_NUMBER = /^\+61([23])5550(\d{4})$/;

class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new RequestError(400, 'body must be a JSON object');
}

const str = (value: unknown, name: string): string => {
  if (typeof value !== 'string' || value === '') throw new RequestError(400, `${name} is required`);
  return value;
};

function send(res: ServerResponse, status: number, body?: unknown): void {
  const payload = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}

export async function startTelephonySimulator(
  options: TelephonySimulatorOptions,
): Promise<TelephonySimulator> {
  const scale = options.timeScale > 0 ? options.timeScale : 1;
  const wallMs = (simulatedSeconds: number) => (simulatedSeconds * 1000) / scale;
  const numbers = new Map<string, { phoneNumber: string; voiceUrl: string; statusCallback: string }>();
  const calls = new Map<string, SimCall>();
  const recordings = new Map<string, { wav: Buffer; expires: number }>();
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  let baseUrl = '';
  // For activity(): timelines being played, hang-ups still sending their end, callbacks on the wire.
  const playing = new Set<SimCall>();
  let hangupsEnding = 0;
  let callbacksInFlight = 0;

  const sleepUntil = (wallTime: number) =>
    new Promise<void>((resolveSleep) => {
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          resolveSleep();
        },
        Math.max(0, wallTime - Date.now()),
      );
      timers.add(timer);
    });

  /** POSTs a signed, form-encoded callback; retries a network error or 5xx a few times. */
  async function postSigned(
    url: string,
    params: Record<string, string>,
  ): Promise<{ status: number; text: string }> {
    const signature = signTwilioRequest(options.authToken, url, params);
    let lastError: unknown;
    for (let attempt = 1; attempt <= 3 && !stopped; attempt += 1) {
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            [SIGNATURE_HEADER]: signature,
            'user-agent': 'TwilioProxy/1.1 (simulator)',
          },
          body: new URLSearchParams(params).toString(),
          signal: AbortSignal.timeout(15_000),
        });
        const text = await response.text();
        if (response.status < 500) return { status: response.status, text };
        lastError = new Error(`${response.status} ${text.slice(0, 200)}`);
      } catch (error) {
        lastError = error;
      }
      await new Promise((r) => setTimeout(r, 250 * attempt));
    }
    throw lastError ?? new Error('simulator stopped');
  }

  function callParams(call: SimCall): Record<string, string> {
    return {
      AccountSid: ACCOUNT_SID,
      ApiVersion: '2010-04-01',
      CallSid: call.sid,
      From: call.from,
      To: call.to,
      Direction: call.direction,
    };
  }

  function statusParams(call: SimCall, step: Step, sequence: number): Record<string, string> {
    // The wall-clock time the step is played at (its simulated time scaled): never in the future.
    const at = new Date(call.startWall + wallMs(step.at)).toISOString();
    const params: Record<string, string> = {
      ...callParams(call),
      CallbackSource: 'call-progress-events',
      SequenceNumber: String(sequence),
      Timestamp: at,
    };
    if (step.status === 'started')
      return { ...params, CallStatus: 'in-progress', ConversationStatus: 'started' };
    params.CallStatus = step.status ?? 'completed';
    if (['completed', 'busy', 'no-answer', 'failed', 'canceled'].includes(params.CallStatus)) {
      params.CallDuration = String(params.CallStatus === 'completed' ? call.timeline.talkSeconds : 0);
    }
    return params;
  }

  function recordingParams(call: SimCall, recordingSid: string): Record<string, string> {
    return {
      AccountSid: ACCOUNT_SID,
      CallSid: call.sid,
      RecordingSid: recordingSid,
      RecordingUrl: `${baseUrl}/recordings/${recordingSid}`,
      RecordingStatus: 'completed',
      RecordingDuration: String(call.timeline.talkSeconds),
      RecordingChannels: '1',
      RecordingSource: 'StartCallRecordingTwiML',
    };
  }

  /** One callback; the same step sent twice carries the same parameters (a true duplicate). */
  const sent = new Map<Step, Record<string, string>>();
  async function deliver(call: SimCall, step: Step, original: Step): Promise<void> {
    const entry: SimulatedCallback = { kind: step.kind, status: step.status, duplicate: !!step.duplicate };
    call.callbacks.push(entry);
    let params = sent.get(original);
    let url = call.statusCallback;
    if (step.kind === 'recording') {
      if (!call.recordingCallback) return;
      url = call.recordingCallback;
      if (!params) {
        const recordingSid = sid('RE');
        recordings.set(recordingSid, {
          wav: wavRecording(call.transcript, call.timeline.talkSeconds),
          expires: Date.now() + RECORDING_TTL_MS,
        });
        params = recordingParams(call, recordingSid);
      }
    } else if (!params) {
      call.sequence += 1;
      params = statusParams(call, step, call.sequence);
    }
    if (ENDED_STATUSES.includes(params.CallStatus ?? '') && params.ConversationStatus === undefined) {
      call.outcome ??= {
        status: params.CallStatus,
        duration: Number(params.CallDuration ?? 0),
        endTime: params.Timestamp ?? new Date().toISOString(),
      };
    }
    sent.set(original, params);
    callbacksInFlight += 1;
    try {
      entry.http_status = (await postSigned(url, params)).status;
    } catch (error) {
      entry.error = String(error);
    } finally {
      callbacksInFlight -= 1;
    }
  }

  /** Plays the timeline: steps in order at their times; a `concurrent` step races the one before it. */
  async function play(call: SimCall): Promise<void> {
    const originals = new Map<string, Step>();
    let inflight: Promise<void>[] = [];
    // An answered call's conversation runs once it is answered and the relay was told (its `started`):
    // the steps after it (the end, the recording) move to when the conversation ended.
    const converses = call.relay !== undefined && !call.externalRelay && call.timeline.answerAt !== undefined;
    const answerEnd = (call.timeline.answerAt ?? 0) + 1;
    let conversed = !converses;
    for (const step of call.timeline.steps) {
      if (!conversed && step.at > answerEnd) {
        await Promise.all(inflight);
        inflight = [];
        conversed = true;
        if (call.hungUp || stopped) break;
        await converse(call);
      }
      await sleepUntil(call.startWall + wallMs(step.at));
      if (!step.concurrent) {
        await Promise.all(inflight);
        inflight = [];
      }
      if (call.hungUp || stopped) break;
      const key = `${step.kind}:${step.status ?? ''}`;
      const original = step.duplicate ? (originals.get(key) ?? step) : step;
      if (!step.duplicate) originals.set(key, step);
      inflight.push(deliver(call, step, original));
    }
    await Promise.all(inflight);
    for (const original of call.timeline.steps) sent.delete(original);
    // A call whose timeline never ends it (the `silent` scenario) stays up until it is hung up.
    const ends = call.timeline.steps.some(
      (step) =>
        step.kind === 'status' &&
        ['completed', 'busy', 'no-answer', 'failed', 'canceled'].includes(step.status ?? ''),
    );
    if (ends && !call.hungUp) call.finished = true;
  }

  /** Simulated seconds since the call was answered. */
  const talkedSoFar = (call: SimCall) =>
    Math.max(0, ((Date.now() - call.startWall) * scale) / 1000 - (call.timeline.answerAt ?? 0));

  /**
   * The caller's side of the conversation, over the relay: its lines spread over the scenario's talk
   * time (about 60 simulated seconds; 30 minutes for the long scenario), each said once the agent
   * answered the one before; then it waits for the agent's `end`, or hangs up. After an `end`, the
   * provider asks the `<Connect action>` what to do: `<Dial>` keeps the call up with the person for a
   * while, `<Hangup/>` ends it. The call's end and recording then move to when it ended.
   */
  async function converse(call: SimCall): Promise<void> {
    const relay = call.relay!;
    const wanted = call.scenario === 'long' ? LONG_CONVERSATION_SECONDS : CONVERSATION_SECONDS;
    const talkLimit = Math.max(1, Math.min(wanted, call.timeline.talkSeconds));
    const session = new RelaySession({
      url: relay.url,
      authToken: options.authToken,
      callSid: call.sid,
      from: call.from,
      to: call.to,
      direction: call.direction,
      parameters: relay.parameters,
    });
    call.session = session;
    const answerWall = call.startWall + wallMs(call.timeline.answerAt ?? 0);
    const stop = new Promise<void>((resolveStop) => (call.stopConversation = resolveStop));
    const lines = callerLines(call);
    if (await session.open()) {
      for (const [i, line] of lines.entries()) {
        // Spread so the last line (the goodbye) is said at the end of the scenario's talk time (60 s).
        const due = answerWall + wallMs(((i + 1) * talkLimit) / lines.length);
        await Promise.race([sleepUntil(due), stop]);
        if (session.isOver || call.hungUp || stopped) break;
        await Promise.race([session.say(line, { timeoutMs: 30_000 }), stop]);
      }
      // The agent's `end` follows its goodbye; a caller who said all has nothing more and hangs up.
      const end = await Promise.race([session.waitForEnd(2_000), stop.then(() => undefined)]);
      if (!end) session.hangUp();
      if (end?.kind === 'agent' && relay.action && !call.hungUp) await afterRelay(call, relay.action);
    } else {
      // The relay refused the session: the caller hears nothing and hangs up at the scenario's end.
      await Promise.race([sleepUntil(answerWall + wallMs(talkLimit)), stop]);
    }
    call.transcript = transcriptOf(call, session);
    if (call.hungUp) return;
    const talk = Math.max(
      1,
      Math.min(
        call.timeline.talkSeconds,
        Math.ceil(talkedSoFar(call)) + (call.dialled ? TRANSFER_SECONDS : 0),
      ),
    );
    const shift = talk - call.timeline.talkSeconds;
    const answerEnd = (call.timeline.answerAt ?? 0) + 1;
    call.timeline = {
      ...call.timeline,
      talkSeconds: talk,
      steps: call.timeline.steps.map((step) =>
        step.at > answerEnd ? { ...step, at: step.at + shift } : step,
      ),
    };
  }

  /** What was said on the call (its greeting, then the session's lines), in simulated seconds from the answer. */
  function transcriptOf(call: SimCall, session: RelaySession): TranscriptTurn[] {
    const answerWall = call.startWall + wallMs(call.timeline.answerAt ?? 0);
    const greeting: TranscriptTurn[] = call.relay?.greeting
      ? [{ role: 'agent', text: call.relay.greeting, offset_seconds: 0 }]
      : [];
    return [
      ...greeting,
      ...session.lines.map((line) => ({
        role: line.role,
        text: line.text,
        offset_seconds: Math.max(0, Math.floor(((line.at - answerWall) * scale) / 1000)),
      })),
    ];
  }

  /** The `<Connect action>` after the agent's end: hang up, or dial the number it names. */
  async function afterRelay(call: SimCall, action: string): Promise<void> {
    try {
      const response = await postSigned(action, {
        ...callParams(call),
        CallStatus: 'in-progress',
        SessionStatus: 'ended',
      });
      const next = parseTwiml(response.text);
      if (next.dial) call.dialled = next.dial;
    } catch (error) {
      console.warn(`[telephony simulator] relay action failed for ${call.sid}: ${String(error)}`);
    }
  }

  /**
   * An outside relay client's session ended with the agent's `end` (`call talk`, tests): what Twilio
   * then does — ask the `<Connect action>`, and hang up unless it dials someone.
   */
  async function relayEndedOutside(call: SimCall): Promise<{ dialled: string | null }> {
    if (!call.relay?.action || call.finished || call.hungUp) return { dialled: call.dialled ?? null };
    await afterRelay(call, call.relay.action);
    if (!call.dialled) await hangup(call);
    return { dialled: call.dialled ?? null };
  }

  /** What the simulated caller says: the lines it was given, then goodbye; or a short default caller. */
  function callerLines(call: SimCall): string[] {
    if (call.says.length > 0) return [...call.says, "Thanks, that's all I needed. Goodbye."];
    return call.direction === 'inbound'
      ? ['Hi, I was hoping to get some information.', "Thanks, that's all I needed. Goodbye."]
      : [
          'Hi, yes. What is this about?',
          'Which property is it, and what is the price?',
          "Thanks, that's all I needed. Goodbye.",
        ];
  }

  /** play(), counted in activity() until it returns. */
  function startPlaying(call: SimCall): void {
    playing.add(call);
    void play(call).finally(() => playing.delete(call));
  }

  function newCall(input: {
    from: string;
    to: string;
    direction: SimCall['direction'];
    statusCallback: string;
    twiml: string;
    timeLimit: number;
    sid?: string;
    /** What the caller says (inbound calls). */
    says?: string[];
    /** Someone else opens the relay session (`call talk`). */
    externalRelay?: boolean;
  }): SimCall {
    const script = parseTwiml(input.twiml);
    const record = script.recordingCallbackUrl !== undefined;
    const scenario: Scenario = input.direction === 'inbound' ? 'answered' : scenarioFor(input.to);
    const timeline =
      input.externalRelay === true
        ? outboundTimeline('external', { timeLimit: input.timeLimit, record })
        : input.direction === 'inbound'
          ? inboundTimeline({ timeLimit: input.timeLimit, record })
          : outboundTimeline(scenario, { timeLimit: input.timeLimit, record });
    if (input.externalRelay === true && input.direction === 'inbound') {
      // Answered at once (no ringing: we took the call), then up until someone hangs up.
      timeline.steps = timeline.steps
        .filter((step) => step.status === 'in-progress' || step.status === 'started')
        .map((step) => ({ ...step, at: step.status === 'in-progress' ? 0 : 1 }));
      timeline.answerAt = 0;
    }
    const call: SimCall = {
      sid: input.sid ?? sid('CA'),
      callId: script.parameters.call_id,
      from: input.from,
      to: input.to,
      direction: input.direction,
      scenario,
      statusCallback: input.statusCallback,
      recordingCallback: script.recordingCallbackUrl,
      startWall: Date.now(),
      timeline,
      ...(script.relay?.url
        ? {
            relay: {
              url: script.relay.url,
              parameters: script.parameters,
              greeting: script.relay.welcomeGreeting ?? '',
              ...(script.connectAction ? { action: script.connectAction } : {}),
            },
          }
        : {}),
      externalRelay: scenario === 'external' || input.externalRelay === true,
      says: input.says ?? [],
      transcript: [],
      sequence: 0,
      hungUp: false,
      finished: false,
      callbacks: [],
    };
    if (call.relay?.greeting)
      call.transcript.push({ role: 'agent', text: call.relay.greeting, offset_seconds: 0 });
    calls.set(call.sid, call);
    return call;
  }

  /**
   * Ends a call early: the final callbacks carry the simulated time talked so far. Like Twilio at its
   * quickest, the terminal status callback is delivered before the REST answer, so the service always
   * meets the order where the provider's callback beats its own hang-up transition.
   */
  async function hangup(call: SimCall): Promise<{ ended_at?: string; duration_seconds?: number }> {
    if (call.finished || call.hungUp) return {};
    call.hungUp = true;
    call.stopConversation?.();
    const elapsed = ((Date.now() - call.startWall) * scale) / 1000;
    const { answerAt } = call.timeline;
    const answered = answerAt !== undefined && elapsed >= answerAt;
    const full = call.timeline.talkSeconds;
    const talked = answered ? Math.max(0, Math.min(full, Math.floor(elapsed - (answerAt ?? 0)))) : 0;
    const endAt = answered ? (answerAt ?? 0) + talked : elapsed;
    call.timeline = { ...call.timeline, talkSeconds: talked };
    const final: Step = { at: endAt, kind: 'status', status: answered ? 'completed' : 'canceled' };
    const endedAt = new Date(call.startWall + wallMs(endAt)).toISOString();
    call.outcome = { status: final.status!, duration: talked, endTime: endedAt };
    hangupsEnding += 1;
    const finalDelivered = deliver(call, final, final);
    void (async () => {
      await finalDelivered;
      if (answered && talked > 0) {
        const recording: Step = { at: endAt + 1, kind: 'recording' };
        await deliver(call, recording, recording);
      }
      call.finished = true;
      sent.delete(final);
    })().finally(() => (hangupsEnding -= 1));
    await finalDelivered;
    // The caller's side goes too (the relay then ends the conversation), after the provider's end.
    call.session?.hangUp();
    if (call.session) call.transcript = transcriptOf(call, call.session);
    // The final callback's wall-clock time (not later than now); `talked` is in simulated seconds, like
    // every duration the simulator reports.
    return { ended_at: endedAt, duration_seconds: talked };
  }

  /** Twilio's Call resource fields now: its status, and its duration and end time once it ended. */
  function callResource(call: SimCall): { status: string; duration: string | null; end_time: string | null } {
    if (call.outcome) {
      return {
        status: call.outcome.status,
        duration: String(call.outcome.duration),
        end_time: new Date(call.outcome.endTime).toUTCString(),
      };
    }
    const elapsed = ((Date.now() - call.startWall) * scale) / 1000;
    const { answerAt } = call.timeline;
    const status =
      answerAt !== undefined && elapsed >= answerAt ? 'in-progress' : elapsed >= 1 ? 'ringing' : 'queued';
    return { status, duration: null, end_time: null };
  }

  async function inbound(
    from: string,
    to: string,
    says: string[] = [],
    externalRelay = false,
  ): Promise<{
    sid: string;
    accepted: boolean;
    call_id?: string;
    relay?: { url: string; parameters: Record<string, string>; greeting: string };
  }> {
    const known = [...numbers.values()].find((n) => n.phoneNumber === to);
    const voiceUrl = known?.voiceUrl ?? `${options.gatewayUrl}/webhooks/telephony/voice?event=incoming`;
    const statusCallback = known?.statusCallback ?? `${options.gatewayUrl}/webhooks/telephony/voice`;
    const callSid = sid('CA');
    const response = await postSigned(voiceUrl, {
      AccountSid: ACCOUNT_SID,
      ApiVersion: '2010-04-01',
      CallSid: callSid,
      From: from,
      To: to,
      Direction: 'inbound',
      CallStatus: 'ringing',
    });
    if (response.status !== 200)
      throw new RequestError(
        502,
        `voice webhook answered ${response.status}: ${response.text.slice(0, 200)}`,
      );
    const twiml = parseTwiml(response.text);
    if (twiml.hangup) return { sid: callSid, accepted: false };
    const call = newCall({
      from,
      to,
      direction: 'inbound',
      statusCallback,
      twiml: response.text,
      timeLimit: 4 * 3600,
      sid: callSid,
      says,
      externalRelay,
    });
    startPlaying(call);
    return {
      sid: call.sid,
      accepted: true,
      call_id: call.callId,
      ...(externalRelay && call.relay
        ? { relay: { url: call.relay.url, parameters: call.relay.parameters, greeting: call.relay.greeting } }
        : {}),
    };
  }

  function provision(body: Record<string, unknown>): { sid: string; phone_number: string } {
    if (body.country !== 'AU') throw new RequestError(400, 'only AU numbers are offered');
    const voiceUrl = str(body.voice_url, 'voice_url');
    const statusCallback = str(body.status_callback, 'status_callback');
    const inUse = new Set([...numbers.values()].map((n) => n.phoneNumber));
    let phoneNumber: string | undefined;
    if (typeof body.phone_number === 'string') {
      if (!DRAMA_NUMBER.test(body.phone_number))
        throw new RequestError(400, 'the simulator offers +61 2 5550 xxxx and +61 3 5550 xxxx only');
      if (inUse.has(body.phone_number)) throw new RequestError(409, 'number already provisioned');
      phoneNumber = body.phone_number;
    } else {
      const areaCode = typeof body.area_code === 'string' ? body.area_code.replace(/^0/, '') : undefined;
      if (areaCode !== undefined && areaCode !== '2' && areaCode !== '3')
        throw new RequestError(400, `no numbers available in area code ${body.area_code}`);
      for (let tries = 0; tries < 50 && !phoneNumber; tries += 1) {
        const area = areaCode ?? (randomInt(2) === 0 ? '2' : '3');
        const candidate = `+61${area}5550${String(randomInt(10_000)).padStart(4, '0')}`;
        if (!inUse.has(candidate)) phoneNumber = candidate;
      }
      if (!phoneNumber) throw new RequestError(400, 'no numbers available');
    }
    const numberSid = sid('PN');
    numbers.set(numberSid, { phoneNumber, voiceUrl, statusCallback });
    return { sid: numberSid, phone_number: phoneNumber };
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const parts = url.pathname.split('/').filter(Boolean);
    const method = req.method ?? 'GET';
    if (method === 'GET' && parts[0] === 'recordings' && parts.length === 2) {
      const recording = recordings.get(parts[1].replace(/\.wav$/, ''));
      if (!recording || recording.expires < Date.now())
        return send(res, 404, { error: 'recording not found' });
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': recording.wav.length });
      res.end(recording.wav);
      return;
    }
    if (req.headers.authorization !== `Bearer ${options.authToken}`)
      return send(res, 401, { error: 'bad credentials' });

    if (method === 'POST' && url.pathname === '/numbers')
      return send(res, 201, provision(await readJson(req)));
    if (method === 'DELETE' && parts[0] === 'numbers' && parts.length === 2) {
      numbers.delete(parts[1]); // releasing an unknown number is not an error (idempotent)
      return send(res, 204);
    }
    if (method === 'POST' && url.pathname === '/calls') {
      const body = await readJson(req);
      const timeLimit =
        typeof body.time_limit === 'number' && body.time_limit > 0 ? body.time_limit : 4 * 3600;
      const call = newCall({
        from: str(body.from, 'from'),
        to: str(body.to, 'to'),
        direction: 'outbound-api',
        statusCallback: str(body.status_callback, 'status_callback'),
        twiml: str(body.twiml, 'twiml'),
        timeLimit,
      });
      startPlaying(call);
      return send(res, 201, { sid: call.sid });
    }
    if (method === 'GET' && url.pathname === '/calls') {
      const callId = url.searchParams.get('call_id');
      const matching = [...calls.values()].filter((c) => callId !== null && c.callId === callId);
      return send(res, 200, {
        items: matching.map((c) => ({
          sid: c.sid,
          to: c.to,
          from: c.from,
          finished: c.finished,
          hung_up: c.hungUp,
        })),
      });
    }
    if (parts[0] === 'calls' && parts.length >= 2) {
      const call = calls.get(parts[1]);
      if (!call) return send(res, 404, { error: 'call not found' });
      if (method === 'POST' && parts[2] === 'hangup' && parts.length === 3)
        return send(res, 200, await hangup(call));
      if (method === 'POST' && parts[2] === 'relay-ended' && parts.length === 3)
        return send(res, 200, await relayEndedOutside(call));
      if (method === 'GET' && parts.length === 2) {
        return send(res, 200, {
          ...callResource(call),
          sid: call.sid,
          from: call.from,
          to: call.to,
          direction: call.direction,
          finished: call.finished,
          hung_up: call.hungUp,
          talk_seconds: call.timeline.talkSeconds,
          transcript: call.transcript,
          dialled: call.dialled ?? null,
          callbacks: call.callbacks,
        });
      }
    }
    if (method === 'POST' && url.pathname === '/inbound') {
      const body = await readJson(req);
      const says = (Array.isArray(body.says) ? body.says : [body.says]).filter(
        (line): line is string => typeof line === 'string' && line.trim() !== '',
      );
      return send(
        res,
        201,
        await inbound(str(body.from, 'from'), str(body.to, 'to'), says, body.external_relay === true),
      );
    }
    return send(res, 404, { error: 'not found' });
  }

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      const status = error instanceof RequestError ? error.status : 500;
      if (!res.headersSent)
        send(res, status, { error: error instanceof Error ? error.message : String(error) });
      else res.end();
    });
  });
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const [key, recording] of recordings) if (recording.expires < now) recordings.delete(key);
    for (const [key, call] of calls)
      if (call.finished && now - call.startWall > RECORDING_TTL_MS) calls.delete(key);
  }, 60_000);
  sweeper.unref();

  await new Promise<void>((resolveListening, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolveListening();
    });
  });
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://127.0.0.1:${port}`;

  function activity(): TelephonyActivity {
    const now = Date.now();
    // A hung-up call's play() only waits for its next step time to notice the hang-up and stop.
    const active = [...playing].filter((call) => !call.hungUp);
    const pending = (call: SimCall) => Math.max(0, call.timeline.steps.length - call.callbacks.length);
    const open = [...calls.values()].filter((c) => !c.finished && !c.hungUp && !playing.has(c));
    return {
      idle: active.length === 0 && hangupsEnding === 0 && callbacksInFlight === 0,
      calls_playing: active.length,
      callbacks_pending: active.reduce((sum, call) => sum + pending(call), 0),
      callbacks_in_flight: callbacksInFlight,
      hangups_ending: hangupsEnding,
      calls_open: open.length,
      playing: active.slice(0, 5).map((call) => {
        const next = call.timeline.steps[call.callbacks.length];
        return {
          sid: call.sid,
          call_id: call.callId,
          to: call.to,
          callbacks_pending: pending(call),
          next_in_ms: next ? Math.max(0, call.startWall + wallMs(next.at) - now) : 0,
        };
      }),
    };
  }

  return {
    url: baseUrl,
    port,
    activity,
    stop: () =>
      new Promise<void>((resolveClosed) => {
        stopped = true;
        clearInterval(sweeper);
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolveClosed());
        server.closeAllConnections();
      }),
  };
}
