import { searchKnowledgeBases } from '../../knowledge/voice-tool.js';
import type { LlmTool, LlmToolCall } from '../../providers/llm/port.js';
import type { ToolOutcome } from '../engine/ports.js';
import { BUILT_IN_TOOLS } from '../../agents/built-in-tools.js';
import type { ConversationSetup } from '../engine/model.js';

/**
 * The agent's tools: `end_call` always, `search_knowledge` over the agent's own knowledge bases (read
 * in the call's workspace only, whatever the model asks), `transfer_call` to the agent's
 * transfer number (`transfer`, cold or warm; else `transfer_phone_number`). The model chooses when to call them; it cannot name another base, another
 * workspace or another number.
 */
export function agentTools(options: { knowledge: boolean; transfer: boolean }): LlmTool[] {
  const tools: LlmTool[] = [
    {
      name: BUILT_IN_TOOLS.endCall,
      description:
        'End the call once the conversation is over (the caller said goodbye or has nothing more). Say goodbye first.',
      parameters: {
        type: 'object',
        properties: { reason: { type: 'string', description: 'Why the call ends, in a few words.' } },
      },
    },
  ];
  if (options.knowledge)
    tools.push({
      name: BUILT_IN_TOOLS.searchKnowledge,
      description:
        "Search the business's knowledge base (property listings and documents) for what the caller asked about. Speak only what it finds.",
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'What to look for, e.g. an address or a question.' },
        },
        required: ['query'],
      },
    });
  if (options.transfer)
    tools.push({
      name: BUILT_IN_TOOLS.transferCall,
      description:
        'Hand the call to a person at the business when the caller asks for one or you cannot help.',
      parameters: {
        type: 'object',
        properties: { reason: { type: 'string', description: 'Why the caller is transferred.' } },
      },
    });
  return tools;
}

const KNOWLEDGE_RESULTS = 3;
const json = (value: unknown) => JSON.stringify(value);
const failed = (error: string): ToolOutcome => ({ ok: false, content: json({ error }), error });

export async function runAgentTool(call: LlmToolCall, setup: ConversationSetup): Promise<ToolOutcome> {
  switch (call.name) {
    case BUILT_IN_TOOLS.endCall:
      return { ok: true, content: json({ ended: true }), end: { reason: 'agent_hangup' } };
    case BUILT_IN_TOOLS.transferCall:
      if (!setup.transferPhoneNumber) return failed('transfers are not set up for this agent');
      // Warm: the summary the person hears first is written when the session ends (conversation/transfer.ts).
      return {
        ok: true,
        content: json({ transferring: true }),
        end: {
          reason: 'transfer',
          transferTo: setup.transferPhoneNumber,
          mode: setup.transferMode === 'warm' ? 'warm' : 'cold',
        },
      };
    case BUILT_IN_TOOLS.searchKnowledge: {
      const query =
        typeof call.arguments.query === 'string' ? call.arguments.query.trim().slice(0, 1000) : '';
      if (query === '') return failed('query is required');
      if (setup.knowledgeBaseIds.length === 0) return failed('this agent has no knowledge base');
      const hits = await searchKnowledgeBases(
        setup.workspaceId,
        setup.knowledgeBaseIds,
        query,
        KNOWLEDGE_RESULTS,
      );
      const results = hits.map((hit) => ({
        item_id: hit.item_id,
        type: hit.type,
        title: hit.title,
        passage: hit.passage,
        ...(hit.listing ? { listing: hit.listing } : {}),
      }));
      const quoted = hits.slice(0, 1).flatMap((hit) =>
        hit.listing?.price_text
          ? [
              {
                listingId: hit.listing.external_id ?? hit.item_id,
                itemId: hit.item_id,
                address: hit.listing.full_address,
                price: hit.listing.price_text,
              },
            ]
          : [],
      );
      return { ok: true, content: json({ results }), quoted };
    }
    default:
      return failed(`unknown tool ${call.name.slice(0, 64)}`);
  }
}
