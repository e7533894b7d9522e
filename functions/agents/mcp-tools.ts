import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { logger } from '../platform/logger.js';
import { guardedFetch } from '../platform/outbound-http/guarded-fetch.js';
import { allowedHosts, requireHttps } from '../platform/outbound-http/settings.js';
import {
  errorKind,
  failed,
  MAX_TOOL_RESULT_BYTES,
  type ToolCallContext,
  type ToolRun,
} from './tool-calls.js';
import type { ResolvedTool } from './tool-definitions.js';

/**
 * An agent's MCP servers (docs/api.md "Agent tools"): the official SDK's client over Streamable
 * HTTP, imported on first use (only runs with MCP tools load it), every request through the webhook
 * kernel's guarded fetch (the SSRF rules of webhooks, after DNS). Each server's tools are offered as
 * `{name}__{tool}`; a combined name over 64 characters or outside `[a-zA-Z0-9_-]` is left out (an
 * incident). A run is bounded by the tool's `timeout_ms` and by the caller's signal.
 */

export type ResolvedMcpTool = Extract<ResolvedTool, { type: 'mcp' }>;

/** Bytes one MCP response may carry (a server's tool list can be long, but not unbounded). */
const MAX_MCP_RESPONSE_BYTES = 2 * 1024 * 1024;
const MAX_LIST_PAGES = 10;
const COMBINED_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** Tools one server may offer an agent; a server offering more is left out whole. */
export const MAX_MCP_TOOLS = 64;
/**
 * Bytes of the offered tools (names, descriptions, input schemas as JSON) kept for a call, all the
 * agent's servers together (one server's listing too): the call's tools item stays far below
 * DynamoDB's 400 KB item, and the model's request stays small.
 */
export const MAX_MCP_LISTING_BYTES = 256 * 1024;
/** Incidents about single tools' names, a server (more are counted in the last one). */
const MAX_NAME_INCIDENTS = 5;

/** The bytes an offer takes in a kept listing. */
export const offerBytes = (offer: { name: string; description: string; inputSchema: unknown }): number =>
  Buffer.byteLength(JSON.stringify(offer), 'utf8');

export interface McpToolOffer {
  /** `{prefix}__{tool}`: the name the model calls. */
  name: string;
  /** The server's own name for it. */
  remoteName: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** In `allowed_tools` (or no `allowed_tools`), and its combined name is usable. */
  allowed: boolean;
}

export interface McpIncident {
  kind: 'mcp_tool_skipped' | 'mcp_server_failed';
  detail: string;
}

export interface McpToolList {
  tools: McpToolOffer[];
  incidents: McpIncident[];
  /**
   * Why none of the server's tools is offered, when it is out of bounds: more than MAX_MCP_TOOLS
   * offered, over MAX_MCP_LISTING_BYTES, or an offered tool's input schema breaking the rules of a
   * function tool's `parameters` (then every `allowed` is false and an incident says why).
   */
  refused?: string;
  /** The server's session (keep it for the rest of the call, pass it to callMcpTool). */
  sessionId?: string;
}

export const combinedName = (prefix: string, remote: string): string => `${prefix}__${remote}`;

/** Whether the agent offers the server's tool `remote`: a usable combined name, in `allowed_tools` (if any). */
export const offersRemoteTool = (
  server: { name: string; allowedTools?: readonly string[] },
  remote: string,
): boolean =>
  COMBINED_NAME.test(combinedName(server.name, remote)) &&
  (!server.allowedTools || server.allowedTools.includes(remote));

/** The prefix and the server's tool name of a combined name of one of `tools`, or undefined. */
export function splitCombinedName(
  tools: readonly { type: string; name: string }[],
  name: string,
): { prefix: string; remoteName: string } | undefined {
  const server = tools.find((t) => t.type === 'mcp' && name.startsWith(`${t.name}__`));
  if (!server) return undefined;
  const remoteName = name.slice(server.name.length + 2);
  return remoteName ? { prefix: server.name, remoteName } : undefined;
}

interface Connected {
  client: Client;
  sessionId?: string;
  /** Ends the session on the server (DELETE), best effort. */
  terminate: () => Promise<void>;
}

/** Runs `work` with a connected client (a new session, or `session`), then closes the connection. */
async function withClient<T>(
  tool: ResolvedMcpTool,
  signal: AbortSignal | undefined,
  session: string | undefined,
  work: (connected: Connected, options: { signal: AbortSignal; timeout: number }) => Promise<T>,
): Promise<{ value: T; sessionId?: string }> {
  const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]);
  const bounded = AbortSignal.any([...(signal ? [signal] : []), AbortSignal.timeout(tool.timeoutMs)]);
  const transport = new StreamableHTTPClientTransport(new URL(tool.url), {
    fetch: guardedFetch({
      allowedHosts: allowedHosts(),
      requireHttps: requireHttps(),
      maxResponseBytes: MAX_MCP_RESPONSE_BYTES,
      signal: bounded,
    }),
    requestInit: { headers: tool.openedHeaders },
    reconnectionOptions: {
      maxRetries: 0,
      initialReconnectionDelay: 1000,
      maxReconnectionDelay: 1000,
      reconnectionDelayGrowFactor: 1,
    },
    ...(session ? { sessionId: session } : {}),
  });
  const client = new Client({ name: 'voice-agent-service', version: '1.0.0' });
  client.onerror = () => undefined;
  const options = { signal: bounded, timeout: tool.timeoutMs };
  try {
    await client.connect(transport, options);
    const value = await work(
      {
        client,
        sessionId: transport.sessionId,
        // Ending a session is a courtesy to the server: one that cannot be told forgets it on its own.
        terminate: () =>
          transport.terminateSession().catch(() => {
            // A courtesy to the server: one that cannot be told forgets the session on its own.
          }),
      },
      options,
    );
    return { value, sessionId: transport.sessionId };
  } finally {
    // Closing only releases our side's transport; its failure leaves nothing to undo or report.
    await client.close().catch(() => {
      // Only our side's transport is released: a failure leaves nothing to undo or report.
    });
  }
}

function statusOf(
  error: unknown,
  signal: AbortSignal | undefined,
): { status: ToolRun['status']; error: string } {
  if (signal?.aborted) return { status: 'cancelled', error: 'cancelled' };
  const message = error instanceof Error ? error.message : String(error);
  const name = error instanceof Error ? error.name : '';
  // Only the tool's own timeout aborts it when the caller's signal did not.
  if (name === 'TimeoutError' || name === 'AbortError' || /timed out|timeout|abort/i.test(message))
    return { status: 'timeout', error: 'timed out' };
  return { status: 'error', error: message.slice(0, 300) || 'MCP request failed' };
}

/**
 * The server's tools (`tools/list`, every page): each with its combined name, input schema and
 * whether the agent offers it. Throws when the server cannot be reached or answers badly (the
 * caller records it: an incident in a call, a 200 with an error in the route).
 */
export async function listMcpTools(
  tool: ResolvedMcpTool,
  signal?: AbortSignal,
  session?: string,
  options: { endSession?: boolean } = {},
): Promise<McpToolList> {
  const { value, sessionId } = await withClient(tool, signal, session, async (connected, request) => {
    const offers: McpToolOffer[] = [];
    const incidents: McpIncident[] = [];
    let skipped = 0;
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
      const listed = await connected.client.listTools(cursor ? { cursor } : {}, request);
      for (const remote of listed.tools) {
        const name = combinedName(tool.name, remote.name);
        const usable = COMBINED_NAME.test(name);
        const wanted = !tool.allowedTools || tool.allowedTools.includes(remote.name);
        if (!usable && wanted && (skipped += 1) <= MAX_NAME_INCIDENTS)
          incidents.push({
            kind: 'mcp_tool_skipped',
            detail: `${tool.name}: tool "${remote.name.slice(0, 80)}" left out (the name ${name.length > 64 ? 'is over 64 characters' : 'has characters outside [a-zA-Z0-9_-]'})`,
          });
        offers.push({
          name,
          remoteName: remote.name,
          description: remote.description ?? '',
          inputSchema: remote.inputSchema as Record<string, unknown>,
          allowed: usable && wanted,
        });
      }
      cursor = listed.nextCursor;
      if (!cursor) break;
    }
    if (skipped > MAX_NAME_INCIDENTS)
      incidents.push({
        kind: 'mcp_tool_skipped',
        detail: `${tool.name}: ${skipped - MAX_NAME_INCIDENTS} more tools left out for their names`,
      });
    if (options.endSession) await connected.terminate();
    const refused = await listingProblem(offers.filter((offer) => offer.allowed));
    if (!refused) return { tools: offers, incidents };
    incidents.push({ kind: 'mcp_server_failed', detail: `${tool.name}: its tools are left out: ${refused}` });
    return { tools: offers.map((offer) => ({ ...offer, allowed: false })), incidents, refused };
  });
  return { ...value, ...(sessionId && !options.endSession ? { sessionId } : {}) };
}

/** Why a server's offered tools cannot be offered (MCP listings are bounded like function tools). */
async function listingProblem(offered: readonly McpToolOffer[]): Promise<string | undefined> {
  if (offered.length > MAX_MCP_TOOLS)
    return `it offers ${offered.length} tools (at most ${MAX_MCP_TOOLS} a server)`;
  const bytes = offered.reduce((sum, offer) => sum + offerBytes(offer), 0);
  if (bytes > MAX_MCP_LISTING_BYTES)
    return `its tools take ${Math.ceil(bytes / 1024)} KB (at most ${MAX_MCP_LISTING_BYTES / 1024} KB)`;
  const { parametersProblem } = await import('./tools-validation.js');
  for (const offer of offered) {
    const problem = await parametersProblem(offer.inputSchema);
    if (problem)
      return `tool "${offer.remoteName.slice(0, 80)}": its input schema breaks the rules of a tool's parameters (${problem.slice(0, 200)})`;
  }
  return undefined;
}

export interface McpToolRun extends ToolRun {
  /** The server's session, to pass to the next call of this server in the same conversation. */
  sessionId?: string;
}

/**
 * Calls one of the server's tools (`tools/call`): its text content is the result (the first 16 KB);
 * `isError` or a failure is `{"error": …}`. `session`: a session kept from earlier in the call (an
 * expired one is replaced by a new session once).
 */
export async function callMcpTool(
  tool: ResolvedMcpTool,
  remoteName: string,
  args: Record<string, unknown>,
  ctx: ToolCallContext,
  signal?: AbortSignal,
  session?: string,
): Promise<McpToolRun> {
  const started = Date.now();
  const attempt = (sessionId: string | undefined) =>
    withClient(tool, signal, sessionId, async ({ client }, request) =>
      client.callTool({ name: remoteName, arguments: args }, undefined, request),
    );
  let run: McpToolRun;
  let reportedError = false;
  try {
    let result: Awaited<ReturnType<typeof attempt>>;
    try {
      result = await attempt(session);
    } catch (error) {
      const expired = session && (error as { code?: number }).code === 404 && !signal?.aborted;
      if (!expired) throw error;
      result = await attempt(undefined);
    }
    const { value, sessionId } = result;
    const content = Array.isArray(value.content) ? (value.content as { type: string; text?: string }[]) : [];
    const text = content
      .filter((item) => item.type === 'text' && typeof item.text === 'string')
      .map((item) => item.text)
      .join('\n');
    const bounded = Buffer.from(text, 'utf8').subarray(0, MAX_TOOL_RESULT_BYTES).toString('utf8');
    const durationMs = Date.now() - started;
    reportedError = value.isError === true;
    run = value.isError
      ? { ...failed('error', bounded.slice(0, 1000) || 'the tool reported an error', durationMs), sessionId }
      : { status: 'ok', durationMs, content: bounded, sessionId };
  } catch (error) {
    const { status, error: reason } = statusOf(error, signal);
    run = failed(status, reason, Date.now() - started);
  }
  logger.info('tool run', {
    tool: combinedName(tool.name, remoteName),
    kind: 'mcp',
    callId: ctx.callId,
    agentId: ctx.agentId,
    test: ctx.test,
    status: run.status,
    durationMs: run.durationMs,
    // The server's own error text (isError content) is the tool's answer: never logged.
    ...(run.error ? { error: reportedError ? 'the tool reported an error' : errorKind(run.error) } : {}),
  });
  return run;
}

/** Ends a session kept for a call (at the call's end), best effort. */
export async function endMcpSession(tool: ResolvedMcpTool, sessionId: string): Promise<void> {
  // Best effort by design: the call is already saved, and a server that is down forgets the session itself.
  await withClient(tool, undefined, sessionId, ({ terminate }) => terminate()).catch(() => {
    // Best effort: the call is saved, and a server that is down forgets the session itself.
  });
}
