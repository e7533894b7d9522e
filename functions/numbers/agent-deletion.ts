import { AGENT_NOT_FOUND, findAgent } from '../agents/service.js';
import { clock } from '../platform/clock.js';
import { notFound } from '../platform/errors.js';
import { numberService } from './entities.js';

/**
 * Deletes an agent; its number (if any) stays in the workspace, disconnected, in the same transaction.
 * It lives in numbers/, not agents/, because the agent and its number change together and numbers sits
 * above agents (docs/architecture.md): the agents' delete handler calls it. (A file of its own, so
 * that handler's bundle does not take the telephony adapters numbers/service.ts needs.)
 */
export async function deleteAgent(workspaceId: string, agentId: string): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const agent = await findAgent(workspaceId, agentId, { consistent: true });
    if (!agent) throw notFound(AGENT_NOT_FOUND);
    const numberId = agent.phoneNumberId;
    const phoneNumber = agent.phoneNumber;
    const result = await numberService.transaction
      .write(({ agent: agents, phoneNumber: numbers, phoneClaim: claims }) => [
        agents
          .delete({ workspaceId, agentId })
          .where((attr, op) =>
            numberId ? op.eq(attr.phoneNumberId, numberId) : op.notExists(attr.phoneNumberId),
          )
          .commit(),
        ...(numberId && phoneNumber
          ? [
              numbers
                .patch({ workspaceId, numberId })
                .remove(['agentId'])
                .set({ updatedAt: clock.now().toISOString() })
                .where((attr, op) => op.eq(attr.agentId, agentId))
                .commit(),
              claims
                .patch({ phoneNumber })
                .remove(['agentId'])
                .where((attr, op) => op.eq(attr.agentId, agentId))
                .commit(),
            ]
          : []),
      ])
      .go();
    if (!result.canceled) return;
    // The agent's number changed meanwhile: read again and retry.
  }
  throw new Error(`could not delete agent ${agentId}: it kept changing`);
}
