import { hangupCall } from '../../calling/call-log.js';
import { callKey } from '../../calling/call-shards.js';
import { CallEntity } from '../../calling/entities.js';
import { isTerminal } from '../../calling/status.js';
import { logger } from '../../platform/logger.js';
import { errorName } from '../../platform/programming-errors.js';
import { isConditionFailure } from '../../platform/table.js';
import { languageModel } from '../../providers/llm/index.js';
import { endByCaller } from '../engine/interruption.js';
import type { ConversationEnd, ConversationSetup } from '../engine/model.js';
import type { ConversationItem } from '../storage/entities.js';
import { TableCallToolsStore } from '../storage/call-tools.js';
import { recordConversation } from '../storage/record.js';
import { TableConversationStore, toStored } from '../storage/table-store.js';
import { recordHandoff } from '../transfer.js';
import { loadConversation, recent, toolBoxOf } from './live.js';

/**
 * A session's end: the agent ending the call (recorded on the call before the provider hears of it),
 * and the socket closing (the conversation written to the call, the call hung up when its caller went,
 * the call's MCP sessions ended).
 */

/** How long the session's end waits on the customers' MCP servers, after the call is saved. */
export const MCP_SESSIONS_END_BUDGET_MS = 2_500;

/**
 * Recorded on the call before the provider hears of it: the call's end reason; a transfer's number,
 * and for a warm one the summary and the whisper (conversation/transfer.ts: the model writes the
 * summary now, so the person dialled never waits on it).
 */
export async function markAgentEnded(item: ConversationItem, end: ConversationEnd): Promise<void> {
  if (end.reason === 'caller_hangup' || end.reason === 'voicemail') return;
  try {
    if (end.reason === 'transfer') {
      // The turn kept its words before its end: the stored transcript is the whole call so far.
      const stored = await new TableConversationStore(item.connectionId).load();
      const { setup, state } = stored ?? toStored(item);
      await recordHandoff({
        setup,
        transcript: state.transcript,
        transferTo: end.transferTo,
        mode: end.mode ?? 'cold',
        model: languageModel(),
      });
      return;
    }
    await CallEntity.patch(callKey(item.workspaceId, item.callId))
      .set({ agentEnded: end.reason })
      .go({ response: 'none' });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/**
 * The call's MCP sessions end with it — those of every agent that spoke (a handoff's target keeps its
 * tools under its own key) — within MCP_SESSIONS_END_BUDGET_MS: a server that cannot be told (or is
 * slow to answer) is logged, the session's end is not held up.
 */
async function endToolSessions(item: ConversationItem): Promise<void> {
  const budget = AbortSignal.timeout(MCP_SESSIONS_END_BUDGET_MS);
  const overBudget = new Promise<'over'>((resolve) =>
    budget.addEventListener('abort', () => resolve('over'), { once: true }),
  );
  const toolsKeys = toolsKeysOf(item);
  try {
    const ended = Promise.all(
      toolsKeys.map(async (toolsKey) =>
        (await toolBoxOf({ agentTools: true, toolsKey }, item))?.endSessions(),
      ),
    );
    ended.catch(() => {
      // Marked handled for when the budget wins the race below; otherwise it is awaited there and logged.
    });
    if ((await Promise.race([ended, overBudget])) === 'over')
      logger.warn('MCP sessions not ended within their budget', {
        connectionId: item.connectionId,
        budgetMs: MCP_SESSIONS_END_BUDGET_MS,
      });
  } catch (error) {
    logger.warn('MCP sessions not ended', { connectionId: item.connectionId, error: errorName(error) });
  } finally {
    for (const toolsKey of toolsKeys) new TableCallToolsStore(toolsKey, item.workspaceId).forget();
  }
}

/** Where the call's agents' own tools are kept: the first agent's, then each handed-to agent's. */
function toolsKeysOf(item: ConversationItem): string[] {
  const { state } = toStored(item);
  const first = JSON.parse(item.setup) as ConversationSetup;
  const handedTo = (state.handoffs ?? []).map((handoff) => `${item.connectionId}#${handoff.toAgentId}`);
  return [...new Set([...(first.agentTools ? [item.connectionId] : []), ...handedTo])];
}

/**
 * The socket closed (the provider ended the session, the caller hung up, the network dropped): the
 * conversation is over and written to the call first; a call whose caller went is hung up, so none is
 * left in progress; then, bounded, the call's MCP sessions are ended.
 */
export async function closeSession(connectionId: string): Promise<void> {
  // The item this process last knew saves a read: the caller's end is a write conditioned on its
  // version, which reads again when another container changed it since.
  const item = recent.get(connectionId) ?? (await loadConversation(connectionId));
  recent.forget(connectionId);
  if (!item) return;
  const state = await endByCaller(new TableConversationStore(connectionId, item));
  const { callListing } = JSON.parse(item.setup) as ConversationSetup;
  const call = await recordConversation(item, state, callListing);
  logger.info('relay session ended', { connectionId, callId: item.callId, endedBy: state.ended?.reason });
  // The caller hung up, or the socket dropped: the call ends too (none is left in progress). After the
  // agent's `end` the provider acts itself (the <Connect action>: hang up, or dial); a test chat has no
  // provider, so its call ends with its socket.
  const ends = item.channel === 'web' || state.ended?.reason === 'caller_hangup';
  if (call && !isTerminal(call.status) && ends) {
    await hangupCall(item.workspaceId, item.callId, item.channel === 'web' ? 'test-chat' : 'relay').catch(
      (error: unknown) =>
        logger.warn('call not hung up after its relay session ended', {
          callId: item.callId,
          error: String(error),
        }),
    );
  }
  await endToolSessions(item);
}
