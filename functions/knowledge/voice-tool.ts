import { AgentEntity } from '../agents/entities.js';
import { CallEntity } from '../calling/entities.js';
import { isTerminal } from '../calling/status.js';
import { isId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import { telephony } from '../providers/telephony/index.js';
import { getKnowledgeBase } from './service.js';
import { searchBase, type SearchHit } from './search-index.js';
import { callKey } from '../calling/call-shards.js';

/**
 * The voice runtime's knowledge tool: `POST /webhooks/telephony/knowledge` (a function URL, like the
 * voice webhook). While a call is up, the provider's voice runtime asks it what the agent's knowledge
 * bases say about what the caller asked ("the house on Harbour Street in Manly") and speaks the best
 * answer. The request is the provider's (Twilio's dialect: form-encoded, signed with
 * `X-Twilio-Signature` over the URL and the parameters with the telephony account's auth token) and
 * names the call as the TwiML's stream parameters did:
 *
 *   CallSid, call_id, workspace_id, query (1–1,000 characters), limit? (1–5, default 3)
 *
 * or, for a scripted call (agent evaluations: no call record), the agent: `agent_id` and
 * `workspace_id` instead of `call_id`.
 *
 * → 200 `{results: [{item_id, knowledge_base_id, type, title, passage, score, listing?}]}`: the hits
 * of every knowledge base of the call's agent (`knowledge_base_ids`), best first (none: an agent
 * without bases, or nothing matched). 401 for a bad signature; 404 for a call the workspace does not
 * have (or whose provider call is another); 409 once the call has ended; 422 for a bad query.
 * Read-only: it changes nothing, so a retried request is harmless.
 *
 * The local simulator's voice runtime calls it when a caller asks about a listing (lib/local/
 * simulators/telephony/server.ts); in the cloud the runtime is configured with the function's URL
 * (the stack's output `FunctionUrlTelephonyKnowledgeWebhook`).
 */
export const KNOWLEDGE_TOOL_PATH = '/webhooks/telephony/knowledge' as const;

const MAX_QUERY = 1000;
const MAX_LIMIT = 5;

export interface KnowledgeToolRequest {
  url: string;
  params: Record<string, string>;
  signature?: string;
}

export interface KnowledgeToolHit extends Omit<SearchHit, 'id'> {
  knowledge_base_id: string;
}

/** The entities alone (not the services): this webhook's bundle stays small. */
async function findAgent(workspaceId: string, agentId: string) {
  if (!isId('agent', agentId)) return undefined;
  const { data } = await AgentEntity.get({ workspaceId, agentId }).go();
  return data ?? undefined;
}

async function readCall(workspaceId: string, callId: string) {
  const { data } = await CallEntity.get(callKey(workspaceId, callId)).go({ consistent: true });
  return data ?? undefined;
}

type Answer = { status: number; body: { error: string } | { results: KnowledgeToolHit[] } };
const refuse = (status: number, error: string): Answer => ({ status, body: { error } });

export async function answerKnowledgeTool(request: KnowledgeToolRequest): Promise<Answer> {
  if (!(await telephony().verifySignature(request.url, request.params, request.signature)))
    return refuse(401, 'Unauthorized');
  const { params } = request;
  const query = (params.query ?? '').trim();
  if (query === '' || query.length > MAX_QUERY)
    return refuse(422, `query must be 1 to ${MAX_QUERY} characters`);
  const limit = params.limit === undefined ? 3 : Number(params.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    return refuse(422, `limit must be a whole number from 1 to ${MAX_LIMIT}`);
  const workspaceId = params.workspace_id ?? '';
  const callId = params.call_id ?? '';
  let agentId: string;
  if (!callId && params.agent_id) {
    agentId = params.agent_id;
    if (!workspaceId || !(await findAgent(workspaceId, agentId))) return refuse(404, 'Agent not found');
  } else {
    const call = isId('call', callId) && workspaceId ? await readCall(workspaceId, callId) : undefined;
    // A provider call id recorded for the call must be the one asking (a call's tool is its own).
    if (!call || (call.providerCallId && params.CallSid && call.providerCallId !== params.CallSid))
      return refuse(404, 'Call not found');
    if (isTerminal(call.status)) return refuse(409, 'The call has ended');
    agentId = call.agentId;
  }
  const agent = await findAgent(workspaceId, agentId);
  const results = await searchKnowledgeBases(workspaceId, agent?.knowledgeBaseIds ?? [], query, limit);
  logger.info('knowledge tool answered', { callId, agentId, hits: results.length });
  return { status: 200, body: { results } };
}

/**
 * The best `limit` hits of these knowledge bases of the workspace, best first: what an agent's
 * knowledge tool answers (this webhook, and the conversation engine's `search_knowledge`). A base
 * deleted since the agent named it is skipped; only the workspace's own bases are read.
 */
export async function searchKnowledgeBases(
  workspaceId: string,
  knowledgeBaseIds: string[],
  query: string,
  limit: number,
): Promise<KnowledgeToolHit[]> {
  const results: KnowledgeToolHit[] = [];
  for (const knowledgeBaseId of knowledgeBaseIds) {
    const kb = await getKnowledgeBase(workspaceId, knowledgeBaseId);
    if (!kb) continue;
    for (const hit of await searchBase(kb, query, limit)) {
      const { id, ...rest } = hit;
      results.push({ ...rest, item_id: id, knowledge_base_id: knowledgeBaseId });
    }
  }
  results.sort((a, b) => b.score - a.score);
  return results.slice(0, limit);
}
