import { createInterface } from 'node:readline';
import { LOCAL_TELEPHONY_AUTH_TOKEN } from '../../../functions/providers/telephony/index.js';
import type { StackState } from '../../local/state.js';
import { RelaySession } from '../../local/simulators/telephony/relay-client.js';
import { receiveCall } from './call.js';

/** A call's longest (an agent's maximum duration is at most an hour): the session's end is awaited this long at most. */
const MAX_SESSION_MS = 4 * 3600 * 1000;
/**
 * Lines piped in (not typed) are said one after the other, each once the agent has finished: after a
 * reply, this long with nothing more heard (a handoff's target speaks right after the handing agent's
 * last words) before the next line.
 */
const PIPED_QUIET_MS = 1_000;

/**
 * `npm run cli -- call talk --to NUMBER [--from E164]`: be the caller. The telephony simulator dials
 * one of our numbers (an inbound call, logged like any other) and leaves its relay session to this
 * command, which opens it as ConversationRelay would (signed with the stack's telephony token): each
 * typed line is a `prompt`, the agent's reply prints as it streams; Ctrl-D hangs up.
 */
export async function talk(
  state: StackState,
  input: { from: string; to: string },
  io: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream; log: (line: string) => void },
): Promise<{ callId?: string; ended: string }> {
  const call = await receiveCall(state, { ...input, externalRelay: true });
  if (!call.accepted || !call.relay) {
    io.log(`refused: nobody answered ${input.to}`);
    return { ended: 'refused' };
  }
  const session = new RelaySession({
    url: call.relay.url,
    authToken: state.env.TELEPHONY_AUTH_TOKEN ?? LOCAL_TELEPHONY_AUTH_TOKEN,
    callSid: call.sid,
    from: input.from,
    to: input.to,
    direction: 'inbound',
    parameters: call.relay.parameters,
  });
  if (!(await session.open())) {
    io.log('the voice relay refused the session');
    return { callId: call.call_id, ended: 'refused' };
  }
  io.log(`${call.call_id} connected: type what you say, Enter to send, Ctrl-D to hang up`);
  if (call.relay.greeting) io.output.write(`agent> ${call.relay.greeting}\n`);
  // A handoff's target speaks first, without being asked: its words print as they come.
  let speaking = false;
  let heardAt = 0;
  session.onUnasked((token, last) => {
    heardAt = Date.now();
    if (!speaking && token !== '') io.output.write('agent> ');
    speaking ||= token !== '';
    io.output.write(token);
    if (last && speaking) {
      io.output.write('\n');
      speaking = false;
    }
  });
  const lines = createInterface({ input: io.input, terminal: false });
  let ended = 'caller hung up';
  // The agent's `end` follows its last words (a warm transfer's once its summary is written): the
  // session stops waiting for the caller's next line then.
  void session.waitForEnd(MAX_SESSION_MS).then((end) => {
    if (end?.kind !== 'agent') return;
    ended = 'the agent ended the call';
    lines.close();
  });
  const typed = (io.input as { isTTY?: boolean }).isTTY === true;
  /** Until the agent has finished: its words unasked included (typed: while they stream; piped: and a quiet moment after). */
  const agentDone = async () => {
    const quietMs = typed ? 0 : PIPED_QUIET_MS;
    for (;;) {
      if (session.isOver) return;
      const wait = speaking ? 50 : heardAt + quietMs - Date.now();
      if (wait <= 0) return;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  };
  for await (const line of lines) {
    if (line.trim() === '') continue;
    await agentDone();
    if (session.isOver) break;
    io.output.write('agent> ');
    await session.say(line, { timeoutMs: 60_000, onToken: (token) => io.output.write(token) });
    io.output.write('\n');
    heardAt = Date.now();
    if (session.isOver) break;
  }
  lines.close();
  const end = await session.waitForEnd(300);
  // The agent ended the session: the provider asks what next and hangs up, or dials the transfer's
  // person, who talks a while and hangs up (the simulator does as Twilio).
  const dialled = end?.kind === 'agent' ? await providerSessionEnded(state, call.sid) : null;
  if (dialled)
    ended = `the agent transferred the call to ${dialled} (the person there talks about 30 s, then the call completes)`;
  session.hangUp();
  await session.waitForEnd(2_000);
  io.log(
    `${ended}; the call: GET ${state.base_url}/api/v1/workspaces/${call.relay.parameters.workspace_id}/calls/${call.call_id}`,
  );
  return { callId: call.call_id, ended };
}

/** Tells the simulator the session ended with the agent's `end`; the number it dialled on, if any. */
async function providerSessionEnded(state: StackState, callSid: string): Promise<string | null> {
  const url = state.env.TELEPHONY_SIMULATOR_URL;
  const token = state.env.TELEPHONY_AUTH_TOKEN ?? LOCAL_TELEPHONY_AUTH_TOKEN;
  if (!url) return null;
  try {
    const response = await fetch(
      `${url.replace(/\/$/, '')}/calls/${encodeURIComponent(callSid)}/relay-ended`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(15_000),
      },
    );
    if (!response.ok) return null;
    return ((await response.json()) as { dialled?: string | null }).dialled ?? null;
  } catch {
    return null;
  }
}
