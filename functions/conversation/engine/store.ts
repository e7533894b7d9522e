import type { ConversationSetup, ConversationState } from './model.js';
import type { TurnStart } from './turn-start.js';

/**
 * Where a conversation's state lives while it goes on. Every change is a read-modify-write that
 * succeeds only on the state it read (`version`), so two frames handled at once (a prompt and an
 * interruption: API Gateway invokes each frame on its own) never lose each other's change. Adapters:
 * the table (`table-store.ts`, a phone call or a test chat) and memory (an evaluation's scripted call,
 * unit tests).
 */
export interface StoredConversation {
  setup: ConversationSetup;
  state: ConversationState;
  version: number;
}

/** A turn's start as written: the conversation it returned, and the generation the write itself stored. */
export interface BegunTurn {
  stored: StoredConversation;
  /** The turn's own generation (a later frame may have moved the stored one on since). */
  generation: number;
}

export interface ConversationStore {
  load(): Promise<StoredConversation | undefined>;
  /**
   * Applies `change` to the latest state and stores it; on a concurrent change, reads again and
   * re-applies (so `change` must be a pure function of the state). Returns the stored result.
   */
  update(
    change: (state: ConversationState, setup: ConversationSetup) => ConversationState,
  ): Promise<StoredConversation>;
  /** The current generation (a consistent read): a turn checks it before each thing it sends. */
  generation(): Promise<number>;
  /**
   * A turn's start written without rewriting the state (the table's: appended to the item's pending
   * starts); undefined when there is no conversation. Stores without it write the start with `update`.
   */
  beginTurn?(start: TurnStart): Promise<BegunTurn | undefined>;
}

/** An in-memory store (evaluations' scripted calls, tests). */
export class MemoryConversationStore implements ConversationStore {
  private stored: StoredConversation;

  constructor(setup: ConversationSetup, state: ConversationState) {
    this.stored = { setup, state, version: 0 };
  }

  /** The agent speaking now: a handoff's target, else the conversation's own. */
  private active(stored: StoredConversation): StoredConversation {
    return { ...stored, setup: stored.state.activeSetup ?? stored.setup };
  }

  load(): Promise<StoredConversation> {
    return Promise.resolve(structuredClone(this.active(this.stored)));
  }

  update(
    change: (state: ConversationState, setup: ConversationSetup) => ConversationState,
  ): Promise<StoredConversation> {
    const current = this.active(this.stored);
    this.stored = {
      ...this.stored,
      state: change(structuredClone(current.state), current.setup),
      version: this.stored.version + 1,
    };
    return Promise.resolve(structuredClone(this.active(this.stored)));
  }

  generation(): Promise<number> {
    return Promise.resolve(this.stored.state.generation);
  }
}
