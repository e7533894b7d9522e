import { isConditionFailure } from '../../platform/table.js';
import { ConversationEntity, type ConversationItem } from './entities.js';
import type { ConversationSetup, ConversationState } from '../engine/model.js';
import { applyTurnStart, type TurnStart } from '../engine/turn-start.js';
import type { ConversationStore, StoredConversation } from '../engine/store.js';
import type { RecentConversations } from './recent.js';

/** A conversation's state in the table, by its connection (entities.ts). */
export class TableConversationStore implements ConversationStore {
  private last: ConversationItem | undefined;

  constructor(
    readonly connectionId: string,
    /** The item as the frame's handler knows it: the first update decides on it. */
    read?: ConversationItem,
    /** Told of every version this store reads or writes (the process's recent conversations). */
    private readonly recent?: RecentConversations,
  ) {
    this.last = read;
  }

  private async read(): Promise<ConversationItem | undefined> {
    const { data } = await ConversationEntity.get({ connectionId: this.connectionId }).go({
      consistent: true,
    });
    this.last = data ?? undefined;
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
      try {
        await ConversationEntity.patch({ connectionId: this.connectionId })
          .set(next)
          .where((attr, op) => op.eq(attr.version, item.version))
          .go({ response: 'none' });
        this.last = { ...item, ...next };
        this.recent?.remember(this.last);
        return { setup: current.setup, state, version: next.version };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        this.last = undefined;
      }
    }
    throw new Error('conversation: too many concurrent changes');
  }

  /** The item as this store last read or wrote it (undefined before either). */
  get item(): ConversationItem | undefined {
    return this.last;
  }

  /**
   * A turn's start without a read before it: appended to the item's `pending` starts, the generation
   * and version added to, in one UpdateItem that returns the item (conditioned on its existence, as
   * every patch is). A small write: the state, which grows with the call, is not rewritten. Undefined when there is no conversation (not yet, or no longer). The version moves,
   * so a read-modify-write begun on the item before fails its condition and reads again, and finds the
   * start there (toStored folds it in).
   */
  async beginTurn(start: TurnStart): Promise<StoredConversation | undefined> {
    const known = this.last;
    try {
      const write = ConversationEntity.patch({ connectionId: this.connectionId })
        .append({ pending: [JSON.stringify(start)] })
        .add({ generation: 1, version: 1 });
      let item: ConversationItem | undefined;
      if (known) {
        // With the item in hand only what the write changed comes back; when another frame changed the
        // item first (the version moved by more than this start), it is read whole.
        const { data } = await write.go({ response: 'updated_new' });
        const changed = data as Pick<ConversationItem, 'pending' | 'generation' | 'version'>;
        item = changed.version === known.version + 1 ? { ...known, ...changed } : await this.read();
        if (!item) return undefined;
      } else {
        item = (await write.go({ response: 'all_new' })).data as ConversationItem;
      }
      this.last = item;
      this.recent?.remember(item);
      return toStored(item);
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return undefined;
    }
  }

  async generation(): Promise<number> {
    const { data } = await ConversationEntity.get({ connectionId: this.connectionId }).go({
      consistent: true,
      attributes: ['generation'],
    });
    return data?.generation ?? -1;
  }
}

/** The item's conversation, with the turn starts still pending in it applied in their order. */
export function toStored(item: ConversationItem): StoredConversation {
  const setup = JSON.parse(item.setup) as ConversationSetup;
  let state = JSON.parse(item.state) as ConversationState;
  if (item.pending && item.pending.length > 0) {
    for (const start of item.pending) state = applyTurnStart(state, setup, JSON.parse(start) as TurnStart);
    // Each pending start added one to the item's generation (an ended conversation's too).
    state = { ...state, generation: Math.max(state.generation, item.generation) };
  }
  return { setup, state, version: item.version };
}
