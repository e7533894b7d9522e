import * as z from 'zod';
import { relayUrl } from '../../calling/relay-settings.js';
import { closeConnection, ConnectionGone, postToConnection } from '../../platform/connections.js';
import { isId } from '../../platform/ids.js';
import { logger } from '../../platform/logger.js';
import { telephony } from '../../providers/telephony/index.js';
import type { ConversationOutput } from '../engine/ports.js';
import type { TurnInput } from '../engine/turn-start.js';
import type { ConversationEnd } from '../engine/model.js';
import type { ConversationItem } from '../storage/entities.js';
import { toStored } from '../storage/table-store.js';
import { markAgentEnded } from '../sessions/close.js';
import { takeInterruption, takeTurn } from '../sessions/frames.js';
import { awaitConversation } from '../sessions/live.js';
import { openPhoneSession, refuseSession } from '../sessions/open.js';

/**
 * The ConversationRelay transport: Twilio's messages in, the engine's words out. Its socket is the
 * voice relay's WebSocket (API Gateway in the cloud, the local relay gateway locally): `$connect`
 * checks the provider's signature of the configured relay URL; every frame is parsed here and handed
 * to the session (../sessions/: opening, turns and interruptions, closing); the agent's words and its
 * end leave as ConversationRelay frames.
 */

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
      return onSetup(connectionId, frame);
    case 'prompt':
    case 'dtmf': {
      const input = turnInput(connectionId, type, frame, at);
      return input && takeTurn(connectionId, input, relayOutput);
    }
    case 'interrupt': {
      const parsed = InterruptFrame.safeParse(frame);
      if (!parsed.success) return logger.warn('malformed interrupt; ignored', { connectionId });
      return takeInterruption(connectionId, parsed.data.utteranceUntilInterrupt.slice(0, 10_000), at);
    }
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

async function onSetup(connectionId: string, frame: unknown): Promise<void> {
  const parsed = SetupFrame.safeParse(frame);
  if (!parsed.success) return refuseSession(connectionId, 'malformed setup');
  const { callSid, customParameters } = parsed.data;
  const { call_id: callId, workspace_id: workspaceId } = customParameters;
  if (!isId('call', callId) || !isId('workspace', workspaceId))
    return refuseSession(connectionId, 'unknown call');
  const named =
    customParameters.agent_id && isId('agent', customParameters.agent_id)
      ? {
          agentId: customParameters.agent_id,
          ...(customParameters.agent_version ? { agentVersion: Number(customParameters.agent_version) } : {}),
        }
      : undefined;
  await openPhoneSession(connectionId, { callSid, callId, workspaceId, ...(named ? { named } : {}) });
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
    // A handoff's target speaks another language: speech recognition and synthesis follow it.
    language: (language) =>
      post({ type: 'language', ttsLanguage: language, transcriptionLanguage: language }),
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
