import { randomUUID } from 'node:crypto';
import { clock } from '../platform/clock.js';
import { logger } from '../platform/logger.js';
import { postForResponse } from '../platform/outbound-http/http-attempt.js';
import { signingSecrets } from '../webhook-deliveries/secrets.js';
import { allowedHosts, requireHttps } from '../platform/outbound-http/settings.js';
import { signatureHeaders } from '../webhook-deliveries/signing.js';
import type { ResolvedTool, StoredFunctionTool } from './tool-definitions.js';

/**
 * Running an agent's function tool (docs/api.md "Agent tools"): one signed POST to the tool's URL,
 * as a webhook (Standard Webhooks, the workspace's webhook secret, the outbound HTTP client's SSRF rules (platform/outbound-http),
 * checked at each call after DNS), no retry. A 2xx answer of JSON or `text/*` is the result (its
 * first 16 KB); anything else is `{"error": …}` for the model. The conversation engine, the test chat,
 * evaluations and the test route all run tools through here.
 */

export const MAX_TOOL_RESULT_BYTES = 16 * 1024;

export type ToolRunStatus = 'ok' | 'error' | 'timeout' | 'cancelled';

export interface ToolRun {
  status: ToolRunStatus;
  /** The endpoint's HTTP status, when one answered. */
  httpStatus?: number;
  durationMs: number;
  /** What the model reads: the result, or `{"error": …}` as JSON. */
  content: string;
  /** Why it failed, in a few words (also inside `content`). */
  error?: string;
}

/** The call a tool runs in, as the request body's `call` tells the endpoint. */
export interface ToolCallContext {
  /** null for the test route. */
  callId: string | null;
  /** `test`: the tool test route (no call). */
  channel: 'phone' | 'web' | 'evaluation' | 'test';
  workspaceId: string;
  agentId: string;
  agentVersion: number | null;
  direction: 'inbound' | 'outbound' | null;
  fromPhone: string | null;
  toPhone: string | null;
  parameters: Record<string, string>;
  /** True for the test chat, evaluations and the test route. */
  test: boolean;
}

export type ResolvedFunctionTool = Extract<ResolvedTool, { type: 'function' }>;

const isJson = (type: string) => /^application\/([\w.+-]*\+)?json\b/i.test(type);
const isText = (type: string) => /^text\//i.test(type);

export const failed = (
  status: ToolRunStatus,
  error: string,
  durationMs: number,
  httpStatus?: number,
): ToolRun => ({
  status,
  durationMs,
  error,
  content: JSON.stringify({ error }),
  ...(httpStatus !== undefined ? { httpStatus } : {}),
});

/** A request held back: its turn was no longer current, so nothing went to the endpoint. */
export const notSent = (durationMs = 0): ToolRun =>
  failed('cancelled', 'not sent: the turn was superseded', durationMs);

/** The request body a function tool's endpoint receives (static arguments merged, they win). */
export function toolRequestBody(
  tool: Pick<StoredFunctionTool, 'name' | 'staticArguments'>,
  args: Record<string, unknown>,
  ctx: ToolCallContext,
): string {
  return JSON.stringify({
    tool: tool.name,
    test: ctx.test,
    call: {
      id: ctx.callId,
      channel: ctx.channel,
      agent_id: ctx.agentId,
      agent_version: ctx.agentVersion,
      workspace_id: ctx.workspaceId,
      direction: ctx.direction,
      from_phone: ctx.fromPhone,
      to_phone: ctx.toPhone,
      parameters: ctx.parameters,
    },
    arguments: { ...args, ...(tool.staticArguments ?? {}) },
  });
}

/**
 * Runs a function tool once. Never throws for what the endpoint does (refused address, network
 * error, timeout, bad answer): that is a ToolRun with its status. `signal` aborts the request.
 */
export async function invokeFunctionTool(
  tool: ResolvedFunctionTool,
  args: Record<string, unknown>,
  ctx: ToolCallContext,
  signal?: AbortSignal,
  /** The workspace's signing secrets when already being read (a call reads them beside its checks). */
  secrets: Promise<string[]> = signingSecrets(ctx.workspaceId),
  /**
   * A call's proof that its turn is current: the request is made ready (checked, signed, connected)
   * meanwhile, and its body goes only when this is true; otherwise nothing is sent.
   */
  current?: Promise<boolean>,
): Promise<ToolRun> {
  const started = Date.now();
  const { argumentsProblem } = await import('./tools-validation.js');
  const problem = await argumentsProblem(tool.parameters, args);
  if (problem) return finish(tool, ctx, failed('error', problem, Date.now() - started));
  const payload = toolRequestBody(tool, args, ctx);
  // Signed once the secrets are read; the connection opens meanwhile.
  const signed = secrets.then((read): Record<string, string> => ({
    ...signatureHeaders({
      webhookId: `tool_${randomUUID()}`,
      timestamp: clock.now(),
      payload,
      secrets: read,
    }),
  }));
  const exchange = await postForResponse({
    url: tool.url,
    body: payload,
    headers: { ...tool.openedHeaders, 'content-type': 'application/json' },
    lateHeaders: signed,
    allowedHosts: allowedHosts(),
    requireHttps: requireHttps(),
    timeoutMs: tool.timeoutMs,
    maxResponseBytes: MAX_TOOL_RESULT_BYTES,
    signal,
    ...(current ? { sendWhen: current } : {}),
  });
  const durationMs = Date.now() - started;
  if (exchange.notSent) {
    await signed; // a failure to read the secrets is the tool's failure, not a superseded turn
    return notSent(durationMs);
  }
  const status = exchange.statusCode;
  if (exchange.cancelled) return finish(tool, ctx, failed('cancelled', 'cancelled', durationMs, status));
  if (exchange.timedOut)
    return finish(tool, ctx, failed('timeout', `timed out after ${tool.timeoutMs} ms`, durationMs, status));
  if (exchange.error) return finish(tool, ctx, failed('error', exchange.error, durationMs, status));
  const type = exchange.contentType ?? '';
  if (exchange.body !== '' && !isJson(type) && !isText(type))
    return finish(
      tool,
      ctx,
      failed('error', `unsupported content type ${type.slice(0, 100) || '(none)'}`, durationMs, status),
    );
  return finish(tool, ctx, { status: 'ok', httpStatus: status, durationMs, content: exchange.body });
}

/**
 * What a log line says of a tool's failure: its kind only, the text before the first `:` (`HTTP 500
 * Internal Server Error`, `refused`, `ECONNRESET`, `arguments do not match the tool's parameters`),
 * never what follows — the endpoint's answer, an MCP server's error text, the arguments — which may
 * carry the caller's data (a card number, an e-mail). The model and the call record keep the rest.
 */
export function errorKind(error: string): string {
  const colon = error.indexOf(':');
  return (colon >= 0 ? error.slice(0, colon) : error).slice(0, 100);
}

function finish(tool: { name: string }, ctx: ToolCallContext, run: ToolRun): ToolRun {
  logger.info('tool run', {
    tool: tool.name,
    kind: 'function',
    callId: ctx.callId,
    agentId: ctx.agentId,
    test: ctx.test,
    status: run.status,
    httpStatus: run.httpStatus,
    durationMs: run.durationMs,
    ...(run.error ? { error: errorKind(run.error) } : {}),
  });
  return run;
}
