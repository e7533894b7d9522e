import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  parseTwiml,
  type ParsedTwiml,
  type TranscriptTurn,
} from '../../../../functions/providers/telephony/twilio-format.js';
import { callParams, postSigned } from './callbacks.js';
import { RelaySession } from './relay-client.js';
import {
  AMD_MACHINE_SECONDS,
  CONVERSATION_SECONDS,
  LONG_CONVERSATION_SECONDS,
  scenarioFor,
  TRANSFER_SECONDS,
} from './scenarios.js';
import {
  ACCOUNT_SID,
  scaleOf,
  SETUP_GRACE_MS,
  sid,
  sleepUntil,
  talkedSoFar,
  wallMs,
  type SimCall,
  type SimState,
  type TelephonyOutboxLine,
} from './state.js';

/** The simulated caller of an answered call: its side of the conversation over the relay. */

/**
 * The caller's side of the conversation, over the relay: its lines spread over the scenario's talk
 * time (about 60 simulated seconds; 30 minutes for the long scenario), each said once the agent
 * answered the one before; then it waits for the agent's `end`, or hangs up. After an `end`, the
 * provider asks the `<Connect action>` what to do: `<Dial>` keeps the call up with the person for a
 * while, `<Hangup/>` ends it. The call's end and recording then move to when it ended.
 */
export async function converse(sim: SimState, call: SimCall): Promise<void> {
  const relay = call.relay!;
  const wanted = call.scenario === 'long' ? LONG_CONVERSATION_SECONDS : CONVERSATION_SECONDS;
  const talkLimit = Math.max(1, Math.min(wanted, call.timeline.talkSeconds));
  const session = new RelaySession({
    url: relay.url,
    authToken: sim.options.authToken,
    callSid: call.sid,
    from: call.from,
    to: call.to,
    direction: call.direction,
    parameters: relay.parameters,
  });
  call.session = session;
  const answerWall = call.startWall + wallMs(sim, call, call.timeline.answerAt ?? 0);
  const stop = new Promise<void>((resolveStop) => (call.stopConversation = resolveStop));
  // A machine says nothing: it records, until the agent's end or the scenario's talk time.
  const lines = call.scenario === 'machine' ? [] : callerLines(call);
  const opened = session.open();
  call.relayOpened = opened;
  if (await opened) {
    const setUp = Date.now() + SETUP_GRACE_MS;
    for (const [i, line] of lines.entries()) {
      // Spread so the last line (the goodbye) is said at the end of the scenario's talk time (60 s),
      // the first not before the session's setup had its time.
      const due = Math.max(setUp, answerWall + wallMs(sim, call, ((i + 1) * talkLimit) / lines.length));
      await Promise.race([sleepUntil(sim, due), stop]);
      if (session.isOver || call.hungUp || sim.stopped) break;
      await Promise.race([session.say(line, { timeoutMs: 30_000 }), stop]);
    }
    // The agent's `end` follows its goodbye; a caller who said all has nothing more and hangs up.
    // A machine records until it is hung up on: at least a few real seconds, however fast the call is played.
    const endWait =
      lines.length === 0
        ? Math.max(MACHINE_WAIT_MS, answerWall + wallMs(sim, call, talkLimit) - Date.now())
        : 2_000;
    const end = await Promise.race([session.waitForEnd(endWait), stop.then(() => undefined)]);
    if (!end) session.hangUp();
    // Like Twilio, the `<Connect action>` is asked when the session ended: after the agent's `end`, or
    // (a machine found before the session began) when the relay closed it at its setup.
    call.relayEnd = end?.kind ?? 'none';
    const asks =
      end?.kind === 'agent' || (end?.kind === 'dropped' && call.amd?.reported?.startsWith('machine'));
    if (asks && relay.action && !call.hungUp)
      await afterRelay(sim, call, relay.action, end?.kind === 'agent' ? end.handoffData : undefined);
  } else {
    // The relay refused the session: the caller hears nothing and hangs up at the scenario's end.
    await Promise.race([sleepUntil(sim, answerWall + wallMs(sim, call, talkLimit)), stop]);
  }
  call.transcript = transcriptOf(sim, call, session);
  if (call.hungUp) return;
  const talk = Math.max(
    1,
    Math.min(
      call.timeline.talkSeconds,
      heldForVoicemail(call) ??
        Math.ceil(talkedSoFar(sim, call)) +
          (call.dialled ? TRANSFER_SECONDS : 0) +
          call.said.length * SAY_SECONDS,
    ),
  );
  const shift = talk - call.timeline.talkSeconds;
  const answerEnd = (call.timeline.answerAt ?? 0) + 1;
  call.timeline = {
    ...call.timeline,
    talkSeconds: talk,
    steps: call.timeline.steps.map((step) => (step.at > answerEnd ? { ...step, at: step.at + shift } : step)),
  };
}

/** What was said on the call (its greeting, then the session's lines), in simulated seconds from the answer. */
export function transcriptOf(sim: SimState, call: SimCall, session: RelaySession): TranscriptTurn[] {
  const answerWall = call.startWall + wallMs(sim, call, call.timeline.answerAt ?? 0);
  const greeting: TranscriptTurn[] = call.relay?.greeting
    ? [{ role: 'agent', text: call.relay.greeting, offset_seconds: 0 }]
    : [];
  const spoken = session.lines.map((line) => ({
    role: line.role,
    text: line.text,
    offset_seconds: Math.max(0, Math.floor(((line.at - answerWall) * scaleOf(sim, call)) / 1000)),
  }));
  const end = Math.ceil(talkedSoFar(sim, call));
  return [
    ...greeting,
    ...spoken,
    ...call.said.map((text) => ({ role: 'agent' as const, text, offset_seconds: end })),
  ];
}

/**
 * A machine's line is held for its greeting up to the beep (the detection's seconds), the service's
 * reaction to the detection (in real seconds: a phone line does not play it faster, so it is not
 * scaled like the simulated conversation), and the message said after the beep (by its length): what
 * Twilio bills for a voicemail. Undefined when no machine was reported.
 */
function heldForVoicemail(call: SimCall): number | undefined {
  const reportedAt = call.amd?.reportedAt;
  if (call.scenario !== 'machine' || !call.amd?.reported?.startsWith('machine') || reportedAt === undefined)
    return undefined;
  const reaction = Math.ceil((Date.now() - reportedAt) / 1000);
  return AMD_MACHINE_SECONDS + reaction + call.said.reduce((sum, text) => sum + sayingSeconds(text), 0);
}

/** Simulated seconds a `<Say>` of `text` takes on a machine: 150 words a minute, at least one second. */
export const sayingSeconds = (text: string): number =>
  Math.max(1, Math.ceil(text.trim().split(/\s+/).filter(Boolean).length / 2.5));

/** Wall-clock ms a machine waits at least for the agent's end (the detection comes after the session's setup). */
const MACHINE_WAIT_MS = 5_000;

/** Simulated seconds a `<Say>` takes. */
const SAY_SECONDS = 5;

/** Appends one line to `outbox/telephony.jsonl` (what the far end heard outside the relay). */
function keepHeard(sim: SimState, line: Omit<TelephonyOutboxLine, 'at'>): void {
  const path = sim.options.outboxPath;
  if (!path) return;
  mkdirSync(dirname(path), { recursive: true });
  appendFileSync(path, `${JSON.stringify({ at: new Date().toISOString(), ...line })}\n`);
}

/**
 * The `<Connect action>` after the agent's end: hang up, say something first (a voicemail: the
 * machine keeps it), or dial the number it names — a person who, for a warm transfer, first hears the
 * whisper (`<Number url>`), and whose dial's end goes to `<Dial action>`.
 */
export async function afterRelay(
  sim: SimState,
  call: SimCall,
  action: string,
  /** The agent's `end` frame's `handoffData`, passed on as Twilio does. */
  handoffData?: string,
): Promise<void> {
  try {
    const response = await postSigned(sim, action, {
      ...callParams(call),
      CallStatus: 'in-progress',
      SessionStatus: 'ended',
      ...(handoffData ? { HandoffData: handoffData } : {}),
    });
    const next = parseTwiml(response.text);
    heard(sim, call, next.say);
    if (next.dial && (next.dialAction || next.numberUrl)) await dialPerson(sim, call, next);
    else if (next.dial) call.dialled = next.dial;
  } catch (error) {
    console.warn(`[telephony simulator] relay action failed for ${call.sid}: ${String(error)}`);
  }
}

/** What the provider said on the call; on a machine it is the voicemail left. */
function heard(sim: SimState, call: SimCall, said: string[]): void {
  for (const text of said) {
    call.said.push(text);
    if (call.scenario === 'machine') keepHeard(sim, { provider_call_id: call.sid, kind: 'voicemail', text });
  }
}

/** How a dialled person's number answers (DialCallStatus), by the same scenario numbers. */
function dialStatus(to: string): string {
  switch (scenarioFor(to)) {
    case 'busy':
      return 'busy';
    case 'no_answer':
      return 'no-answer';
    case 'failed':
      return 'failed';
    default:
      return 'completed';
  }
}

/**
 * A `<Dial action><Number url>`: the person's leg is placed; answered, it fetches the whisper URL
 * (signed, with the caller's call as `ParentCallSid`) and the person hears it before being
 * connected; then the dial's end is POSTed to its action, whose answer the caller hears.
 */
async function dialPerson(sim: SimState, call: SimCall, twiml: ParsedTwiml): Promise<void> {
  const to = twiml.dial ?? '';
  const status = dialStatus(to);
  const leg = sid('CA');
  call.transfer = { to, status };
  if (status === 'completed' && twiml.numberUrl) {
    const response = await postSigned(sim, twiml.numberUrl, {
      AccountSid: ACCOUNT_SID,
      ApiVersion: '2010-04-01',
      CallSid: leg,
      ParentCallSid: call.sid,
      From: call.from,
      To: to,
      Direction: 'outbound-dial',
      CallStatus: 'in-progress',
    });
    const whisper = parseTwiml(response.text).say.join(' ').trim();
    if (response.status === 200 && whisper) {
      call.transfer.whisper = whisper;
      keepHeard(sim, { provider_call_id: call.sid, kind: 'whisper', text: whisper });
    }
  }
  if (status === 'completed') call.dialled = to;
  if (twiml.dialAction) {
    const response = await postSigned(sim, twiml.dialAction, {
      ...callParams(call),
      CallStatus: 'in-progress',
      DialCallSid: leg,
      DialCallStatus: status,
      DialCallDuration: String(status === 'completed' ? TRANSFER_SECONDS : 0),
    });
    heard(sim, call, parseTwiml(response.text).say);
  }
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
