import { Entity } from '../platform/entity.js';
import { findAgent } from '../agents/service.js';
import { primaryIndex } from '../platform/keys.js';
import { entityConfig } from '../platform/table.js';
import type { CallRecordWire } from './schemas.js';

/**
 * Conversation memories: the summary of each call the pipeline processed, by the other party's phone
 * (`pk WS#<ws>#MEMORY#<phone>`, `sk <call id>`: newest last, ULIDs), written once per call with its
 * record. When an agent has `settings.conversation_memories` on, a new call with the same person gets
 * the summaries of their earlier calls (newest first, at most MAX_MEMORIES) in its runtime context,
 * and the call is billed +5 credits per minute on top of call handling (billing's memories rule).
 */
export const MAX_MEMORIES = 5;

export const CallMemoryEntity = new Entity(
  {
    model: { entity: 'callMemory', version: '1', service: 'va' },
    attributes: {
      workspaceId: { type: 'string', required: true },
      phone: { type: 'string', required: true },
      callId: { type: 'string', required: true },
      summary: { type: 'string', required: true },
      endedAt: { type: 'string' },
    },
    indexes: {
      byPhone: primaryIndex(
        ['workspaceId', 'phone'],
        'WS#${workspaceId}#MEMORY#${phone}',
        ['callId'],
        '${callId}',
      ),
    },
  },
  entityConfig(),
);

/** The memory of a processed call (under the other party's phone), or undefined when none is kept. */
export function memoryOf(record: CallRecordWire) {
  const phone = record.direction === 'inbound' ? record.from_phone : record.to_phone;
  if (!/^\+\d{6,15}$/.test(phone) || record.status !== 'completed') return undefined;
  return {
    workspaceId: record.workspace_id,
    phone,
    callId: record.call_id,
    summary: record.summary.slice(0, 1000),
    ...(record.ended_at ? { endedAt: record.ended_at } : {}),
  };
}

/** Remembers a processed call's summary under the other party's phone (a put: a repeat writes the same). */
export async function rememberCall(record: CallRecordWire): Promise<void> {
  const memory = memoryOf(record);
  if (memory) await CallMemoryEntity.put(memory).go({ response: 'none' });
}

/**
 * The summaries of the contact's earlier calls for a new call, when its agent has conversation
 * memories on; empty otherwise (then nothing is billed for memories).
 */
export async function memoriesFor(call: {
  workspaceId: string;
  agentId: string;
  callId: string;
  phone: string;
}): Promise<string[]> {
  const agent = await findAgent(call.workspaceId, call.agentId);
  if (!agent?.settings.conversationMemories) return [];
  const { data } = await CallMemoryEntity.query
    .byPhone({ workspaceId: call.workspaceId, phone: call.phone })
    .lt({ callId: call.callId })
    .go({ order: 'desc', limit: MAX_MEMORIES });
  return data.map((memory) => memory.summary);
}
