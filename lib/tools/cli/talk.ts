import { createInterface } from 'node:readline';
import { LOCAL_TELEPHONY_AUTH_TOKEN } from '../../../functions/providers/telephony/index.js';
import type { StackState } from '../../local/state.js';
import { RelaySession } from '../../local/simulators/telephony/relay-client.js';
import { receiveCall } from './call.js';

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
  const lines = createInterface({ input: io.input, terminal: false });
  let ended = 'caller hung up';
  for await (const line of lines) {
    if (line.trim() === '') continue;
    io.output.write('agent> ');
    await session.say(line, { timeoutMs: 60_000, onToken: (token) => io.output.write(token) });
    io.output.write('\n');
    // The agent's `end` follows its last words.
    await session.waitForEnd(300);
    if (session.isOver) {
      ended = 'the agent ended the call';
      break;
    }
  }
  lines.close();
  const end = await session.waitForEnd(300);
  // The agent ended the session: the provider asks what next and hangs up (the simulator does as Twilio).
  if (end?.kind === 'agent') await providerSessionEnded(state, call.sid);
  session.hangUp();
  await session.waitForEnd(2_000);
  io.log(
    `${ended}; the call: GET ${state.base_url}/api/v1/workspaces/${call.relay.parameters.workspace_id}/calls/${call.call_id}`,
  );
  return { callId: call.call_id, ended };
}

async function providerSessionEnded(state: StackState, callSid: string): Promise<void> {
  const url = state.env.TELEPHONY_SIMULATOR_URL;
  const token = state.env.TELEPHONY_AUTH_TOKEN ?? LOCAL_TELEPHONY_AUTH_TOKEN;
  if (!url) return;
  await fetch(`${url.replace(/\/$/, '')}/calls/${encodeURIComponent(callSid)}/relay-ended`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(15_000),
  }).catch(() => undefined);
}
