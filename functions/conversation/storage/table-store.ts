import { isConditionFailure } from '../../platform/table.js';
import { ConversationEntity, type ConversationItem } from './entities.js';
import type { ConversationSetup, ConversationState } from '../engine/model.js';
import { applyTurnStart, type TurnStart } from '../engine/turn-start.js';
import type { BegunTurn, ConversationStore, StoredConversation } from '../engine/store.js';
import type { RecentConversations } from './recent.js';

/** What a turn's start write changed: the starts pending, the generation and version it stored. */
export type StartWritten = Pick<ConversationItem, 'pending' | 'generation' | 'version'>;

/**
 * The conversation item's four requests: DynamoDB's (`tableItems`); the engine's interleaving test
 * runs the same store on a memory table with these semantics, so that what it proves is this code's.
 */
export interface ConversationItems {
  /** A consistent read of the whole item. */
  get(connectionId: string): Promise<ConversationItem | undefined>;
  /** The state replaced, conditioned on the item's version; false when another write came first. */
  replaceIfVersion(
    connectionId: string,
    next: Pick<ConversationItem, 'state' | 'generation' | 'version' | 'pending'>,
    expectedVersion: number,
  ): Promise<boolean>;
  /**
   * A start appended to `pending`, the generation and version each added to by one, in one request;
   * `all`: the whole item back, else only what the write changed. Undefined when there is no item.
   */
  appendStart(connectionId: string, start: string, all: true): Promise<ConversationItem | undefined>;
  appendStart(connectionId: string, start: string, all: false): Promise<StartWritten | undefined>;
  /** A consistent read of the generation alone. */
  generation(connectionId: string): Promise<number | undefined>;
}

export const tableItems: ConversationItems = {
  async get(connectionId) {
    const { data } = await ConversationEntity.get({ connectionId }).go({ consistent: true });
    return data ?? undefined;
  },
  async replaceIfVersion(connectionId, next, expectedVersion) {
    try {
      await ConversationEntity.patch({ connectionId })
        .set(next)
        .where((attr, op) => op.eq(attr.version, expectedVersion))
        .go({ response: 'none' });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  },
  async appendStart(connectionId: string, start: string, all: boolean) {
    const write = ConversationEntity.patch({ connectionId })
      .append({ pending: [start] })
      .add({ generation: 1, version: 1 });
    try {
      return all
        ? ((await write.go({ response: 'all_new' })).data as ConversationItem)
        : ((await write.go({ response: 'updated_new' })).data as StartWritten);
    } catch (error) {
      // Every patch is conditioned on the item's existence.
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  },
  async generation(connectionId) {
    const { data } = await ConversationEntity.get({ connectionId }).go({
      consistent: true,
      attributes: ['generation'],
    });
    return data?.generation;
  },
} as ConversationItems;

/** A conversation's state in the table, by its connection (entities.ts). */
export class TableConversationStore implements ConversationStore {
  private last: ConversationItem | undefined;

  constructor(
    readonly connectionId: string,
    /** The item as the frame's handler knows it: the first update decides on it. */
    read?: ConversationItem,
    /** Told of every version this store reads or writes (the process's recent conversations). */
    private readonly recent?: RecentConversations,
    private readonly items: ConversationItems = tableItems,
  ) {
    this.last = read;
  }

  private async read(): Promise<ConversationItem | undefined> {
    this.last = await this.items.get(this.connectionId);
    this.recent?.remember(this.last);
    return this.last;
  }

  async load(): Promise<StoredConversation | undefined> {
    const item = this.last ?? (await this.read());
    return item ? toStored(item) : undefined;
  }

  async update(
    change: (state: ConversationState, setup: ConversationSetup) => ConversationState,
  ): Promise<StoredConversation> {
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const item = attempt === 0 && this.last ? this.last : await this.read();
      if (!item) throw new Error('conversation not found');
      const current = toStored(item);
      const state = change(current.state, current.setup);
      const next = {
        state: JSON.stringify(state),
        generation: state.generation,
        version: item.version + 1,
        pending: [] as string[],
      };
      if (await this.items.replaceIfVersion(this.connectionId, next, item.version)) {
        this.last = { ...item, ...next };
        this.recent?.remember(this.last);
        // The agent speaking after the change (a handoff's switch changes it), as a read would find.
        return { setup: state.activeSetup ?? current.setup, state, version: next.version };
      }
      this.last = undefined;
    }
    throw new Error('conversation: too many concurrent changes');
  }

  /** The item as this store last read or wrote it (undefined before either). */
  get item(): ConversationItem | undefined {
    return this.last;
  }

  /**
   * A turn's start without a read before it: appended to the item's `pending` starts, the generation
   * and version added to, in one UpdateItem (conditioned on the item's existence, as every patch is).
   * A small write: the state, which grows with the call, is not rewritten. Undefined when there is no
   * conversation (not yet, or no longer). The version moves, so a read-modify-write begun on the item
   * before fails its condition and reads again, and finds the start there (toStored folds it in).
   *
   * The turn's generation is the one this write stored, whatever a read after it finds: a later frame
   * may have moved it on already, and then this turn is superseded.
   */
  async beginTurn(start: TurnStart): Promise<BegunTurn | undefined> {
    const known = this.last;
    const started = JSON.stringify(start);
    let item: ConversationItem | undefined;
    let generation: number;
    if (known) {
      // With the item in hand only what the write changed comes back; when another frame changed the
      // item first (the version moved by more than this start), it is read whole.
      const changed = await this.items.appendStart(this.connectionId, started, false);
      if (!changed) return undefined;
      generation = changed.generation;
      item = changed.version === known.version + 1 ? { ...known, ...changed } : await this.read();
      if (!item) return undefined;
    } else {
      item = await this.items.appendStart(this.connectionId, started, true);
      if (!item) return undefined;
      generation = item.generation;
    }
    this.last = item;
    this.recent?.remember(item);
    return { stored: toStored(item), generation };
  }

  async generation(): Promise<number> {
    return (await this.items.generation(this.connectionId)) ?? -1;
  }
}

/** The item's conversation, with the turn starts still pending in it applied in their order. */
export function toStored(item: ConversationItem): StoredConversation {
  let state = JSON.parse(item.state) as ConversationState;
  // The agent speaking now: a handoff's target, else the call's own agent.
  const setup = state.activeSetup ?? (JSON.parse(item.setup) as ConversationSetup);
  if (item.pending && item.pending.length > 0) {
    for (const start of item.pending) state = applyTurnStart(state, setup, JSON.parse(start) as TurnStart);
    // Each pending start added one to the item's generation (an ended conversation's too).
    state = { ...state, generation: Math.max(state.generation, item.generation) };
  }
  return { setup, state, version: item.version };
}
