import { AgentEntity } from '../../agents/entities.js';
import { storedSecrets, type ToolSecrets } from '../../agents/tool-definitions.js';
import { clock } from '../../platform/clock.js';
import { Entity } from '../../platform/entity.js';
import { primaryIndex } from '../../platform/keys.js';
import { batchGetStoredItems, entityConfig, entityKey, isConditionFailure } from '../../platform/table.js';
import { WebhookSecretEntity, type WebhookSecretRecord } from '../../webhook-deliveries/entities.js';
import { signingSecrets } from '../../webhook-deliveries/secrets.js';
import { activeSecrets } from '../../webhook-deliveries/signing.js';
import { withSession, type CallTools, type CallToolsStore, type McpListing } from '../tools/agent-toolbox.js';

/**
 * A call's agent tools, beside its conversation (not in the conversation item, which every turn
 * rewrites and DynamoDB bills by its size):
 *   callTools   pk CALLTOOLS#<connection id>   sk CALLTOOLS   (written with the session's start;
 *                                                            `mcp` added once, conditioned, by the
 *                                                            first turn that lists the servers; a
 *                                                            server's session replaced, conditioned
 *                                                            on the listing read; TTL 1 day)
 * Frames of one call run on different Lambda containers: each reads it once and keeps it (it changes
 * only by gaining `mcp`, and a container that has not seen that reads again before listing). The
 * workspace's webhook signing secret, which signs the function tools' requests, is read with it in
 * the same request and kept with it: a call signs with the secret as its container first read it (a
 * rotation reaches the next call at the latest; the secret it replaces keeps signing for 24 hours).
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

interface Known {
  tools: CallTools;
  /** The workspace's signing secret as read with the tools (absent: none made yet). */
  secret?: WebhookSecretRecord;
}

const known = new Map<string, Known>();
const remember = (connectionId: string, tools: Known) => {
  if (process.env.CONVERSATION_PROCESS_CACHE === 'off') return;
  known.delete(connectionId);
  known.set(connectionId, tools);
  if (known.size > 128) known.delete(known.keys().next().value!);
};

/** Tools this process just wrote (a handoff's target's): the frame's next read of them is free. */
export const keepInHand = (connectionId: string, tools: CallTools): void => remember(connectionId, { tools });

/** Tries to keep a replaced MCP session against other frames' writes of the listing. */
const KEEP_SESSION_ATTEMPTS = 3;

export const callToolsItem = (connectionId: string, tools: CallTools, expiresAt: number) => ({
  connectionId,
  tools: JSON.stringify({ tools: tools.tools, context: tools.context }),
  expiresAt,
});

export class TableCallToolsStore implements CallToolsStore {
  constructor(
    private readonly connectionId: string,
    private readonly workspaceId: string,
  ) {}

  /** What this frame read or found kept (a fresh container keeps nothing between frames). */
  private current: Known | undefined;

  private async inHand(): Promise<Known | undefined> {
    return (this.current ??= known.get(this.connectionId) ?? (await this.read()));
  }

  async load(): Promise<CallTools | undefined> {
    return (await this.inHand())?.tools;
  }

  private async read(): Promise<Known | undefined> {
    const [toolsItem, secretItem] = await batchGetStoredItems([
      entityKey(CallToolsEntity.get({ connectionId: this.connectionId }).params()),
      entityKey(WebhookSecretEntity.get({ workspaceId: this.workspaceId }).params()),
    ]);
    const data = toolsItem ? CallToolsEntity.parse({ Item: toolsItem }).data : null;
    if (!data) return undefined;
    const tools: CallTools = {
      ...(JSON.parse(data.tools) as CallTools),
      ...(data.mcp ? { mcp: JSON.parse(data.mcp) as Record<string, McpListing> } : {}),
    };
    const secret = secretItem
      ? (WebhookSecretEntity.parse({ Item: secretItem }).data ?? undefined)
      : undefined;
    this.current = { tools, ...(secret ? { secret } : {}) };
    remember(this.connectionId, this.current);
    return this.current;
  }

  async signingSecrets(): Promise<string[]> {
    const secret = (await this.inHand())?.secret;
    // None read with the tools: the workspace's first signed request makes it.
    return secret ? activeSecrets(secret, clock.now()) : signingSecrets(this.workspaceId);
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
    return stored.tools;
  }

  async keepMcpSession(server: string, sessionId: string): Promise<CallTools> {
    for (let attempt = 0; attempt < KEEP_SESSION_ATTEMPTS; attempt += 1) {
      const read = attempt === 0 ? await this.inHand() : await this.read();
      if (!read?.tools.mcp?.[server]) break;
      if (read.tools.mcp[server].sessionId === sessionId) return read.tools;
      const before = JSON.stringify(read.tools.mcp);
      const mcp = withSession(read.tools.mcp, server, sessionId)!;
      try {
        // Conditioned on the listing read: another frame's change meanwhile is read again, not lost.
        await CallToolsEntity.patch({ connectionId: this.connectionId })
          .set({ mcp: JSON.stringify(mcp) })
          .where((attr, op) => op.eq(attr.mcp, before))
          .go({ response: 'none' });
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        known.delete(this.connectionId);
        continue;
      }
      this.current = { ...read, tools: { ...read.tools, mcp } };
      remember(this.connectionId, this.current);
      return this.current.tools;
    }
    const kept = await this.load();
    if (!kept) throw new Error('call tools not found');
    return kept;
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
