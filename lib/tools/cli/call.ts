import { isE164 } from '../../../functions/platform/phone.js';
import type { StackState } from '../../local/state.js';

/** What the telephony simulator answers when it dials one of our numbers (its `POST /inbound`). */
export interface InboundCall {
  /** The provider's call id (Twilio's `CallSid`). */
  sid: string;
  /** Whether the service answered (an agent took the call) or refused it. */
  accepted: boolean;
  /** Our call id, when the service answered. */
  call_id?: string;
  /** With `externalRelay`: the relay session the caller opens (`call talk`). */
  relay?: { url: string; parameters: Record<string, string>; greeting: string };
}

/**
 * `npm run cli -- call receive --from E164 --to E164`: the running stack's telephony simulator dials
 * `to` from `from`, exactly as a caller on the phone network would — the service's voice webhook
 * decides whether an agent answers (and logs a refused call the agent did not answer as missed).
 * `says` (`--say`, repeatable): what the simulated caller says to the agent (its language model
 * answers; asking about a property makes it search the agent's knowledge bases).
 * Uses the simulator's private REST endpoint with its token, both read from the stack's state.
 */
export async function receiveCall(
  state: StackState,
  input: { from: string; to: string; says?: string[]; externalRelay?: boolean },
): Promise<InboundCall> {
  for (const [name, value] of Object.entries({ from: input.from, to: input.to })) {
    if (!isE164(value)) throw new Error(`--${name} must be a phone number in E.164 format (+61…): ${value}`);
  }
  const url = state.env.TELEPHONY_SIMULATOR_URL;
  const token = state.env.TELEPHONY_AUTH_TOKEN;
  if (!url || !token)
    throw new Error('The local stack runs no telephony simulator (TELEPHONY_SIMULATOR_URL)');
  const response = await fetch(`${url.replace(/\/$/, '')}/inbound`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      from: input.from,
      to: input.to,
      says: input.says ?? [],
      external_relay: input.externalRelay === true,
    }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`the telephony simulator refused the call: ${response.status} ${text}`);
  return JSON.parse(text) as InboundCall;
}

/** One line for a person: what happened to the call, and where to look. */
export function describeInboundCall(call: InboundCall, input: { from: string; to: string }): string {
  if (call.accepted) {
    return `${call.call_id ?? call.sid} in progress: an agent answered ${input.to} (caller ${input.from}, provider call ${call.sid})`;
  }
  return (
    `refused: nobody answered ${input.to} (provider call ${call.sid}); when its agent is not answering, ` +
    'the call log shows a missed call (failed, end_reason not_answering)'
  );
}
