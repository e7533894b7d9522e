import { logger } from '../../platform/logger.js';
import { errorName } from '../../platform/programming-errors.js';

/**
 * Whether a turn may still act — send a piece of its reply, run a tool, end the call. The turn's
 * protocol in one place:
 *
 * - **Generation.** Every turn's start adds one to the conversation's generation, and so does an
 *   interruption or the caller hanging up. A turn's generation is the one its own start write stored
 *   (never one a later read finds: a newer frame may have moved it on already). A turn may act only
 *   while the stored generation is its own; once another frame moved it, the turn stops for good
 *   (nothing more is sent or run, its model request and tool requests are aborted).
 * - **Version.** Every write is conditioned on the item's version (store.ts). A turn may ask the model
 *   on the state its frame had in hand while its start is written; when that write shows another frame
 *   changed the item first, the state asked on did not hold: the turn is *dropped* — its request goes
 *   unheard — and asked again on what its start write returned. A frame with nothing in hand (the cloud
 *   path: a fresh container) writes its start first and asks the model on what that write returned.
 * - **Proof.** A piece is sent only after a consistent read of the generation, begun after everything
 *   the turn sent before it, found the turn current. Pieces that became ready while that read was out
 *   go with it (turn.ts `say`): a model streaming faster than a read costs one read, not one a piece.
 *   A request to an agent's own tool is made ready (checked, signed, connected) while its proof is
 *   read and goes only once the proof finds the turn current (the `speak_during` line's proof is the
 *   tool's). A built-in tool (ending, transferring, searching the knowledge base) acts on nothing
 *   outside the turn before its closing write, so it needs none.
 * - **Closing.** The turn's closing write keeps what it said and, when it ended the call, the end —
 *   only when it finds the turn's generation still stored (the write is conditioned on the version it
 *   read, so what it found is what it changed). That write is the proof of the reply's `last` and of
 *   the `end` sent to the transport: a turn whose closing write found a newer generation sends
 *   neither, and the call is not ended.
 * - **Frame order.** Frames of a call run in parallel; their order is the socket's (interruption.ts).
 * - **While a tool runs** nothing is sent, so nothing checks: the turn watches the generation instead
 *   (`watch`), because the frame that moves it (an interruption, a newer prompt) runs in another Lambda
 *   container and can only be seen in the table. A move aborts the tool's request.
 *
 * These rules are checked under every ordering of two and three frames' reads, writes, model pieces
 * and tool answers by test/unit/turn-interleavings.test.ts.
 */
export class TurnGuard {
  /** Aborts the turn's model request and tool requests: stopped, dropped, or past the deadline. */
  readonly abort = new AbortController();
  private status: 'current' | 'superseded' | 'dropped' = 'current';
  private closedCurrent = false;

  constructor(
    /** The generation the turn's start stored; undefined when the state it was asked on did not hold. */
    readonly startGeneration: Promise<number | undefined>,
    /** A consistent read of the stored generation. */
    private readonly storedGeneration: () => Promise<number>,
  ) {}

  /** Stopped: superseded by a newer frame, or dropped. Nothing more of the turn is sent, run or kept. */
  get stopped(): boolean {
    return this.status !== 'current';
  }

  /** Asked on a state that did not hold: the turn is to be asked again on what was stored. */
  get dropped(): boolean {
    return this.status === 'dropped';
  }

  drop(): void {
    this.status = 'dropped';
    this.abort.abort();
  }

  private supersede(): void {
    if (this.status === 'current') this.status = 'superseded';
    this.abort.abort();
  }

  /** Whether the turn may act now: its start is stored and no newer frame moved the generation since. */
  async mayAct(): Promise<boolean> {
    if (this.stopped) return false;
    const generation = await this.startGeneration;
    if (generation === undefined) this.drop();
    if (this.stopped) return false;
    const stored = await this.storedGeneration();
    if (this.stopped) return false;
    if (stored !== generation) {
      this.supersede();
      return false;
    }
    return true;
  }

  /**
   * Reads the generation every `intervalMs` until the returned stop is called or the turn stops; a
   * newer frame aborts the turn's requests at once instead of at its next piece. A failed read is left
   * to the next piece's check.
   */
  watch(intervalMs: number): () => void {
    let watching = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const next = () => {
      timer = setTimeout(() => {
        if (!watching) return;
        this.mayAct().then(
          (current) => {
            if (current && watching) next();
          },
          (error: unknown) =>
            logger.warn('the turn could not read its generation while a tool ran', {
              error: errorName(error),
            }),
        );
      }, intervalMs);
    };
    next();
    return () => {
      watching = false;
      clearTimeout(timer);
    };
  }

  /** What the turn's closing write found: its own generation still stored, or a newer one (superseded). */
  closed(foundCurrent: boolean): void {
    if (foundCurrent && !this.stopped) this.closedCurrent = true;
    else this.supersede();
  }

  /** Whether the reply's `last` (and the agent's end) may go: only once the closing write found the turn current. */
  get mayClose(): boolean {
    return !this.stopped && this.closedCurrent;
  }
}
