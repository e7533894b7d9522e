import { parseTwiml } from '../../../../functions/providers/telephony/twilio-format.js';
import { SimulatorError } from '../http-kit.js';
import { callParams, deliver, postSigned } from './callbacks.js';
import { afterRelay, converse, transcriptOf } from './caller.js';
import {
  AMD_HUMAN_SECONDS,
  AMD_MACHINE_SECONDS,
  inboundTimeline,
  isSent,
  outboundTimeline,
  scenarioFor,
  STATUS_EVENTS,
  TRANSFER_SECONDS,
  type Scenario,
  type StatusEvent,
  type Step,
} from './scenarios.js';
import {
  ACCOUNT_SID,
  elapsedSeconds,
  SETUP_GRACE_MS,
  sid,
  sleepUntil,
  wallMs,
  type SimCall,
  type SimState,
} from './state.js';

/** The simulator's calls: placed or received, their timelines played, hung up, and read back. */

/** Plays the timeline: steps in order at their times; a `concurrent` step races the one before it. */
async function play(sim: SimState, call: SimCall): Promise<void> {
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
      if (call.hungUp || sim.stopped) break;
      await converse(sim, call);
    }
    await sleepUntil(sim, call.startWall + wallMs(sim, call, step.at));
    if (!step.concurrent) {
      await Promise.all(inflight);
      inflight = [];
    }
    if (call.hungUp || sim.stopped) break;
    const key = `${step.kind}:${step.status ?? ''}`;
    const original = step.duplicate ? (originals.get(key) ?? step) : step;
    if (!step.duplicate) originals.set(key, step);
    inflight.push(deliver(sim, call, step, original));
  }
  await Promise.all(inflight);
  for (const original of call.timeline.steps) sim.sent.delete(original);
  // A call whose timeline never ends it (the `silent` scenario) stays up until it is hung up.
  const ends = call.timeline.steps.some(
    (step) =>
      step.kind === 'status' &&
      ['completed', 'busy', 'no-answer', 'failed', 'canceled'].includes(step.status ?? ''),
  );
  if (ends && !call.hungUp) call.finished = true;
}

/** play(), counted in activity() until it returns. */
export function startPlaying(sim: SimState, call: SimCall): void {
  sim.playing.add(call);
  void Promise.all([play(sim, call), reportAmd(sim, call)]).finally(() => sim.playing.delete(call));
}

/**
 * Answering-machine detection (Twilio's async AMD): once the call is answered, the result is POSTed
 * to the callback the dial named — a machine (`+61491570117`) after its beep (`machine_end_beep`;
 * `machine_start` when only `Enable` was asked), anyone else as `human` 2 s in.
 */
async function reportAmd(sim: SimState, call: SimCall): Promise<void> {
  const { amd } = call;
  const { answerAt } = call.timeline;
  if (!amd || answerAt === undefined || call.externalRelay) return;
  const machine = call.scenario === 'machine';
  const after = machine ? AMD_MACHINE_SECONDS : AMD_HUMAN_SECONDS;
  await sleepUntil(sim, call.startWall + wallMs(sim, call, answerAt + after));
  // Played faster than real time, the result could beat the relay session's setup, which takes a
  // few real seconds on a phone line: it comes once the session is set up (its `setup` handled).
  while (call.relay && !call.relayOpened && !call.hungUp && !call.finished && !sim.stopped)
    await sleepUntil(sim, Date.now() + 20);
  if (call.relayOpened && (await call.relayOpened)) await sleepUntil(sim, Date.now() + SETUP_GRACE_MS);
  if (call.hungUp || call.finished || sim.stopped) return;
  const answeredBy = machine
    ? amd.mode === 'DetectMessageEnd'
      ? 'machine_end_beep'
      : 'machine_start'
    : 'human';
  amd.reported = answeredBy;
  amd.reportedAt = Date.now();
  sim.callbacksInFlight += 1;
  try {
    await postSigned(sim, amd.callbackUrl, {
      ...callParams(call),
      AnsweredBy: answeredBy,
      MachineDetectionDuration: String(after * 1000),
    });
  } catch (error) {
    console.warn(`[telephony simulator] AMD callback failed for ${call.sid}: ${String(error)}`);
  } finally {
    sim.callbacksInFlight -= 1;
  }
}

export function newCall(
  sim: SimState,
  input: {
    from: string;
    to: string;
    direction: SimCall['direction'];
    statusCallback: string;
    /** Twilio's `StatusCallbackEvent` (outbound): the events the status callback is sent for. */
    statusEvents?: readonly StatusEvent[];
    twiml: string;
    timeLimit: number;
    sid?: string;
    /** What the caller says (inbound calls). */
    says?: string[];
    /** Someone else opens the relay session (`call talk`). */
    externalRelay?: boolean;
    /** Answering-machine detection asked for (outbound). */
    amd?: { mode: 'DetectMessageEnd' | 'Enable'; callbackUrl: string };
  },
): SimCall {
  const script = parseTwiml(input.twiml);
  const record = script.recordingCallbackUrl !== undefined;
  const scenario: Scenario = input.direction === 'inbound' ? 'answered' : scenarioFor(input.to);
  const timeline =
    input.externalRelay === true
      ? outboundTimeline('external', { timeLimit: input.timeLimit, record })
      : input.direction === 'inbound'
        ? inboundTimeline({ timeLimit: input.timeLimit, record })
        : outboundTimeline(scenario, { timeLimit: input.timeLimit, record, events: input.statusEvents });
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
    ...(input.statusEvents ? { statusEvents: input.statusEvents } : {}),
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
    realTime: input.externalRelay === true && input.direction === 'inbound',
    says: input.says ?? [],
    ...(input.amd ? { amd: { ...input.amd } } : {}),
    said: [],
    transcript: [],
    sequence: 0,
    hungUp: false,
    finished: false,
    callbacks: [],
  };
  if (call.relay?.greeting)
    call.transcript.push({ role: 'agent', text: call.relay.greeting, offset_seconds: 0 });
  sim.calls.set(call.sid, call);
  return call;
}

/**
 * Ends a call early: the final callbacks carry the simulated time talked so far. Like Twilio at its
 * quickest, the terminal status callback is delivered before the REST answer, so the service always
 * meets the order where the provider's callback beats its own hang-up transition.
 */
export async function hangup(
  sim: SimState,
  call: SimCall,
): Promise<{ ended_at?: string; duration_seconds?: number }> {
  // Ended already: like Twilio's Call resource, the answer says how it ended (another hang-up raced this one).
  if (call.finished || call.hungUp)
    return call.outcome ? { ended_at: call.outcome.endTime, duration_seconds: call.outcome.duration } : {};
  call.hungUp = true;
  call.stopConversation?.();
  const elapsed = elapsedSeconds(sim, call);
  const { answerAt } = call.timeline;
  const answered = answerAt !== undefined && elapsed >= answerAt;
  const full = call.timeline.talkSeconds;
  const talked = answered ? Math.max(0, Math.min(full, Math.floor(elapsed - (answerAt ?? 0)))) : 0;
  const endAt = answered ? (answerAt ?? 0) + talked : elapsed;
  call.timeline = { ...call.timeline, talkSeconds: talked };
  const final: Step = { at: endAt, kind: 'status', status: answered ? 'completed' : 'canceled' };
  const endedAt = new Date(call.startWall + wallMs(sim, call, endAt)).toISOString();
  call.outcome = { status: final.status!, duration: talked, endTime: endedAt };
  sim.hangupsEnding += 1;
  // Sent when the status callback asked for the end (`completed`), as Twilio does.
  const finalDelivered = isSent(final, call.statusEvents ?? STATUS_EVENTS)
    ? deliver(sim, call, final, final)
    : Promise.resolve();
  void (async () => {
    await finalDelivered;
    if (answered && talked > 0) {
      const recording: Step = { at: endAt + 1, kind: 'recording' };
      await deliver(sim, call, recording, recording);
    }
    call.finished = true;
    sim.sent.delete(final);
  })().finally(() => (sim.hangupsEnding -= 1));
  await finalDelivered;
  // The caller's side goes too (the relay then ends the conversation), after the provider's end.
  call.session?.hangUp();
  if (call.session) call.transcript = transcriptOf(sim, call, call.session);
  // The final callback's wall-clock time (not later than now); `talked` is in simulated seconds, like
  // every duration the simulator reports.
  return { ended_at: endedAt, duration_seconds: talked };
}

/**
 * An outside relay client's session ended with the agent's `end` (`call talk`, tests): what Twilio
 * then does — ask the `<Connect action>`, and hang up unless it dials someone.
 */
export async function relayEndedOutside(sim: SimState, call: SimCall): Promise<{ dialled: string | null }> {
  if (!call.relay?.action || call.finished || call.hungUp) return { dialled: call.dialled ?? null };
  await afterRelay(sim, call, call.relay.action);
  if (!call.dialled) await hangup(sim, call);
  else endAfterTransfer(sim, call);
  return { dialled: call.dialled ?? null };
}

/**
 * The person a transfer reached talks TRANSFER_SECONDS of call time, then hangs up: a call held by an
 * outside relay client (`call talk`, a test's) has no end in its timeline, and would otherwise stay up
 * (and billed) until its maximum duration. Counted as the simulator's activity until then.
 */
function endAfterTransfer(sim: SimState, call: SimCall): void {
  const due = Date.now() + wallMs(sim, call, TRANSFER_SECONDS);
  sim.playing.add(call);
  void sleepUntil(sim, due)
    .then(() => (sim.stopped ? undefined : hangup(sim, call)))
    .finally(() => sim.playing.delete(call));
}

/** Twilio's Call resource fields now: its status, and its duration and end time once it ended. */
export function callResource(
  sim: SimState,
  call: SimCall,
): { status: string; duration: string | null; end_time: string | null } {
  if (call.outcome) {
    return {
      status: call.outcome.status,
      duration: String(call.outcome.duration),
      end_time: new Date(call.outcome.endTime).toUTCString(),
    };
  }
  const elapsed = elapsedSeconds(sim, call);
  const { answerAt } = call.timeline;
  const status =
    answerAt !== undefined && elapsed >= answerAt ? 'in-progress' : elapsed >= 1 ? 'ringing' : 'queued';
  return { status, duration: null, end_time: null };
}

/** Someone dials one of our numbers: the voice webhook is asked, and an accepted call is played. */
export async function inbound(
  sim: SimState,
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
  const { gatewayUrl } = sim.options;
  const known = [...sim.numbers.values()].find((n) => n.phoneNumber === to);
  const voiceUrl = known?.voiceUrl ?? `${gatewayUrl}/webhooks/telephony/voice?event=incoming`;
  const statusCallback = known?.statusCallback ?? `${gatewayUrl}/webhooks/telephony/voice`;
  const callSid = sid('CA');
  const response = await postSigned(sim, voiceUrl, {
    AccountSid: ACCOUNT_SID,
    ApiVersion: '2010-04-01',
    CallSid: callSid,
    From: from,
    To: to,
    Direction: 'inbound',
    CallStatus: 'ringing',
  });
  if (response.status !== 200)
    throw new SimulatorError(
      502,
      `voice webhook answered ${response.status}: ${response.text.slice(0, 200)}`,
    );
  const twiml = parseTwiml(response.text);
  if (twiml.hangup) return { sid: callSid, accepted: false };
  const call = newCall(sim, {
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
  startPlaying(sim, call);
  return {
    sid: call.sid,
    accepted: true,
    call_id: call.callId,
    ...(externalRelay && call.relay
      ? { relay: { url: call.relay.url, parameters: call.relay.parameters, greeting: call.relay.greeting } }
      : {}),
  };
}
