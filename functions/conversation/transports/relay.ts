import * as z from 'zod';
import { agentForCall, agentForCallWith } from '../../agents/versions.js';
import { hangupCall } from '../../calling/call-log.js';
import { CallEntity } from '../../calling/entities.js';
import { applyTransition, readCall } from '../../calling/lifecycle.js';
import type { Call } from '../../calling/entities.js';
import { recordWithoutSession } from '../voicemail.js';
import { relayUrl } from '../../calling/relay-settings.js';
import { canMove, isTerminal } from '../../calling/status.js';
import { closeConnection, ConnectionGone, postToConnection } from '../../platform/connections.js';
import { isId } from '../../platform/ids.js';
import { logger } from '../../platform/logger.js';
import { errorName } from '../../platform/programming-errors.js';
import { isConditionFailure, type TableKey } from '../../platform/table.js';
import { languageModel } from '../../providers/llm/index.js';
import { telephony } from '../../providers/telephony/index.js';
import { endByCaller, interrupt } from '../engine/interruption.js';
import { runTurn, type ConversationOutput } from '../engine/turn.js';
import { turnStart, type TurnInput, type TurnStart } from '../engine/turn-start.js';
import type { StoredConversation } from '../engine/store.js';
import { ConversationEntity, conversationService, type ConversationItem } from '../storage/entities.js';
import { emptyState, type ConversationEnd, type ConversationSetup } from '../engine/model.js';
import { recordConversation } from '../storage/record.js';
import { recordHandoff } from '../transfer.js';
import { callTools, conversationSetup } from '../setup.js';
import { callToolsItem, TableCallToolsStore } from '../storage/call-tools.js';
import { CallToolBox } from '../tools/agent-toolbox.js';
import { toolRunner } from '../tools/runner.js';
import { RecentConversations } from '../storage/recent.js';
import { TableConversationStore, toStored } from '../storage/table-store.js';
import { callKey } from '../../calling/call-shards.js';

/**
 * The ConversationRelay transport: Twilio's messages in, the engine's words out. Its socket is the
 * voice relay's WebSocket (API Gateway in the cloud, the local relay gateway locally): `$connect`
 * checks the provider's signature of the configured relay URL; every frame is handled on its own
 * (`$default`), its conversation found by the connection; `$disconnect` ends the conversation and
 * writes it to the call.
 */

/** A day: API Gateway closes a connection after 2 hours; the item outlives it for late frames. */
const CONVERSATION_TTL_SECONDS = 24 * 3600;

/** The upgrade: a valid `X-Twilio-Signature` of the configured relay URL (never one rebuilt from Host). */
export async function acceptRelayConnection(signature: string | undefined): Promise<boolean> {
  if (!signature) return false;
  return telephony().verifySignature(relayUrl(), {}, signature);
}

const SetupFrame = z.object({
  type: z.literal('setup'),
  callSid: z.string().min(1).max(64),
  customParameters: z.object({
    call_id: z.string().max(64),
    workspace_id: z.string().max(64),
    // The agent and version the call speaks with (our TwiML's): read with the call, in one request.
    agent_id: z.string().max(64).optional(),
    agent_version: z
      .string()
      .regex(/^[1-9][0-9]{0,8}$/)
      .optional(),
  }),
});
const PromptFrame = z.object({
  type: z.literal('prompt'),
  voicePrompt: z.string(),
  last: z.boolean().optional(),
});
const InterruptFrame = z.object({
  type: z.literal('interrupt'),
  utteranceUntilInterrupt: z.string().max(100_000).default(''),
});
const DtmfFrame = z.object({ type: z.literal('dtmf'), digit: z.string().regex(/^[0-9*#A-D]$/) });

/**
 * One frame from the provider. Not JSON, of an unknown type or malformed: ignored and logged. `at`:
 * when it reached the socket (API Gateway's `requestTimeEpoch`).
 */
export async function handleRelayFrame(
  connectionId: string,
  body: string | undefined,
  at: number = Date.now(),
): Promise<void> {
  let frame: unknown;
  try {
    frame = JSON.parse(body ?? '');
  } catch {
    logger.warn('relay frame is not JSON; ignored', { connectionId, bytes: body?.length ?? 0 });
    return;
  }
  const type = (frame as { type?: unknown } | null)?.type;
  switch (type) {
    case 'setup':
      return startSession(connectionId, frame);
    case 'prompt':
    case 'interrupt':
    case 'dtmf':
      return onSessionFrame(connectionId, type, frame, at);
    case 'start':
      return startWebSession(connectionId);
    case 'error':
      logger.warn('relay reported an error', { connectionId });
      return;
    default:
      logger.warn('relay frame of an unknown type; ignored', {
        connectionId,
        type: String(type).slice(0, 40),
      });
  }
}

async function refuse(connectionId: string, reason: string, context: Record<string, unknown> = {}) {
  logger.warn(`relay session refused: ${reason}`, { connectionId, ...context });
  await closeConnection(connectionId);
}

/** A machine answered before the session began: none begins; the call keeps what it will hear. */
async function refuseOnMachine(connectionId: string, call: Call): Promise<void> {
  await refuse(connectionId, 'answered by a machine', { callId: call.callId });
  await recordWithoutSession(call);
}

async function startSession(connectionId: string, frame: unknown): Promise<void> {
  const parsed = SetupFrame.safeParse(frame);
  if (!parsed.success) return refuse(connectionId, 'malformed setup');
  const { callSid, customParameters } = parsed.data;
  const { call_id: callId, workspace_id: workspaceId } = customParameters;
  if (!isId('call', callId) || !isId('workspace', workspaceId)) return refuse(connectionId, 'unknown call');
  const named =
    customParameters.agent_id && isId('agent', customParameters.agent_id)
      ? {
          agentId: customParameters.agent_id,
          ...(customParameters.agent_version ? { agentVersion: Number(customParameters.agent_version) } : {}),
        }
      : undefined;
  const read = named
    ? await agentForCallWith(CallEntity.get(callKey(workspaceId, callId)).params<{ Key: TableKey }>().Key, {
        workspaceId,
        ...named,
      })
    : undefined;
  const call = read
    ? ((read.other ? (CallEntity.parse({ Item: read.other }).data as Call | null) : null) ?? undefined)
    : await readCall(workspaceId, callId);
  if (!call) return refuse(connectionId, 'unknown call');
  if (call.providerCallId !== callSid) return refuse(connectionId, "callSid is not the call's", { callId });
  if (isTerminal(call.status)) return refuse(connectionId, 'the call is not live', { callId });
  if (call.relayConnectionId) return refuse(connectionId, 'the call already has a session', { callId });
  // Answered by a machine before the session began: no conversation (the `<Connect action>` leaves
  // the voicemail or hangs up).
  if (call.answeredBy === 'machine') return refuseOnMachine(connectionId, call);
  // The agent's version the call was created with, never the agent as it is now (a PATCH since the
  // dial must not mix two versions).
  const agent =
    read && named?.agentId === call.agentId && named.agentVersion === call.agentVersion
      ? read.agent
      : await agentForCall(call);
  if (!agent) return refuse(connectionId, 'the agent is gone', { callId });

  const now = new Date();
  const setup = conversationSetup({
    call,
    agent,
    channel: 'phone',
    now,
    timeScale: await telephony().callSecondsPerWallSecondOf(callSid),
  });
  const state = emptyState(setup.greeting);
  const tools = callTools(call, agent, 'phone');
  const expiresAt = Math.floor(now.getTime() / 1000) + CONVERSATION_TTL_SECONDS;
  const result = await conversationService.transaction
    .write(({ conversation, call: calls, callTools: toolItems }) => [
      ...(tools ? [toolItems.create(callToolsItem(connectionId, tools, expiresAt)).commit()] : []),
      conversation
        .create({
          connectionId,
          workspaceId,
          callId,
          channel: 'phone',
          providerCallId: callSid,
          setup: JSON.stringify(setup),
          state: JSON.stringify(state),
          generation: 0,
          version: 0,
          createdAt: now.toISOString(),
          expiresAt,
        })
        .commit(),
      calls
        .patch(callKey(workspaceId, callId))
        .set({ relayConnectionId: connectionId })
        .where(
          (attr, op) =>
            `${op.notExists(attr.relayConnectionId)} AND ${op.eq(attr.providerCallId, callSid)} AND ` +
            `(${op.notExists(attr.answeredBy)} OR ${op.ne(attr.answeredBy, 'machine')})`,
        )
        .commit(),
    ])
    .go();
  if (result.canceled) {
    const again = await readCall(workspaceId, callId);
    if (again?.answeredBy === 'machine' && !again.relayConnectionId)
      return refuseOnMachine(connectionId, again);
    return refuse(connectionId, 'the call already has a session', { callId });
  }
  logger.info('relay session started', { connectionId, callId, workspaceId });
  // The conversation has begun: the call is in progress (a provider callback may say so too; when
  // one already had as the session's setup read the call, there is nothing to move, nor to read again).
  if (!canMove(call.status, 'inprogress')) return;
  await applyTransition(workspaceId, callId, { status: 'inprogress', source: 'provider' }).catch(
    (error: unknown) => logger.warn('call not moved to inprogress', { callId, error: String(error) }),
  );
}

/**
 * At most this many conversations' items kept in memory (an item is at most 400 KB, most a few KB).
 * CONVERSATION_PROCESS_CACHE=off keeps none: every frame then starts as on a fresh Lambda container
 * (`npm run bench`'s cloud path measures that).
 */
const recent = new RecentConversations(process.env.CONVERSATION_PROCESS_CACHE === 'off' ? 0 : 128);

async function loadConversation(connectionId: string): Promise<ConversationItem | undefined> {
  const { data } = await ConversationEntity.get({ connectionId }).go({ consistent: true });
  return data ?? undefined;
}

/** How long a frame waits for its session's setup: frames are handled in parallel, setup may still be at work. */
const SETUP_WAIT_MS = 2_000;

async function awaitConversation(connectionId: string): Promise<ConversationItem | undefined> {
  const deadline = Date.now() + SETUP_WAIT_MS;
  for (let wait = 20; ; wait = Math.min(wait * 2, 200)) {
    const item = await loadConversation(connectionId);
    if (item || Date.now() >= deadline) return item;
    await new Promise((resolveWait) => setTimeout(resolveWait, wait));
  }
}

async function onSessionFrame(
  connectionId: string,
  type: 'prompt' | 'interrupt' | 'dtmf',
  frame: unknown,
  at: number,
): Promise<void> {
  const known = recent.get(connectionId);
  if (!known && type !== 'interrupt') {
    // Nothing of the conversation in hand (a fresh container, as most frames in the cloud): the turn's
    // start is written first, without a read, and the item it returns is the frame's.
    const input = turnInput(connectionId, type, frame, at);
    if (!input) return;
    const start = turnStart(input, Date.now());
    const store = new TableConversationStore(connectionId, undefined, recent);
    const stored = await store.beginTurn(start);
    if (stored && store.item) return runFrameTurn(store, store.item, input, { start, stored });
    // No conversation yet: the session's setup is still at work (frames run in parallel). Waited for
    // by reading (a refused write is billed as a write; a read costs a fifth of one), then as in hand.
    const item = await awaitConversation(connectionId);
    if (!item) {
      logger.warn('relay frame without a session; ignored', { connectionId, type });
      return;
    }
    recent.remember(item);
    return runFrameTurn(new TableConversationStore(connectionId, item, recent), item, input, { start });
  }
  const item = known ?? (await awaitConversation(connectionId));
  if (!item) {
    logger.warn('relay frame without a session; ignored', { connectionId, type });
    return;
  }
  recent.remember(item);
  const store = new TableConversationStore(connectionId, item, recent);
  if (type === 'interrupt') {
    const parsed = InterruptFrame.safeParse(frame);
    if (!parsed.success) return logger.warn('malformed interrupt; ignored', { connectionId });
    await interrupt(store, parsed.data.utteranceUntilInterrupt.slice(0, 10_000), at, item.channel);
    return;
  }
  const input = turnInput(connectionId, type, frame, at);
  if (input) await runFrameTurn(store, item, input);
}

/** A prompt or a key press as a turn's input; undefined (logged when malformed) when it asks no turn. */
function turnInput(
  connectionId: string,
  type: 'prompt' | 'dtmf',
  frame: unknown,
  at: number,
): TurnInput | undefined {
  if (type === 'dtmf') {
    const parsed = DtmfFrame.safeParse(frame);
    if (!parsed.success) {
      logger.warn('malformed dtmf; ignored', { connectionId });
      return undefined;
    }
    return { kind: 'dtmf', digit: parsed.data.digit, at };
  }
  const parsed = PromptFrame.safeParse(frame);
  if (!parsed.success) {
    logger.warn('malformed prompt; ignored', { connectionId });
    return undefined;
  }
  // Partial transcripts (`last: false`) are only sent when asked for; a turn answers the whole line.
  if (parsed.data.last === false || parsed.data.voicePrompt.trim() === '') return undefined;
  return { kind: 'prompt', text: parsed.data.voicePrompt, at };
}

async function runFrameTurn(
  store: TableConversationStore,
  item: ConversationItem,
  input: TurnInput,
  begun?: { start: TurnStart; stored?: StoredConversation },
): Promise<void> {
  const box = await agentToolBox(item);
  const deps = {
    store,
    model: languageModel(),
    output: relayOutput(item),
    runTool: toolRunner(box),
    channel: item.channel,
    ...(box ? { agentTools: box } : {}),
  };
  const result = await runTurn(deps, input, begun);
  if (result.ended)
    logger.info('agent ended the conversation', {
      connectionId: item.connectionId,
      reason: result.ended.reason,
    });
}

/** The agent's own tools for the call, when it has any (kept beside the conversation). */
async function agentToolBox(item: ConversationItem): Promise<CallToolBox | undefined> {
  if (!(JSON.parse(item.setup) as { agentTools?: boolean }).agentTools) return undefined;
  const store = new TableCallToolsStore(item.connectionId, item.workspaceId);
  const tools = await store.load();
  return tools ? new CallToolBox(tools, store) : undefined;
}

/** The call's MCP sessions end with it; a server that cannot be told is logged, the call is not held up. */
async function endToolSessions(item: ConversationItem): Promise<void> {
  try {
    await (await agentToolBox(item))?.endSessions();
  } catch (error) {
    logger.warn('MCP sessions not ended', { connectionId: item.connectionId, error: errorName(error) });
  } finally {
    new TableCallToolsStore(item.connectionId, item.workspaceId).forget();
  }
}

/** The engine's words as ConversationRelay frames; a socket already gone is not an error. */
function relayOutput(item: ConversationItem): ConversationOutput {
  const post = async (frame: unknown) => {
    try {
      await postToConnection(item.connectionId, frame);
    } catch (error) {
      if (!(error instanceof ConnectionGone)) throw error;
    }
  };
  return {
    text: (token, last) => post({ type: 'text', token, last }),
    // The record's own `type` (builtin, function, mcp) must not replace the frame's.
    tool:
      item.channel === 'web'
        ? ({ type: toolType, ...record }) => post({ type: 'tool', toolType, ...record })
        : undefined,
    end: async (end: ConversationEnd) => {
      await markAgentEnded(item, end);
      await post({
        type: 'end',
        handoffData: JSON.stringify({
          reason: end.reason,
          ...(end.reason === 'transfer' ? { transfer_to: end.transferTo } : {}),
          ...(end.reason === 'transfer' && end.mode === 'warm' ? { mode: 'warm' } : {}),
        }),
      });
      // A phone call's provider ends the session after `end`; the test chat's socket is ours to close.
      if (item.channel === 'web') await closeConnection(item.connectionId);
    },
  };
}

/** The test chat's first frame: the session's call id, then the agent's greeting as its first reply. */
async function startWebSession(connectionId: string): Promise<void> {
  const item = await awaitConversation(connectionId);
  if (!item || item.channel !== 'web') {
    logger.warn('start frame without a test chat session; ignored', { connectionId });
    return;
  }
  const { setup } = toStored(item);
  const output = relayOutput(item);
  try {
    await postToConnection(connectionId, { type: 'session', call_id: item.callId });
  } catch (error) {
    // The chat's socket closed before its first frame: nothing to greet.
    if (error instanceof ConnectionGone) return;
    throw error;
  }
  if (setup.greeting) await output.text(setup.greeting, false);
  await output.text('', true);
}

/**
 * Recorded on the call before the provider hears of it: the call's end reason; a transfer's number,
 * and for a warm one the summary and the whisper (conversation/transfer.ts: the model writes the
 * summary now, so the person dialled never waits on it).
 */
async function markAgentEnded(item: ConversationItem, end: ConversationEnd): Promise<void> {
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
 * The socket closed (the provider ended the session, the caller hung up, the network dropped): the
 * conversation is over and written to the call. A call whose caller went is hung up, so none is left
 * in progress.
 */
export async function handleRelayDisconnect(connectionId: string): Promise<void> {
  // The item this process last knew saves a read: the caller's end is a write conditioned on its
  // version, which reads again when another container changed it since.
  const item = recent.get(connectionId) ?? (await loadConversation(connectionId));
  recent.forget(connectionId);
  if (!item) return;
  await endToolSessions(item);
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
}
