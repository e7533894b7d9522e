import {
  callMcpTool,
  endMcpSession,
  listMcpTools,
  MAX_MCP_LISTING_BYTES,
  offerBytes,
  splitCombinedName,
} from '../../agents/mcp-tools.js';
import { invokeFunctionTool, notSent, type ToolCallContext, type ToolRun } from '../../agents/tool-calls.js';
import {
  resolveTool,
  type StoredFunctionTool,
  type StoredTool,
  type ToolSecrets,
} from '../../agents/tool-definitions.js';
import { signingSecrets } from '../../webhook-deliveries/secrets.js';
import type { LlmTool, LlmToolCall } from '../../providers/llm/port.js';
import type { ConversationIncident } from '../engine/model.js';
import type { AgentToolBox, ToolOutcome } from '../engine/ports.js';

/**
 * The agent's own tools in a call (function tools, MCP servers' tools), as the engine sees them
 * (`AgentToolBox`) and runs them. Their definitions are read from the agent when the session starts
 * and kept for the call beside the conversation (`CallToolsStore`), never in the conversation item
 * every turn rewrites; header values stay sealed in the agent item and are opened only for the
 * request that needs them. An MCP server's tools are listed once per call, at the first turn that
 * offers tools, and the list and the server's session are kept for the rest of the call.
 */

export interface McpListing {
  offers: { name: string; remoteName: string; description: string; inputSchema: Record<string, unknown> }[];
  sessionId?: string;
  failed?: string;
}

export interface CallTools {
  tools: StoredTool[];
  context: ToolCallContext;
  /** By server (the tool's name): what it offered, once listed. */
  mcp?: Record<string, McpListing>;
}

export interface CallToolsStore {
  load(): Promise<CallTools | undefined>;
  /** Keeps the call's MCP listing; when another frame kept one first, that one is returned. */
  keepMcp(mcp: Record<string, McpListing>): Promise<CallTools>;
  /**
   * Keeps the session a server gave in place of the one kept for the call (it expired and a new one
   * was opened, or the server answered with another `Mcp-Session-Id`): later turns use it, and the
   * call's end closes it.
   */
  keepMcpSession(server: string, sessionId: string): Promise<CallTools>;
  /** The agent's sealed header values (read when a tool with headers runs). */
  secrets(): Promise<ToolSecrets>;
  /** The workspace's webhook signing secrets, which sign a function tool's request. */
  signingSecrets(): Promise<string[]>;
}

const MCP_LIST_TIMEOUT_MS = 5_000;

export class CallToolBox implements AgentToolBox {
  /** Read once a turn, and only when the model asks for a function tool (the box lives one frame). */
  private signing?: Promise<string[]>;
  private headerSecrets?: Promise<ToolSecrets>;

  constructor(
    private tools: CallTools,
    private readonly store: CallToolsStore,
  ) {}

  prepare(calls: readonly LlmToolCall[]): void {
    const asked = calls.map((call) => this.functionTool(call.name)).filter((t) => t !== undefined);
    if (asked.length === 0) return;
    this.signing ??= quiet(this.store.signingSecrets());
    if (asked.some((t) => Object.keys(t.headers ?? {}).length > 0))
      this.headerSecrets ??= quiet(this.store.secrets());
  }

  private functionTool(name: string): StoredFunctionTool | undefined {
    const tool = this.tools.tools.find((t) => t.type === 'function' && t.name === name);
    return tool?.type === 'function' ? tool : undefined;
  }

  async offered(): Promise<{ tools: LlmTool[]; incidents: Omit<ConversationIncident, 'at'>[] }> {
    const incidents: Omit<ConversationIncident, 'at'>[] = [];
    const servers = this.tools.tools.filter((t) => t.type === 'mcp');
    if (servers.length > 0 && !this.tools.mcp) incidents.push(...(await this.listServers()));
    const offered: LlmTool[] = [];
    for (const tool of this.tools.tools) {
      if (tool.type === 'function')
        offered.push({ name: tool.name, description: tool.description, parameters: tool.parameters });
      else
        for (const offer of this.tools.mcp?.[tool.name]?.offers ?? [])
          offered.push({ name: offer.name, description: offer.description, parameters: offer.inputSchema });
    }
    return { tools: offered, incidents };
  }

  private async listServers(): Promise<Omit<ConversationIncident, 'at'>[]> {
    const incidents: Omit<ConversationIncident, 'at'>[] = [];
    const secrets = await this.secretsIfNeeded(this.tools.tools.filter((t) => t.type === 'mcp'));
    const listings = await Promise.all(
      this.tools.tools.flatMap((tool) =>
        tool.type !== 'mcp'
          ? []
          : [
              (async (): Promise<[string, McpListing]> => {
                try {
                  const resolved = await resolveTool(this.owner(secrets), tool);
                  const signal = AbortSignal.timeout(Math.min(tool.timeoutMs, MCP_LIST_TIMEOUT_MS));
                  const list = await listMcpTools({ ...tool, openedHeaders: resolved.openedHeaders }, signal);
                  incidents.push(...list.incidents);
                  const offers = list.tools
                    .filter((offer) => offer.allowed)
                    .map(({ name, remoteName, description, inputSchema }) => ({
                      name,
                      remoteName,
                      description,
                      inputSchema,
                    }));
                  return [
                    tool.name,
                    {
                      offers,
                      ...(list.sessionId ? { sessionId: list.sessionId } : {}),
                      ...(list.refused ? { failed: list.refused } : {}),
                    },
                  ];
                } catch (error) {
                  const reason = error instanceof Error ? error.message.slice(0, 200) : 'unreachable';
                  incidents.push({ kind: 'mcp_server_failed', detail: `${tool.name}: ${reason}` });
                  return [tool.name, { offers: [], failed: reason }];
                }
              })(),
            ],
      ),
    );
    this.tools = await this.store.keepMcp(Object.fromEntries(withinBudget(listings, incidents)));
    return incidents;
  }

  lines(name: string): { during?: string; onFailure?: string } | undefined {
    const tool = this.tools.tools.find((t) => t.type === 'function' && t.name === name);
    if (!tool || tool.type !== 'function') return undefined;
    return { during: tool.speakDuring, onFailure: tool.speakOnFailure };
  }

  /** Whether `name` is one of the agent's own tools offered in this call. */
  has(name: string): boolean {
    if (this.tools.tools.some((t) => t.type === 'function' && t.name === name)) return true;
    const split = splitCombinedName(this.tools.tools, name);
    return !!split && !!this.tools.mcp?.[split.prefix]?.offers.some((o) => o.name === name);
  }

  /** Runs one of the agent's tools; with `current`, nothing is sent unless that proof is true. */
  async run(call: LlmToolCall, signal?: AbortSignal, current?: Promise<boolean>): Promise<ToolOutcome> {
    const fn = this.functionTool(call.name);
    if (fn) {
      const resolved = await resolveTool(this.owner(await this.secretsIfNeeded([fn])), fn);
      return outcome(
        'function',
        await invokeFunctionTool(
          { ...fn, openedHeaders: resolved.openedHeaders },
          call.arguments,
          this.tools.context,
          signal,
          (this.signing ??= this.store.signingSecrets()),
          current,
        ),
      );
    }
    if (current && !(await current.catch(() => false))) return outcome('mcp', notSent());
    const split = splitCombinedName(this.tools.tools, call.name);
    const server = split && this.tools.tools.find((t) => t.type === 'mcp' && t.name === split.prefix);
    if (!split || !server || server.type !== 'mcp') throw new Error(`not an agent tool: ${call.name}`);
    const resolved = await resolveTool(this.owner(await this.secretsIfNeeded([server])), server);
    const session = this.tools.mcp?.[server.name]?.sessionId;
    const signals = [AbortSignal.timeout(server.timeoutMs), ...(signal ? [signal] : [])];
    const run = await callMcpTool(
      { ...server, openedHeaders: resolved.openedHeaders },
      split.remoteName,
      call.arguments,
      this.tools.context,
      AbortSignal.any(signals),
      session,
    );
    if (run.sessionId && run.sessionId !== session)
      this.tools = await this.store.keepMcpSession(server.name, run.sessionId);
    return outcome('mcp', run);
  }

  /** The call is over: the MCP sessions kept for it are ended (best effort: a server may be gone). */
  async endSessions(): Promise<void> {
    const servers = this.tools.tools.filter(
      (tool) => tool.type === 'mcp' && this.tools.mcp?.[tool.name]?.sessionId,
    );
    if (servers.length === 0) return;
    const secrets = await this.secretsIfNeeded(servers);
    await Promise.all(
      servers.map(async (server) => {
        if (server.type !== 'mcp') return;
        const resolved = await resolveTool(this.owner(secrets), server);
        await endMcpSession(
          { ...server, openedHeaders: resolved.openedHeaders },
          this.tools.mcp![server.name].sessionId!,
        );
      }),
    );
  }

  private owner(toolSecrets: ToolSecrets) {
    return { workspaceId: this.tools.context.workspaceId, agentId: this.tools.context.agentId, toolSecrets };
  }

  private async secretsIfNeeded(tools: StoredTool[]): Promise<ToolSecrets> {
    if (!tools.some((t) => Object.keys(t.headers ?? {}).length > 0)) return {};
    return (this.headerSecrets ??= this.store.secrets());
  }
}

/**
 * The listings to keep for the call: all the agent's servers together within MAX_MCP_LISTING_BYTES,
 * in the agent's order; a server that does not fit is left out whole (an incident), as one over its
 * own bounds is (mcp-tools.ts).
 */
function withinBudget(
  listings: [string, McpListing][],
  incidents: Omit<ConversationIncident, 'at'>[],
): [string, McpListing][] {
  let used = 0;
  return listings.map(([name, listing]) => {
    const bytes = listing.offers.reduce((sum, offer) => sum + offerBytes(offer), 0);
    if (used + bytes <= MAX_MCP_LISTING_BYTES) {
      used += bytes;
      return [name, listing];
    }
    const reason = `its tools are left out: the agent's MCP tools take over ${MAX_MCP_LISTING_BYTES / 1024} KB`;
    incidents.push({ kind: 'mcp_server_failed', detail: `${name}: ${reason}` });
    return [
      name,
      { offers: [], ...(listing.sessionId ? { sessionId: listing.sessionId } : {}), failed: reason },
    ];
  });
}

/**
 * A read started early may never be awaited (the turn was interrupted first): its failure is then
 * nobody's, so it is marked handled here; whoever awaits it still gets the failure.
 */
function quiet<T>(read: Promise<T>): Promise<T> {
  read.catch(() => {
    // Handled here only so an unawaited read is not an unhandled rejection (see above).
  });
  return read;
}

function outcome(type: 'function' | 'mcp', run: ToolRun): ToolOutcome {
  return {
    ok: run.status === 'ok',
    content: run.content,
    ...(run.error ? { error: run.error.slice(0, 300) } : {}),
    type,
    status: run.status,
    ...(run.httpStatus !== undefined ? { httpStatus: run.httpStatus } : {}),
    durationMs: run.durationMs,
  };
}

/** A CallToolsStore in memory (an evaluation's scripted call). */
export class MemoryCallToolsStore implements CallToolsStore {
  constructor(
    private tools: CallTools,
    private readonly toolSecrets: ToolSecrets,
  ) {}
  load(): Promise<CallTools> {
    return Promise.resolve(this.tools);
  }
  keepMcp(mcp: Record<string, McpListing>): Promise<CallTools> {
    this.tools = { ...this.tools, mcp: this.tools.mcp ?? mcp };
    return Promise.resolve(this.tools);
  }
  keepMcpSession(server: string, sessionId: string): Promise<CallTools> {
    this.tools = { ...this.tools, mcp: withSession(this.tools.mcp, server, sessionId) };
    return Promise.resolve(this.tools);
  }
  secrets(): Promise<ToolSecrets> {
    return Promise.resolve(this.toolSecrets);
  }
  signingSecrets(): Promise<string[]> {
    return signingSecrets(this.tools.context.workspaceId);
  }
}

/** `mcp` with `server`'s kept session replaced (a server not listed for the call is left alone). */
export function withSession(
  mcp: Record<string, McpListing> | undefined,
  server: string,
  sessionId: string,
): Record<string, McpListing> | undefined {
  if (!mcp?.[server]) return mcp;
  return { ...mcp, [server]: { ...mcp[server], sessionId } };
}
