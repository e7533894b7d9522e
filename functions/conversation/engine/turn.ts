import type { ConversationSetup, ConversationState } from './model.js';
import type { BegunTurn } from './store.js';
import { DEFAULT_TURN_DEADLINE_MS, type EngineDeps, type TurnResult } from './ports.js';
import { applyTurnStart, turnStart, type TurnInput, type TurnStart } from './turn-start.js';
import { TurnWork, type HandedOver } from './turn-work.js';
import { logger } from '../../platform/logger.js';
import { errorName } from '../../platform/programming-errors.js';

/**
 * The conversation engine: one turn of the agent per caller prompt. No transport or AWS type here —
 * ConversationRelay (a phone call), the test chat and an evaluation's scripted caller
 * (../transports/) drive the same turns through `ConversationOutput`, on a `ConversationStore`
 * (store.ts; the table's in ../storage/).
 *
 * A turn: the prompt is recorded and the call's generation bumped, while the model is already asked;
 * the model streams the reply, which leaves in clause-sized pieces as each clause completes; tool calls
 * run between model rounds (at most MAX_TOOL_ROUNDS); the last piece carries `last`, after the turn
 * is kept. The work of one turn is turn-work.ts's; whether it may still send or act is its
 * `TurnGuard`'s answer (turn-guard.ts: the generation, the version, the proof each piece needs). The
 * model failing, a tool failing or the turn's deadline passing: the caller hears a short apology,
 * never silence. Interruptions and hang-ups are interruption.ts.
 */

/**
 * One turn: the caller said `input.text` (or pressed a key); the agent answers. `started`: the turn's
 * start as the frame computed it, and, when the frame already wrote it (the store's `beginTurn`, one
 * write returning the item: the frame had nothing in hand), what that write stored.
 */
export async function runTurn(
  deps: EngineDeps,
  input: TurnInput,
  started?: { start: TurnStart; written?: BegunTurn },
): Promise<TurnResult> {
  const now = deps.now ?? Date.now;
  const start = started?.start ?? turnStart(input, now());
  const { receivedAt } = start;
  const deadline = receivedAt + (deps.turnDeadlineMs ?? DEFAULT_TURN_DEADLINE_MS);
  const begin = (state: ConversationState, setup: ConversationSetup): ConversationState =>
    applyTurnStart(state, setup, start);

  if (started?.written) {
    const { written } = started;
    if (written.stored.state.ended) return { spoken: '', superseded: true };
    return closeTurn(deps, await runOnWritten(deps, written, receivedAt, deadline));
  }

  // The model is asked at once, on the state this frame has in hand, while the turn's start is written:
  // the write is then off the caller's wait. Had another frame changed the state in between (the write
  // found a version it did not expect), that request is dropped unheard and the model asked again on
  // what the write returned.
  const inHand = await deps.store.load();
  if (!inHand) throw new Error('conversation not found');
  const startWrite: Promise<BegunTurn> = deps.store.beginTurn
    ? deps.store.beginTurn(start).then((written) => {
        if (!written) throw new Error('conversation not found');
        return written;
      })
    : deps.store.update(begin).then((stored) => ({ stored, generation: stored.state.generation }));
  if (inHand.state.ended) {
    await startWrite;
    return { spoken: '', superseded: true };
  }
  const generationIfInHandHeld = startWrite.then((written) =>
    written.stored.version === inHand.version + 1 ? written.generation : undefined,
  );
  const onInHand = new TurnWork(
    deps,
    inHand.setup,
    generationIfInHandHeld,
    receivedAt,
    deadline,
    inHand.state,
  );
  generationIfInHandHeld.then(
    (generation) => generation === undefined && onInHand.drop(),
    () => onInHand.drop(),
  );
  const [written] = await Promise.all([startWrite, onInHand.run(begin(inHand.state, inHand.setup).history)]);
  if (written.stored.state.ended) return { spoken: '', superseded: true };
  const turn = onInHand.dropped ? await runOnWritten(deps, written, receivedAt, deadline) : onInHand;
  return closeTurn(deps, turn);
}

/** A turn asked on the state its written start returned, with the generation that write stored. */
async function runOnWritten(
  deps: EngineDeps,
  written: BegunTurn,
  receivedAt: number,
  deadline: number,
): Promise<TurnWork> {
  const { stored } = written;
  const turn = new TurnWork(
    deps,
    stored.setup,
    Promise.resolve(written.generation),
    receivedAt,
    deadline,
    stored.state,
  );
  await turn.run(stored.state.history);
  return turn;
}

/**
 * Keeps the turn, then ends its reply and, when the agent ended the call, says so — both only when
 * the closing write found the turn current (turn-guard.ts "Closing"). A turn that hands over has the
 * target's model asked meanwhile (`askTargetAhead`): its words wait for the switch to be stored.
 */
async function closeTurn(deps: EngineDeps, turn: TurnWork): Promise<TurnResult> {
  const target = await askTargetAhead(deps, turn);
  try {
    const result = await turn.finish();
    if (result.superseded) return result;
    const switched = turn.handedOver;
    // The switch is stored: the target's proof may be read while the handing agent's `last` goes.
    const asked = switched && target && storedAsAsked(target, switched) ? target : undefined;
    asked?.hold(switched!.generation);
    await turn.sendLast();
    // Kept before it is said: the session's end (a socket closing at once) finds the conversation ended.
    if (result.ended) await deps.output.end(result.ended);
    if (switched) await targetSpeaksFirst(deps, turn, switched, target, asked);
    return result;
  } finally {
    // Not stored, overtaken, or a failure on the way: the target is dropped unheard (once it has
    // spoken and closed, each of these is a no-op).
    if (target) {
      target.hold(undefined);
      target.turn.drop();
      target.openSending();
      void settled(target.running);
    }
  }
}

interface TargetAhead {
  turn: TurnWork;
  deps: EngineDeps;
  state: ConversationState;
  setup: ConversationSetup;
  running: Promise<void>;
  /** The generation the switch stored, once stored (undefined: it was not, the target is dropped). */
  hold: (generation: number | undefined) => void;
  /** The handing agent's reply is ended (and the language set): the target's words may go. */
  openSending: () => void;
}

/**
 * The target's first reply asked as soon as the turn has handed over, on the switch the closing write
 * is about to store: the model's time to its first words overlaps the switch's write and the handing
 * agent's `last`. Nothing of it is sent before `hold` gives it the switch's generation (each piece then
 * needs its proof as any turn's).
 */
async function askTargetAhead(deps: EngineDeps, from: TurnWork): Promise<TargetAhead | undefined> {
  const ahead = from.switchAhead;
  if (!ahead) return undefined;
  let hold!: (generation: number | undefined) => void;
  const switchedGeneration = new Promise<number | undefined>((resolve) => (hold = resolve));
  let openSending!: () => void;
  const sendingOpens = new Promise<void>((resolve) => (openSending = resolve));
  const targetDeps = await depsOfTarget(deps, ahead.setup);
  const turn = new TurnWork(
    targetDeps,
    ahead.setup,
    switchedGeneration,
    (deps.now ?? Date.now)(),
    from.turnDeadline,
    ahead.state,
    sendingOpens,
  );
  const running = turn.run(ahead.state.history);
  return { turn, deps: targetDeps, state: ahead.state, setup: ahead.setup, running, hold, openSending };
}

/** The engine's ports for the target's turns: its own tools, not the handing agent's. */
async function depsOfTarget(deps: EngineDeps, setup: ConversationSetup): Promise<EngineDeps> {
  if (!deps.forAgent) return deps;
  const { agentTools: _handingAgents, ...shared } = deps;
  return { ...shared, ...(await deps.forAgent(setup)) };
}

/** The switch as stored is the one the target was asked on (the handing turn was current throughout). */
const storedAsAsked = (ahead: TargetAhead, switched: HandedOver): boolean =>
  switched.stored.setup.system === ahead.setup.system &&
  JSON.stringify(switched.stored.state.history) === JSON.stringify(ahead.state.history) &&
  (switched.stored.state.handoffs?.length ?? 0) === (ahead.state.handoffs?.length ?? 0);

/**
 * The handoff was written: the target speaks first, without waiting for the caller — a `language`
 * frame before its words when its language differs — as a turn of the generation the switch stored
 * (an interruption cuts its words as any reply's; the handoff stands).
 */
async function targetSpeaksFirst(
  deps: EngineDeps,
  from: TurnWork,
  switched: HandedOver,
  ahead: TargetAhead | undefined,
  /** `ahead`, when the switch stored is the one it was asked on (it holds the switch's generation). */
  asked: TargetAhead | undefined,
): Promise<void> {
  const { setup, state } = switched.stored;
  if (ahead && !asked) {
    ahead.hold(undefined);
    await settled(ahead.running);
  }
  if (setup.language && setup.language !== from.agentLanguage) await deps.output.language?.(setup.language);
  if (asked) {
    asked.openSending();
    await asked.running;
    await closeTurn(asked.deps, asked.turn);
    return;
  }
  const targetDeps = await depsOfTarget(deps, setup);
  const turn = new TurnWork(
    targetDeps,
    setup,
    Promise.resolve(switched.generation),
    (deps.now ?? Date.now)(),
    from.turnDeadline,
    state,
  );
  await turn.run(state.history);
  await closeTurn(targetDeps, turn);
}

/** A dropped request's end: it was never heard, so its failure is only logged. */
async function settled(running: Promise<void>): Promise<void> {
  try {
    await running;
  } catch (error) {
    logger.warn('a handoff target asked ahead failed after it was dropped', { error: errorName(error) });
  }
}
