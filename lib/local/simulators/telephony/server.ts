import type { AddressInfo } from 'node:net';
import { simulatorServer } from '../http-kit.js';
import { telephonyRoutes } from './routes.js';
import {
  newSimState,
  RECORDING_TTL_MS,
  wallMs,
  type SimCall,
  type TelephonySimulatorOptions,
} from './state.js';

export type { SimulatedCallback, TelephonySimulatorOptions } from './state.js';

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
 * `end` it asks the `<Connect action>` what next (`<Dial>`: the call goes on with a person; a warm
 * transfer's `<Dial action><Number url>`: the person's new leg fetches the whisper, `ParentCallSid` the
 * caller's call, and what they heard goes to `outbox/telephony.jsonl` under the caller's call; then the
 * dial's end, `DialCallStatus` by the dialled number's scenario, goes to the `<Dial action>`, whose
 * `<Say>` the caller hears). What the agent says is the service's own (its language model). A recorded
 * call gets a WAV of what was said.
 *
 * Time: what the simulator reports as a time (a callback's `Timestamp`, a hang-up's `ended_at`) is the
 * wall clock, when the event happens here, never in the future; what it reports as a duration
 * (`CallDuration`, `RecordingDuration`, a hang-up's `duration_seconds`, the recording's length) is in
 * simulated seconds — the length of the call being simulated. So a 60-second call played at 60x has
 * `duration_seconds` 60 and timestamps a second apart: the service bills the provider's duration, and
 * its timestamps say when it heard of each event. A call a person holds in real time (`call talk`: an
 * inbound call with an external relay) runs at scale 1: its duration is its wall-clock duration.
 *
 * REST (JSON, `Authorization: Bearer <auth token>`):
 *   POST   /numbers              {country, area_code?, phone_number?, voice_url, status_callback} → {sid, phone_number}
 *   DELETE /numbers/{sid}
 *   POST   /calls                {from, to, status_callback, status_callback_event?, time_limit, twiml} → {sid}
 *                                   (`status_callback_event`: Twilio's StatusCallbackEvent, the events a
 *                                   status callback is sent for — initiated, ringing, answered, completed;
 *                                   absent: completed only, as Twilio)
 *   POST   /calls/{sid}/hangup   → {ended_at, duration_seconds}
 *   POST   /calls/{sid}/relay-ended → an outside relay client's session ended with the agent's `end`: the
 *                                   simulator asks the call's `<Connect action>` and hangs up unless told to
 *                                   `<Dial>` (what Twilio does) → {dialled}
 *   GET    /calls/{sid}          → Twilio's Call resource fields (status, duration, end_time), the call's
 *                                   `time_scale` (1 for a call a person holds) and what was
 *                                   sent so far (tests, debugging); 404 for a call it does not know
 *                                   (it keeps calls in memory: after a restart it knows none)
 *   GET    /calls?call_id=…      → the calls placed for one of our calls (a test counts the dials)
 *   POST   /inbound              {from, to, says?, external_relay?} → someone dials one of our numbers →
 *                                   {sid, accepted, call_id (ours, when the service answered), relay?}
 *                                   (`npm run cli -- call receive`). `says` (a line or a list): what the
 *                                   caller says. `external_relay: true`: the simulator opens no relay
 *                                   session; `relay` {url, parameters} tells the caller how to (`call talk`)
 *   GET    /recordings/{sid}     → audio/wav (no auth, like a provider's media URL)
 *
 * Its parts: state.ts (numbers, calls, recordings), routes.ts (the REST API), numbers.ts, calls.ts (placed,
 * received, played, hung up), caller.ts (the caller's side over the relay), callbacks.ts (signed
 * callbacks), scenarios.ts (each number's fate), wav.ts (recordings).
 */

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

export async function startTelephonySimulator(
  options: TelephonySimulatorOptions,
): Promise<TelephonySimulator> {
  const sim = newSimState(options);
  const server = simulatorServer(telephonyRoutes(sim));
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const [key, recording] of sim.recordings) if (recording.expires < now) sim.recordings.delete(key);
    for (const [key, call] of sim.calls)
      if (call.finished && now - call.startWall > RECORDING_TTL_MS) sim.calls.delete(key);
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
  sim.baseUrl = `http://127.0.0.1:${port}`;

  function activity(): TelephonyActivity {
    const now = Date.now();
    // A hung-up call's play() only waits for its next step time to notice the hang-up and stop.
    const active = [...sim.playing].filter((call) => !call.hungUp);
    const pending = (call: SimCall) => Math.max(0, call.timeline.steps.length - call.callbacks.length);
    const open = [...sim.calls.values()].filter((c) => !c.finished && !c.hungUp && !sim.playing.has(c));
    return {
      idle: active.length === 0 && sim.hangupsEnding === 0 && sim.callbacksInFlight === 0,
      calls_playing: active.length,
      callbacks_pending: active.reduce((sum, call) => sum + pending(call), 0),
      callbacks_in_flight: sim.callbacksInFlight,
      hangups_ending: sim.hangupsEnding,
      calls_open: open.length,
      playing: active.slice(0, 5).map((call) => {
        const next = call.timeline.steps[call.callbacks.length];
        return {
          sid: call.sid,
          call_id: call.callId,
          to: call.to,
          callbacks_pending: pending(call),
          next_in_ms: next ? Math.max(0, call.startWall + wallMs(sim, call, next.at) - now) : 0,
        };
      }),
    };
  }

  return {
    url: sim.baseUrl,
    port,
    activity,
    stop: () =>
      new Promise<void>((resolveClosed) => {
        sim.stopped = true;
        clearInterval(sweeper);
        for (const timer of sim.timers) clearTimeout(timer);
        sim.timers.clear();
        server.close(() => resolveClosed());
        server.closeAllConnections();
      }),
  };
}
