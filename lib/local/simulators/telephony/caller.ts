import { parseTwiml, type TranscriptTurn } from '../../../../functions/providers/telephony/twilio-format.js';
import { callParams, postSigned } from './callbacks.js';
import { RelaySession } from './relay-client.js';
import { CONVERSATION_SECONDS, LONG_CONVERSATION_SECONDS, TRANSFER_SECONDS } from './scenarios.js';
import { scaleOf, sleepUntil, talkedSoFar, wallMs, type SimCall, type SimState } from './state.js';

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
  const lines = callerLines(call);
  if (await session.open()) {
    for (const [i, line] of lines.entries()) {
      // Spread so the last line (the goodbye) is said at the end of the scenario's talk time (60 s).
      const due = answerWall + wallMs(sim, call, ((i + 1) * talkLimit) / lines.length);
      await Promise.race([sleepUntil(sim, due), stop]);
      if (session.isOver || call.hungUp || sim.stopped) break;
      await Promise.race([session.say(line, { timeoutMs: 30_000 }), stop]);
    }
    // The agent's `end` follows its goodbye; a caller who said all has nothing more and hangs up.
    const end = await Promise.race([session.waitForEnd(2_000), stop.then(() => undefined)]);
    if (!end) session.hangUp();
    if (end?.kind === 'agent' && relay.action && !call.hungUp) await afterRelay(sim, call, relay.action);
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
      Math.ceil(talkedSoFar(sim, call)) + (call.dialled ? TRANSFER_SECONDS : 0),
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
  return [
    ...greeting,
    ...session.lines.map((line) => ({
      role: line.role,
      text: line.text,
      offset_seconds: Math.max(0, Math.floor(((line.at - answerWall) * scaleOf(sim, call)) / 1000)),
    })),
  ];
}

/** The `<Connect action>` after the agent's end: hang up, or dial the number it names. */
export async function afterRelay(sim: SimState, call: SimCall, action: string): Promise<void> {
  try {
    const response = await postSigned(sim, action, {
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
