import type { ConversationSetup, ConversationState } from './model.js';
import type { ConversationStore } from './store.js';
import { recordMetrics, type MetricChannel } from '../../platform/metrics.js';
import { offset } from './turn-start.js';

/**
 * What happens between turns: the caller interrupts a reply, or hangs up. Both move the conversation's
 * generation on, which is what stops a reply being sent (turn.ts checks it before every piece).
 */

/**
 * The caller spoke over the agent: nothing more of the reply being spoken is sent (the generation
 * moves on), and the history keeps only what the caller heard of it. `at`: when the interruption
 * reached the socket. One that reached it no later than the frame of the latest turn was handled
 * late (frames are handled in parallel): it concerns the reply before that turn, which the turn's
 * prompt already stopped, so the turn goes on and only what was heard of that reply is kept, before
 * the turn's line.
 */
export async function interrupt(
  store: ConversationStore,
  heard: string,
  at: number = Date.now(),
  channel?: MetricChannel,
): Promise<void> {
  recordMetrics({ Interruptions: 1 }, channel);
  await store.update((state, setup) => {
    if (cameBeforeLatestTurn(state, at, heard)) return keepHeardBeforeTurn(state, setup, heard, at);
    const cut = heard.trim();
    const history = [...state.history];
    const transcript = [...state.transcript];
    const lastMessage = history[history.length - 1];
    const lastEntry = transcript[transcript.length - 1];
    if (lastMessage?.role === 'assistant' && lastEntry?.role === 'agent') {
      // The reply was kept whole (its turn ended before the caller spoke): cut it to what was heard.
      history[history.length - 1] = { ...lastMessage, content: cut };
      transcript[transcript.length - 1] = { ...lastEntry, text: cut, interrupted: true };
    } else if (cut !== '') {
      history.push({ role: 'assistant', content: cut });
      transcript.push({
        role: 'agent',
        text: cut,
        offsetSeconds: offset(setup, at),
        interrupted: true,
        agentId: setup.agentId,
      });
    }
    return { ...state, generation: state.generation + 1, history, transcript };
  });
}

/**
 * The interruption reached the socket before the frame of the latest turn. In the same millisecond it
 * cannot concern that turn's reply (none of it could have been heard yet) unless the reply, already
 * kept, begins with what the caller heard: a handler given the same clock reading twice (a test's, a
 * fast turn's) is told apart by the words, not by whether that turn has finished.
 */
function cameBeforeLatestTurn(state: ConversationState, at: number, heard: string): boolean {
  if (state.turnFrameAt === undefined) return false;
  if (at !== state.turnFrameAt) return at < state.turnFrameAt;
  const latest = state.history.at(-1);
  if (latest?.role !== 'assistant') return true;
  const words = squeezed(heard);
  return words === '' || !squeezed(latest.content).startsWith(words);
}

const squeezed = (text: string) => text.replace(/\s+/g, ' ').trim();

/** A late interruption: what was heard of the reply before the latest turn, kept before that turn's line. */
function keepHeardBeforeTurn(
  state: ConversationState,
  setup: ConversationSetup,
  heard: string,
  at: number,
): ConversationState {
  const cut = heard.trim();
  const history = [...state.history];
  const transcript = [...state.transcript];
  const line = history.findLastIndex((m) => m.role === 'user');
  const lineEntry = transcript.findLastIndex((t) => t.role === 'user');
  if (line < 0 || lineEntry < 0) return state;
  const before = history[line - 1];
  const beforeEntry = transcript[lineEntry - 1];
  if (before?.role === 'assistant' && beforeEntry?.role === 'agent') {
    // That reply was kept whole (its turn ended before the caller spoke): cut it to what was heard.
    history[line - 1] = { ...before, content: cut };
    transcript[lineEntry - 1] = { ...beforeEntry, text: cut, interrupted: true };
  } else if (cut !== '') {
    history.splice(line, 0, { role: 'assistant', content: cut });
    transcript.splice(lineEntry, 0, {
      role: 'agent',
      text: cut,
      offsetSeconds: Math.min(offset(setup, at), transcript[lineEntry].offsetSeconds),
      interrupted: true,
      agentId: setup.agentId,
    });
  }
  return { ...state, history, transcript };
}

/** The caller hung up (or the socket dropped): the conversation is over. */
export async function endByCaller(store: ConversationStore): Promise<ConversationState> {
  const stored = await store.update((state) =>
    state.ended ? state : { ...state, generation: state.generation + 1, ended: { reason: 'caller_hangup' } },
  );
  return stored.state;
}
