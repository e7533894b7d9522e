import { logger } from '../../platform/logger.js';
import { ConversationEntity, type ConversationItem } from '../storage/entities.js';
import { TableCallToolsStore } from '../storage/call-tools.js';
import { RecentConversations } from '../storage/recent.js';
import { CallToolBox } from '../tools/agent-toolbox.js';
import { toStored } from '../storage/table-store.js';
import type { ConversationSetup } from '../engine/model.js';

/**
 * A live session's conversation as a frame finds it: the item this process last knew, or the table's.
 *
 * At most this many conversations' items are kept in memory (an item is at most 400 KB, most a few KB).
 * CONVERSATION_PROCESS_CACHE=off keeps none: every frame then starts as on a fresh Lambda container
 * (`npm run bench`'s cloud path measures that).
 */
export const recent = new RecentConversations(process.env.CONVERSATION_PROCESS_CACHE === 'off' ? 0 : 128);

export async function loadConversation(connectionId: string): Promise<ConversationItem | undefined> {
  const { data } = await ConversationEntity.get({ connectionId }).go({ consistent: true });
  return data ?? undefined;
}

/** How long a frame waits for its session's setup: frames are handled in parallel, setup may still be at work. */
const SETUP_WAIT_MS = 2_000;

export async function awaitConversation(connectionId: string): Promise<ConversationItem | undefined> {
  const deadline = Date.now() + SETUP_WAIT_MS;
  for (let wait = 20; ; wait = Math.min(wait * 2, 200)) {
    const item = await loadConversation(connectionId);
    if (item || Date.now() >= deadline) return item;
    await new Promise((resolveWait) => setTimeout(resolveWait, wait));
  }
}

/** The conversation as a frame starts on it: remembered, or read (waiting for its setup); logged when none. */
export async function conversationInHand(
  connectionId: string,
  frame: string,
): Promise<ConversationItem | undefined> {
  const item = recent.get(connectionId) ?? (await awaitConversation(connectionId));
  if (!item) {
    logger.warn('relay frame without a session; ignored', { connectionId, type: frame });
    return undefined;
  }
  recent.remember(item);
  return item;
}

/** The active agent's own tools for the call, when it has any (kept beside the conversation). */
export async function agentToolBox(item: ConversationItem): Promise<CallToolBox | undefined> {
  return toolBoxOf(toStored(item).setup, item);
}

/** An agent's own tools for the call (the one speaking, or one handed to), when it has any. */
export async function toolBoxOf(
  setup: Pick<ConversationSetup, 'agentTools' | 'toolsKey'>,
  item: Pick<ConversationItem, 'connectionId' | 'workspaceId'>,
): Promise<CallToolBox | undefined> {
  if (!setup.agentTools) return undefined;
  const store = new TableCallToolsStore(setup.toolsKey ?? item.connectionId, item.workspaceId);
  const tools = await store.load();
  return tools ? new CallToolBox(tools, store) : undefined;
}
