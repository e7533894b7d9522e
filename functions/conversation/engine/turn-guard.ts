import { logger } from '../../platform/logger.js';
import { errorName } from '../../platform/programming-errors.js';

/**
 * Whether a turn may still act — send a piece of its reply, run a tool, end the call. The turn's
 * protocol in one place:
 *
 * - **Generation.** Every turn's start bumps the conversation's generation, and so does an
 *   interruption or the caller hanging up. A turn may act only while the stored generation is the one
 *   its own start wrote; once another moved it, the turn stops for good (nothing more is sent or run,
 *   its model request and tool requests are aborted).
 * - **Version.** Every write is conditioned on the item's version (store.ts). A turn asks the model on
 *   the state its frame read while its start is written; when that write had to read again (another
 *   frame changed the item first), the start's generation is unknown to this request: the turn is
 *   *dropped* — its request goes unheard and it is asked again on what was stored. A frame with no
 *   state in hand (the cloud path: a fresh container) writes its start first, in one update that adds
 *   to the generation and version and returns the item (`beginTurn`), and asks the model on that: its
 *   generation is known at once and it is never dropped.
 * - **Proof.** A piece is sent only right after a consistent read of the generation found the turn
 *   current, a read begun after everything sent before it; pieces that became ready while that read
 *   was out go with it (turn.ts `say`), so a model streaming faster than a read costs one read, not one
 *   a piece. The turn's first act may instead take its start write as the proof when that write was
 *   still out when the act was asked for: the write found the turn current no earlier than a read
 *   begun then would (both answer within one round trip of the act). The reply's `last` needs none:
 *   the turn's closing write is conditioned on the version it changed, so when that write found the
 *   turn's generation current it is the check. By the same rule, when the model has been faster than
 *   the table this turn (its first round ended before the start write was answered), the proof of
 *   the first piece after a tool is begun with the next model request (`readAhead`) and taken if still
 *   out when that piece is ready. A request to an agent's own tool waits for its own
 *   proof (the `speak_during` line's, when it has one), made ready meanwhile; a built-in tool (ending,
 *   transferring, searching the knowledge base) acts on nothing before the closing write, so it needs
 *   none.
 * - **Frame order.** Frames of a call run in parallel; their order is the socket's (interruption.ts).
 * - **While a tool runs** nothing is sent, so nothing checks: the turn watches the generation instead
 *   (`watch`), because the frame that moves it (an interruption, a newer prompt) runs in another Lambda
 *   container and can only be seen in the table. A move aborts the tool's request.
 */
export class TurnGuard {
  /** Aborts the turn's model request and tool requests: stopped, dropped, or past the deadline. */
  readonly abort = new AbortController();
  private status: 'current' | 'superseded' | 'dropped' = 'current';
  private closingWriteFoundCurrent = false;
  private startAnswered = false;
  /** Whether a proof was asked for yet: only the turn's first act may take its start write as one. */
  private proofAsked = false;
  /** A read begun ahead of the act that will need it (`readAhead`); usable only while still out. */
  private ahead: { read: Promise<number>; answered: boolean } | undefined;

  constructor(
    /** The generation the turn's start stored; undefined when the state it was asked on did not hold. */
    readonly startGeneration: Promise<number | undefined>,
    /** A consistent read of the stored generation. */
    private readonly storedGeneration: () => Promise<number>,
  ) {
    const answered = () => {
      this.startAnswered = true;
    };
    startGeneration.then(answered, answered);
  }

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
    const startIsProof = !this.proofAsked && !this.startAnswered;
    this.proofAsked = true;
    const generation = await this.startGeneration;
    if (generation === undefined) this.drop();
    if (this.stopped) return false;
    if (startIsProof) return true;
    const ahead = this.ahead;
    this.ahead = undefined;
    const stored = ahead && !ahead.answered ? await ahead.read : await this.storedGeneration();
    if (stored !== generation) {
      this.supersede();
      return false;
    }
    return true;
  }

  /** Whether the turn's start write was still out: the table is slower than the model this turn. */
  get startStillOut(): boolean {
    return !this.startAnswered;
  }

  /**
   * Begins the next act's proof now (everything sent before it must already be sent). The act takes
   * it only if it is still out when the act is asked for — answered no earlier than a read begun then
   * would be; otherwise the act reads afresh. Worth it only while the model answers faster than a read.
   */
  readAhead(): void {
    if (this.stopped || this.ahead) return;
    const ahead = { read: this.storedGeneration(), answered: false };
    const answered = () => {
      ahead.answered = true;
    };
    ahead.read.then(answered, answered);
    this.ahead = ahead;
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

  /** The turn's closing write stored `generation` (conditioned on the version it changed). */
  closingWriteFound(generation: number, startGeneration: number | undefined): void {
    this.closingWriteFoundCurrent = !this.stopped && generation === startGeneration;
  }

  /** Whether the reply's `last` may go: the closing write's own check stands in for a read. */
  async mayEnd(): Promise<boolean> {
    if (this.stopped) return false;
    return this.closingWriteFoundCurrent || this.mayAct();
  }
}
