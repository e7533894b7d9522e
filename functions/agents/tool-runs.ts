import * as z from 'zod';
import { clock } from '../platform/clock.js';
import { notFound, tooManyRequests } from '../platform/errors.js';
import { isConditionFailure } from '../platform/table.js';
import { ToolTestWindowEntity, type Agent } from './entities.js';
import { invokeFunctionTool, type ToolCallContext, type ToolRun } from './tool-calls.js';
import { resolveTool, storedTools } from './tool-definitions.js';
import type { ListToolToolsResponse, TestToolResponse } from './tools-schema.js';

/**
 * The tool routes (docs/api.md "Agent tools"): `…/tools/{name}/test` runs one tool once as a call
 * would (signed the same way, `test: true`, `call.id` null), at most TOOL_TESTS_PER_MINUTE an agent
 * (429); `…/tools/{name}/list` asks an MCP server for its tools.
 */

export const TOOL_TESTS_PER_MINUTE = 10;
/** What a tool route keeps of its function's time to answer after the tool (its writes, the response). */
export const ROUTE_ANSWER_MARGIN_MS = 1500;

/**
 * The tool with its timeout cut to what the route has left (`budgetMs`: the function's remaining time
 * less ROUTE_ANSWER_MARGIN_MS): a tool allowed 30 s under a 10 s function is a `timeout` answered in
 * time, not the function's own timeout (a 5xx).
 */
const withinBudget = <T extends { timeoutMs: number }>(tool: T, budgetMs: number): T =>
  budgetMs >= tool.timeoutMs ? tool : { ...tool, timeoutMs: Math.max(1, Math.floor(budgetMs)) };

/** Until when a route may run a tool: its function's deadline less ROUTE_ANSWER_MARGIN_MS. */
export const routeDeadline = (remainingMs: number): number =>
  Date.now() + remainingMs - ROUTE_ANSWER_MARGIN_MS;
export const TOOL_NOT_FOUND = 'Tool not found';
export const TOOL_TESTS_RATE_LIMITED = 'Too many tool tests for this agent: at most 10 a minute';

/** Counts a test in the agent's current minute, or 429 with Retry-After. */
export async function countToolTest(agentId: string): Promise<void> {
  const nowSeconds = Math.floor(clock.now().getTime() / 1000);
  const windowStart = nowSeconds - (nowSeconds % 60);
  try {
    await ToolTestWindowEntity.update({ agentId, windowStart })
      .add({ count: 1 })
      .set({ expiresAt: windowStart + 120 })
      .where((attr, op) => `${op.notExists(attr.count)} OR ${op.lt(attr.count, TOOL_TESTS_PER_MINUTE)}`)
      .go({ response: 'none' });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    throw tooManyRequests(TOOL_TESTS_RATE_LIMITED, Math.max(1, windowStart + 60 - nowSeconds));
  }
}

/** The tool a route's `{name}` names: a tool's name, or an MCP tool's `{server}__{tool}` (test only). */
async function targetOf(agent: Agent, name: string, options: { combined: boolean }) {
  const tools = storedTools(agent);
  const tool = tools.find((t) => t.name === name);
  if (tool) return { tool: await resolveTool(agent, tool), remoteName: undefined };
  if (options.combined) {
    const { splitCombinedName } = await import('./mcp-tools.js');
    const split = splitCombinedName(tools, name);
    const server = split && tools.find((t) => t.name === split.prefix);
    if (split && server) return { tool: await resolveTool(agent, server), remoteName: split.remoteName };
  }
  throw notFound(TOOL_NOT_FOUND);
}

const testContext = (agent: Agent): ToolCallContext => ({
  callId: null,
  // The test route is not a call: its request says so, and names the version it runs (the agent's now).
  channel: 'test',
  workspaceId: agent.workspaceId,
  agentId: agent.agentId,
  agentVersion: agent.version ?? null,
  direction: null,
  fromPhone: null,
  toPhone: null,
  parameters: {},
  test: true,
});

function resultOf(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}

/**
 * Runs `name` once with `args`. A function tool is a signed POST; an MCP tool's `{server}__{tool}`
 * is a `tools/call` in a session ended afterwards. `{server}` alone is 404 (name one of its tools),
 * and so is a tool the server's `allowed_tools` leaves out (the agent does not offer it: 404 as for
 * a name the agent does not have, before the server is asked or a test counted).
 */
export async function testTool(
  agent: Agent,
  name: string,
  args: Record<string, unknown>,
  signal?: AbortSignal,
  /** Until when the route may run the tool (ms since the epoch; its function's deadline less a margin). */
  deadline = Number.POSITIVE_INFINITY,
): Promise<z.infer<typeof TestToolResponse>> {
  const { tool, remoteName } = await targetOf(agent, name, { combined: true });
  if (tool.type === 'mcp' && remoteName === undefined) throw notFound(TOOL_NOT_FOUND);
  // A tool the agent does not offer (left out by `allowed_tools`, or a combined name a model cannot
  // call) is not the agent's: no call can reach it, nor can a test.
  if (tool.type === 'mcp') {
    const { offersRemoteTool } = await import('./mcp-tools.js');
    if (!offersRemoteTool(tool, remoteName as string)) throw notFound(TOOL_NOT_FOUND);
  }
  await countToolTest(agent.agentId);
  const ctx = testContext(agent);
  const left = () => deadline - Date.now();
  let run: ToolRun;
  if (tool.type === 'function') {
    run = await invokeFunctionTool(withinBudget(tool, left()), args, ctx, signal);
  } else {
    const { callMcpTool, endMcpSession } = await import('./mcp-tools.js');
    const mcpRun = await callMcpTool(withinBudget(tool, left()), remoteName as string, args, ctx, signal);
    if (mcpRun.sessionId && left() > 0) await endMcpSession(withinBudget(tool, left()), mcpRun.sessionId);
    run = mcpRun;
  }
  return {
    status: run.status,
    http_status: run.httpStatus ?? null,
    duration_ms: run.durationMs,
    result: resultOf(run.content),
  };
}

/** The server's tools (an MCP tool), or the function tool itself; an unreachable server has `error`. */
export async function listToolTools(
  agent: Agent,
  name: string,
  signal?: AbortSignal,
  /** Until when the route may ask the server (as testTool's). */
  deadline = Number.POSITIVE_INFINITY,
): Promise<z.infer<typeof ListToolToolsResponse>> {
  const { tool } = await targetOf(agent, name, { combined: false });
  if (tool.type === 'function') {
    return {
      tools: [
        { name: tool.name, description: tool.description, input_schema: tool.parameters, allowed: true },
      ],
    };
  }
  const { listMcpTools } = await import('./mcp-tools.js');
  try {
    const listed = await listMcpTools(withinBudget(tool, deadline - Date.now()), signal, undefined, {
      endSession: true,
    });
    // Out of bounds: a call leaves every tool of the server out, and so does the list.
    if (listed.refused) return { tools: [], error: `the server's tools are left out: ${listed.refused}` };
    return {
      tools: listed.tools.map((offer) => ({
        name: offer.remoteName,
        description: offer.description,
        input_schema: offer.inputSchema,
        allowed: offer.allowed,
      })),
    };
  } catch (error) {
    // The server's failure is not the API's: 200 with no tools and why (the test route does the same).
    const reason = error instanceof Error ? error.message : String(error);
    return { tools: [], error: `the MCP server could not be listed: ${reason.slice(0, 300)}` };
  }
}
