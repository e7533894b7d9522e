import type { ConversationItem } from './entities.js';

/**
 * The conversations this process handled last, as it last wrote them, by connection. A frame starts on
 * the item it finds here instead of reading it: every change is conditioned on the item's version, so
 * an item another process (another Lambda container) changed since fails that write, which reads
 * again — and a turn asked the model on it drops that request unheard (engine.ts). Fresh, it saves
 * the frame its first read; stale, it costs one refused write. Bounded: the least recently used goes.
 */
export class RecentConversations {
  private readonly items = new Map<string, ConversationItem>();

  constructor(private readonly capacity: number) {}

  get(connectionId: string): ConversationItem | undefined {
    return this.items.get(connectionId);
  }

  /** Keeps the item unless a newer version of it is kept already (frames of a call finish in any order). */
  remember(item: ConversationItem | undefined): void {
    if (!item || this.capacity === 0) return;
    const known = this.items.get(item.connectionId);
    if (known && known.version > item.version) return;
    this.items.delete(item.connectionId);
    this.items.set(item.connectionId, item);
    if (this.items.size > this.capacity) this.items.delete(this.items.keys().next().value!);
  }

  forget(connectionId: string): void {
    this.items.delete(connectionId);
  }
}
