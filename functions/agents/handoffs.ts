import { ValidationError, type ValidationIssue } from '../platform/errors.js';
import { isId } from '../platform/ids.js';
import { AgentEntity, type Agent } from './entities.js';

/**
 * An agent's `handoffs`: the agents of its workspace it may hand a call over to (the conversation
 * engine's built-in tool `handoff_to_agent`, offered when the list is not empty). Stored on the agent
 * and its versions as `handoffs` (camelCase, below); an empty list is stored as no field. A target is
 * checked when the list is saved: an agent of the same workspace, not the agent itself. A target
 * deleted later stays in the list (deleting an agent never fails for it): the engine answers a
 * handoff to it with an error and the current agent goes on.
 */

export const MAX_HANDOFFS = 10;
export const HANDOFF_CONTEXTS = ['full', 'summary', 'none'] as const;
export type HandoffContext = (typeof HANDOFF_CONTEXTS)[number];

/** One target as the agent item (and its versions) keeps it. */
export interface StoredHandoff {
  agentId: string;
  description: string;
  context: HandoffContext;
}

/** One target as the API takes it (after the schema's defaults). */
export interface HandoffInput {
  agent_id: string;
  description: string;
  context?: HandoffContext;
}

/** The list as stored: undefined for an empty list (the field is removed). */
export function handoffsFrom(input: readonly HandoffInput[]): StoredHandoff[] | undefined {
  if (input.length === 0) return undefined;
  return input.map((h) => ({
    agentId: h.agent_id,
    description: h.description,
    context: h.context ?? 'full',
  }));
}

/** The list as the API shows it (`[]` when the agent has none). */
export function handoffsToWire(
  agent: Pick<Agent, 'handoffs'>,
): { agent_id: string; description: string; context: HandoffContext }[] {
  return (agent.handoffs ?? []).map((h) => ({
    agent_id: h.agentId,
    description: h.description,
    context: h.context ?? 'full',
  }));
}

/**
 * Each target must be an agent of the workspace other than the agent itself (`selfId`; undefined
 * when the agent is being created): 422 on `body.handoffs.<i>.agent_id` for each that is not, read
 * consistently in one request.
 */
export async function requireHandoffTargets(
  workspaceId: string,
  selfId: string | undefined,
  handoffs: readonly HandoffInput[] | undefined,
): Promise<void> {
  if (!handoffs || handoffs.length === 0) return;
  const candidates = [...new Set(handoffs.map((h) => h.agent_id))].filter(
    (id) => id !== selfId && isId('agent', id),
  );
  const found = new Set<string>();
  if (candidates.length > 0) {
    const { data } = await AgentEntity.get(candidates.map((agentId) => ({ workspaceId, agentId }))).go({
      consistent: true,
      attributes: ['agentId'],
    });
    for (const agent of data) found.add(agent.agentId);
  }
  const issues: ValidationIssue[] = handoffs.flatMap((h, i) => {
    if (h.agent_id === selfId) return [issue(i, h.agent_id, 'an agent cannot hand over to itself')];
    if (!found.has(h.agent_id))
      return [issue(i, h.agent_id, `agent ${h.agent_id} not found in this workspace`)];
    return [];
  });
  if (issues.length > 0) throw new ValidationError(issues);
}

const issue = (i: number, agentId: string, message: string): ValidationIssue => ({
  type: 'value_error',
  loc: ['body', 'handoffs', i, 'agent_id'],
  msg: `Value error, ${message}`,
  input: agentId,
});
