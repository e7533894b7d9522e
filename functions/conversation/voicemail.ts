import type { Call } from '../calling/entities.js';
import { ConnectionGone, postToConnection } from '../platform/connections.js';
import { logger } from '../platform/logger.js';
import { offset } from './engine/turn-start.js';
import { TableConversationStore } from './storage/table-store.js';
import { callListing, emptyState } from './engine/model.js';
import { recordConversation } from './storage/record.js';

/**
 * Answering-machine detection found a machine on the call (calling/amd.ts hands it here): the agent
 * stops. ConversationRelay has no server-side "stop speaking", and `end` hands the call back to the
 * provider's TwiML, so: the conversation's generation moves on (nothing more of a reply being made is
 * sent: turn.ts checks it before every piece), it is marked ended by `voicemail` (so the session's end
 * does not hang the call up as a caller's would), the message to be left is kept as the agent's last
 * line of the transcript, and the relay session is ended (`end`). The `<Connect action>` answer
 * (calling/relay-ended.ts) then says the message and hangs up, or just hangs up. A call without a
 * session yet has nothing to stop: the relay refuses its setup (transports/relay.ts).
 */
export async function stopForVoicemail(call: Call): Promise<void> {
  const connectionId = call.relayConnectionId;
  if (!connectionId || call.channel === 'web') return;
  const message = call.voicemailAction === 'leave_message' ? call.voicemailMessage?.trim() : undefined;
  const store = new TableConversationStore(connectionId);
  const stored = await store.update((state, setup) =>
    state.ended
      ? state
      : {
          ...state,
          generation: state.generation + 1,
          ended: { reason: 'voicemail' },
          transcript: message
            ? [
                ...state.transcript,
                { role: 'agent', text: message, offsetSeconds: offset(setup, Date.now()) },
              ]
            : state.transcript,
        },
  );
  if (stored.state.ended?.reason !== 'voicemail') return; // the conversation had ended already
  try {
    await postToConnection(connectionId, {
      type: 'end',
      handoffData: JSON.stringify({ reason: 'voicemail' }),
    });
  } catch (error) {
    if (!(error instanceof ConnectionGone)) throw error;
  }
  logger.info('agent stopped: answered by a machine', { callId: call.callId, connectionId });
}

/**
 * A machine answered before the relay session was set up (the detection raced the setup): no
 * conversation runs, and the call's transcript is what the machine will hear (the message, or
 * nothing), written as a session's end would write it (the post-call pipeline waits for it).
 */
export async function recordWithoutSession(call: Call): Promise<void> {
  const message = call.voicemailAction === 'leave_message' ? call.voicemailMessage?.trim() : undefined;
  const state = emptyState('');
  await recordConversation(
    call,
    {
      ...state,
      transcript: message ? [{ role: 'agent', text: message, offsetSeconds: 0 }] : [],
      ended: { reason: 'voicemail' },
    },
    callListing((call.parameters ?? {}) as Record<string, string>),
  );
}
