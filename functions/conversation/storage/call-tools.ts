import { AgentEntity } from '../../agents/entities.js';
import { storedSecrets, type ToolSecrets } from '../../agents/tool-definitions.js';
import { Entity } from '../../platform/entity.js';
import { primaryIndex } from '../../platform/keys.js';
import { entityConfig, isConditionFailure } from '../../platform/table.js';
import type { CallTools, CallToolsStore, McpListing } from '../tools/agent-toolbox.js';

/**
 * A call's agent tools, beside its conversation (not in the conversation item, which every turn
 * rewrites and DynamoDB bills by its size):
 *   callTools   pk CALLTOOLS#<connection id>   sk CALLTOOLS   (written with the session's start;
 *                                                            `mcp` added once, conditioned, by the
 *                                                            first turn that lists the servers; TTL 1 day)
 * Frames of one call run on different Lambda containers: each reads it once and keeps it (it changes
 * only by gaining `mcp`, and a container that has not seen that reads again before listing).
 */
export const CallToolsEntity = new Entity(
  {
    model: { entity: 'callTools', version: '1', service: 'va' },
    attributes: {
      connectionId: { type: 'string', required: true },
      tools: { type: 'string', required: true },
      mcp: { type: 'string' },
      expiresAt: { type: 'number', required: true, field: 'expires_at' },
    },
    indexes: {
      byConnection: primaryIndex(['connectionId'], 'CALLTOOLS#${connectionId}', [], 'CALLTOOLS'),
    },
  },
  entityConfig(),
);

const known = new Map<string, CallTools>();
const remember = (connectionId: string, tools: CallTools) => {
  if (process.env.CONVERSATION_PROCESS_CACHE === 'off') return;
  known.delete(connectionId);
  known.set(connectionId, tools);
  if (known.size > 128) known.delete(known.keys().next().value!);
};

export const callToolsItem = (connectionId: string, tools: CallTools, expiresAt: number) => ({
  connectionId,
  tools: JSON.stringify({ tools: tools.tools, context: tools.context }),
  expiresAt,
});

export class TableCallToolsStore implements CallToolsStore {
  constructor(private readonly connectionId: string) {}

  async load(): Promise<CallTools | undefined> {
    const cached = known.get(this.connectionId);
    if (cached) return cached;
    return this.read();
  }

  private async read(): Promise<CallTools | undefined> {
    const { data } = await CallToolsEntity.get({ connectionId: this.connectionId }).go({ consistent: true });
    if (!data) return undefined;
    const tools: CallTools = {
      ...(JSON.parse(data.tools) as CallTools),
      ...(data.mcp ? { mcp: JSON.parse(data.mcp) as Record<string, McpListing> } : {}),
    };
    remember(this.connectionId, tools);
    return tools;
  }

  async keepMcp(mcp: Record<string, McpListing>): Promise<CallTools> {
    try {
      await CallToolsEntity.patch({ connectionId: this.connectionId })
        .set({ mcp: JSON.stringify(mcp) })
        .where((attr, op) => op.notExists(attr.mcp))
        .go({ response: 'none' });
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    known.delete(this.connectionId);
    const stored = await this.read();
    if (!stored) throw new Error('call tools not found');
    return stored;
  }

  async secrets(): Promise<ToolSecrets> {
    const tools = await this.load();
    if (!tools) return {};
    const { workspaceId, agentId } = tools.context;
    const { data } = await AgentEntity.get({ workspaceId, agentId }).go({ attributes: ['toolSecrets'] });
    return storedSecrets(data ?? {});
  }

  forget(): void {
    known.delete(this.connectionId);
  }
}
