import { logger } from '../../platform/logger.js';
import { languageModel } from '../../providers/llm/index.js';
import { interrupt } from '../engine/interruption.js';
import { runTurn } from '../engine/turn.js';
import type { ConversationOutput, EngineDeps } from '../engine/ports.js';
import type { LlmToolCall } from '../../providers/llm/port.js';
import { turnStart, type TurnInput, type TurnStart } from '../engine/turn-start.js';
import type { BegunTurn } from '../engine/store.js';
import type { ConversationSetup } from '../engine/model.js';
import type { ConversationItem } from '../storage/entities.js';
import { recordConversation } from '../storage/record.js';
import { TableConversationStore } from '../storage/table-store.js';
import { prepareHandoff } from '../handoffs.js';
import { toolRunner } from '../tools/runner.js';
import { agentToolBox, awaitConversation, conversationInHand, recent, toolBoxOf } from './live.js';

/**
 * What a live session's frames do to its conversation, whatever transport they came on: a caller's
 * line or key press runs a turn of the agent; an interruption cuts the reply being spoken. The
 * transport hands the frame's `output` (how the agent's words leave on its socket).
 */
export type OutputFor = (item: ConversationItem) => ConversationOutput;

/** A caller's line or key press: one turn of the agent. */
export async function takeTurn(connectionId: string, input: TurnInput, outputFor: OutputFor): Promise<void> {
  const known = recent.get(connectionId);
  if (known) {
    recent.remember(known);
    return runFrameTurn(new TableConversationStore(connectionId, known, recent), known, input, outputFor);
  }
  // Nothing of the conversation in hand (a fresh container, as most frames in the cloud): the turn's
  // start is written first, without a read, and the item it returns is the frame's.
  const start = turnStart(input, Date.now());
  const store = new TableConversationStore(connectionId, undefined, recent);
  const written = await store.beginTurn(start);
  if (written && store.item) return runFrameTurn(store, store.item, input, outputFor, { start, written });
  // No conversation yet: the session's setup is still at work (frames run in parallel). Waited for by
  // reading (a refused write is billed as a write; a read costs a fifth of one), then as in hand.
  const item = await awaitConversation(connectionId);
  if (!item) {
    logger.warn('relay frame without a session; ignored', { connectionId, type: input.kind });
    return;
  }
  recent.remember(item);
  const inHand = new TableConversationStore(connectionId, item, recent);
  return runFrameTurn(inHand, item, input, outputFor, { start });
}

/** The caller spoke over the agent: `heard` is what they heard of the reply. */
export async function takeInterruption(connectionId: string, heard: string, at: number): Promise<void> {
  const item = await conversationInHand(connectionId, 'interrupt');
  if (!item) return;
  await interrupt(new TableConversationStore(connectionId, item, recent), heard, at, item.channel);
}

async function runFrameTurn(
  store: TableConversationStore,
  item: ConversationItem,
  input: TurnInput,
  outputFor: OutputFor,
  started?: { start: TurnStart; written?: BegunTurn },
): Promise<void> {
  const box = await agentToolBox(item);
  const handOff = (call: LlmToolCall, setup: ConversationSetup) =>
    prepareHandoff(item.connectionId, call, setup);
  const deps: EngineDeps = {
    store,
    model: languageModel(),
    output: outputFor(item),
    runTool: toolRunner(box, handOff),
    channel: item.channel,
    ...(box ? { agentTools: box } : {}),
    forAgent: async (target) => {
      const own = await toolBoxOf(target, item);
      return { runTool: toolRunner(own, handOff), ...(own ? { agentTools: own } : {}) };
    },
  };
  const result = await runTurn(deps, input, started);
  // The socket closed while the turn ran: the call was written without what the turn kept since.
  if (result.keptAfterEnd) {
    const { state } = (await store.load())!;
    await recordConversation(item, state, (JSON.parse(item.setup) as ConversationSetup).callListing);
  }
  if (result.ended)
    logger.info('agent ended the conversation', {
      connectionId: item.connectionId,
      reason: result.ended.reason,
    });
}
