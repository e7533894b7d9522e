import { isConditionFailure } from '../../platform/table.js';
import { ConversationEntity, type ConversationItem } from './entities.js';
import type { ConversationSetup, ConversationState } from '../engine/model.js';
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
      const next = { state: JSON.stringify(state), generation: state.generation, version: item.version + 1 };
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

  async generation(): Promise<number> {
    const { data } = await ConversationEntity.get({ connectionId: this.connectionId }).go({
      consistent: true,
      attributes: ['generation'],
    });
    return data?.generation ?? -1;
  }
}

export const toStored = (item: ConversationItem): StoredConversation => ({
  setup: JSON.parse(item.setup) as ConversationSetup,
  state: JSON.parse(item.state) as ConversationState,
  version: item.version,
});
