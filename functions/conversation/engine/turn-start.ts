import type { ConversationIncident, ConversationSetup, ConversationState } from './model.js';

/**
 * A turn's start: the caller's line (or key press) as the model and the transcript take it, when the
 * turn began, and the start applied to the conversation's state (the caller's line kept, the
 * generation moved on). Computed once per frame (turn.ts runs the turn; storage/table-store.ts folds
 * starts written ahead of a read).
 */

/** A caller's line longer than this is cut (speech-to-text never produces one; a client might). */
export const MAX_PROMPT_CHARS = 4_000;

/** Seconds from the conversation's start to `at`, in call time (the simulator plays calls faster). */
export const offset = (setup: ConversationSetup, at: number) =>
  Math.max(0, Math.floor(((at - Date.parse(setup.startedAt)) / 1000) * setup.timeScale));

/** The caller's key press, as the model reads it. */
export const dtmfLine = (digit: string) => `The caller pressed the key "${digit}".`;

/** `at`: when the frame reached the socket (the gateway's time of it); now when not given. */
export type TurnInput = ({ kind: 'prompt'; text: string } | { kind: 'dtmf'; digit: string }) & {
  at?: number;
};

/**
 * What a turn's start records: the caller's line (or key) and when it came. Computed once per frame, so
 * that a start applied again (a write that had to read again, a pending start folded in: store.ts)
 * records the same thing.
 */
export interface TurnStart {
  /** What the model reads (the line, cut to MAX_PROMPT_CHARS; a key press in words). */
  userText: string;
  /** What the transcript shows. */
  transcriptText: string;
  /** When the turn began (ms): the frame's gateway time when plausible, else when it was handled. */
  receivedAt: number;
  /** The frame's gateway time as given (the call detail's latency is timed from it). */
  frameAt: number;
  incidents: ConversationIncident[];
}

export function turnStart(input: TurnInput, now: number): TurnStart {
  const receivedAt = frameTime(input.at, now);
  let userText = input.kind === 'prompt' ? input.text.trim() : dtmfLine(input.digit);
  const incidents: ConversationIncident[] = [];
  if (userText.length > MAX_PROMPT_CHARS) {
    userText = userText.slice(0, MAX_PROMPT_CHARS);
    incidents.push({ at: iso(receivedAt), kind: 'prompt_truncated', detail: `cut to ${MAX_PROMPT_CHARS}` });
  }
  const transcriptText = input.kind === 'prompt' ? userText : `(pressed ${input.digit})`;
  return { userText, transcriptText, receivedAt, frameAt: input.at ?? receivedAt, incidents };
}

/** The turn's start applied to a state: the caller's line kept and the generation bumped (none once ended). */
export function applyTurnStart(
  state: ConversationState,
  setup: ConversationSetup,
  start: TurnStart,
): ConversationState {
  return state.ended
    ? state
    : {
        ...state,
        generation: state.generation + 1,
        history: [...state.history, { role: 'user', content: start.userText }],
        transcript: [
          ...state.transcript,
          { role: 'user', text: start.transcriptText, offsetSeconds: offset(setup, start.receivedAt) },
        ],
        incidents: [...state.incidents, ...start.incidents],
        turnFrameAt: start.frameAt,
        // The caller spoke: the agent the call was handed from may be offered again.
        handedFromAgentId: undefined,
      };
}

/** A frame's gateway time further back than this is another clock's, not a wait. */
const MAX_FRAME_WAIT_MS = 10_000;

/**
 * When the turn began: the time its frame reached the socket (the gateway's), not when its handler
 * began — the caller waited from then. Clocks differ a little: never later than now, and a time too
 * far back for a wait (another clock, a test's) is not taken.
 */
function frameTime(at: number | undefined, now: number): number {
  return at === undefined || at > now || now - at > MAX_FRAME_WAIT_MS ? now : at;
}

const iso = (ms: number) => new Date(ms).toISOString();
