import { isConditionFailure } from '../platform/table.js';
import { clock } from '../platform/clock.js';
import { AgentEntity } from './entities.js';

/**
 * Billing switches every agent of an organisation off when its Free plan runs out of credits, and
 * back on when credits return. Turning back on restores only the agents billing turned off: an agent
 * the user switched off stays off.
 */
export async function setAnsweringForOrganisation(
  organisationId: string,
  on: boolean,
): Promise<{ changed: number }> {
  const { data: agents } = await AgentEntity.query.byOrganisation({ organisationId }).go({ pages: 'all' });
  let changed = 0;
  const updatedAt = clock.now().toISOString();
  for (const agent of agents) {
    if (agent.suspendedByBilling === !on) continue;
    try {
      await AgentEntity.patch({ workspaceId: agent.workspaceId, agentId: agent.agentId })
        .set({ suspendedByBilling: !on, updatedAt })
        .go({ response: 'none' });
      changed += 1;
    } catch (error) {
      if (!isConditionFailure(error)) throw error; // deleted meanwhile
    }
  }
  return { changed };
}
