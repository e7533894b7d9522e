import { clock } from '../platform/clock.js';
import { HIDDEN } from '../platform/bounded-input.js';
import { ValidationError, type ValidationIssue } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import type { Agent } from './entities.js';
import { openToolSecret, sealToolSecret, toolSecretDigest } from './tool-secrets.js';
import { isMask, MASK_PREFIX, type ToolInput, type ToolResponse } from './tools-schema.js';

/**
 * An agent's tools as stored (the agent item's `tools`, camelCase) and as shown. Header values are
 * never stored in a tool: a tool's `headers` map each name to the id of a sealed value in the agent
 * item's `toolSecrets` (`tsec_…` → sealed value, last 4 characters). A value sent back equal to its
 * mask keeps its id; anything else is a new value with a new id. A record that needs a value later
 * (a version of the agent) keeps the id and opens it with `openHeaders`.
 */

export interface StoredFunctionTool {
  type: 'function';
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  url: string;
  /** Header name → `tsec_…` id in the agent's `toolSecrets`. */
  headers?: Record<string, string>;
  staticArguments?: Record<string, unknown>;
  timeoutMs: number;
  speakDuring?: string;
  speakOnFailure?: string;
}

export interface StoredMcpTool {
  type: 'mcp';
  name: string;
  url: string;
  headers?: Record<string, string>;
  allowedTools?: string[];
  timeoutMs: number;
}

export type StoredTool = StoredFunctionTool | StoredMcpTool;

export interface StoredToolSecret {
  /** AES-256-GCM, bound to the workspace, agent and id (tool-secrets.ts). */
  sealed: string;
  /** What the mask shows. */
  last4: string;
  createdAt: string;
  /** The value's HMAC (toolSecretDigest): the same value sent again keeps this id. */
  digest?: string;
  /** Last referred to by the agent's tools at this save (ISO): what is kept longest once retired. */
  usedAt?: string;
}

/**
 * Bytes of sealed values the agent keeps beyond those its tools refer to (for its earlier versions,
 * newest first): the agent item stays far below DynamoDB's 400 KB however often values change.
 */
export const RETIRED_SECRETS_BYTES = 96 * 1024;
export type ToolSecrets = Record<string, StoredToolSecret>;

type AgentTools = Pick<Agent, 'workspaceId' | 'agentId'> & { tools?: unknown; toolSecrets?: unknown };

export const storedTools = (agent: Pick<AgentTools, 'tools'>): StoredTool[] =>
  Array.isArray(agent.tools) ? (agent.tools as StoredTool[]) : [];
export const storedSecrets = (agent: Pick<AgentTools, 'toolSecrets'>): ToolSecrets =>
  agent.toolSecrets && typeof agent.toolSecrets === 'object' ? (agent.toolSecrets as ToolSecrets) : {};

/**
 * The tools to store for `input` (a create's or PATCH's whole list), given the agent's current ones:
 * new header values sealed under new ids, masks resolved to the stored ids (a mask that matches no
 * stored value of that tool's header is a 422). `toolSecrets` holds the values the tools refer to.
 */
export async function toolsFrom(
  input: readonly ToolInput[],
  agent: AgentTools,
  location: (string | number)[] = ['body', 'tools'],
): Promise<{ tools: StoredTool[]; toolSecrets: ToolSecrets }> {
  const current = storedTools(agent);
  const currentSecrets = storedSecrets(agent);
  const toolSecrets: ToolSecrets = {};
  const detail: ValidationIssue[] = [];
  const tools: StoredTool[] = [];
  for (const [index, tool] of input.entries()) {
    const before = current.find((t) => t.name === tool.name && t.type === tool.type);
    let headers: Record<string, string> | undefined;
    if (tool.headers && Object.keys(tool.headers).length > 0) {
      headers = {};
      for (const [name, value] of Object.entries(tool.headers)) {
        if (isMask(value)) {
          const keptId = Object.entries(before?.headers ?? {}).find(
            ([storedName, id]) =>
              storedName.toLowerCase() === name.toLowerCase() &&
              currentSecrets[id] &&
              `${MASK_PREFIX}${currentSecrets[id].last4}` === value,
          )?.[1];
          if (!keptId) {
            detail.push({
              type: 'value_error',
              loc: [...location, index, 'headers', name],
              msg: "Value error, a masked value must be the mask of this header's stored value (send the real value to change it)",
              input: HIDDEN,
            });
            continue;
          }
          headers[name] = keptId;
          toolSecrets[keptId] = currentSecrets[keptId];
          continue;
        }
        // A value already sealed for this agent (sent again, or twice in this list) keeps its id.
        const digest = await toolSecretDigest(value, agent);
        const known = [...Object.entries(toolSecrets), ...Object.entries(currentSecrets)].find(
          ([, secret]) => secret.digest === digest,
        );
        if (known) {
          headers[name] = known[0];
          toolSecrets[known[0]] = known[1];
          continue;
        }
        const secretId = newId('toolSecret');
        toolSecrets[secretId] = {
          sealed: await sealToolSecret(value, {
            workspaceId: agent.workspaceId,
            agentId: agent.agentId,
            secretId,
          }),
          last4: value.slice(-4),
          createdAt: clock.now().toISOString(),
          digest,
        };
        headers[name] = secretId;
      }
    }
    tools.push(
      tool.type === 'function'
        ? {
            type: 'function',
            name: tool.name,
            description: tool.description,
            parameters: tool.parameters,
            url: tool.url,
            ...(headers ? { headers } : {}),
            ...(tool.static_arguments ? { staticArguments: tool.static_arguments } : {}),
            timeoutMs: tool.timeout_ms,
            ...(tool.speak_during ? { speakDuring: tool.speak_during } : {}),
            ...(tool.speak_on_failure ? { speakOnFailure: tool.speak_on_failure } : {}),
          }
        : {
            type: 'mcp',
            name: tool.name,
            url: tool.url,
            ...(headers ? { headers } : {}),
            ...(tool.allowed_tools ? { allowedTools: tool.allowed_tools } : {}),
            timeoutMs: tool.timeout_ms,
          },
    );
  }
  if (detail.length > 0) throw new ValidationError(detail);
  return { tools, toolSecrets };
}

/**
 * The sealed values to store with `tools` (a save): every one the tools refer to (marked used now),
 * and of the others — kept for the agent's earlier versions — the most recently used while they fit
 * in RETIRED_SECRETS_BYTES. The rest are removed: a value sent again on every save is stored once,
 * and changed values do not pile up. A version whose value was removed cannot be restored (409), and a
 * call pinned to it runs that tool without the header's value kept (the tool fails: an incident).
 */
export function retainedSecrets(tools: readonly StoredTool[], secrets: ToolSecrets): ToolSecrets {
  const now = clock.now().toISOString();
  const used = new Set(tools.flatMap((tool) => Object.values(tool.headers ?? {})));
  const kept: ToolSecrets = {};
  for (const id of used) if (secrets[id]) kept[id] = { ...secrets[id], usedAt: now };
  const retired = Object.entries(secrets)
    .filter(([id]) => !used.has(id))
    .sort(([, a], [, b]) => ((b.usedAt ?? b.createdAt) < (a.usedAt ?? a.createdAt) ? -1 : 1));
  let bytes = 0;
  for (const [id, secret] of retired) {
    bytes += Buffer.byteLength(JSON.stringify(secret), 'utf8') + id.length;
    if (bytes > RETIRED_SECRETS_BYTES) break;
    kept[id] = secret;
  }
  return kept;
}

/** The ids of sealed values `tools` refer to that `secrets` no longer keeps. */
export const missingSecrets = (tools: readonly StoredTool[], secrets: ToolSecrets): string[] =>
  tools.flatMap((tool) => Object.values(tool.headers ?? {})).filter((id) => !secrets[id]);

function maskedHeaders(headers: Record<string, string> | undefined, secrets: ToolSecrets) {
  if (!headers) return {};
  return {
    headers: Object.fromEntries(
      Object.entries(headers).map(([name, id]) => [name, `${MASK_PREFIX}${secrets[id]?.last4 ?? ''}`]),
    ),
  };
}

/** Checks the tools' schemas (ajv, loaded here) and gives the tools to store (see toolsFrom). */
export async function prepareTools(
  input: readonly ToolInput[],
  agent: AgentTools,
): Promise<{ tools: StoredTool[]; toolSecrets: ToolSecrets }> {
  const { assertToolSchemas } = await import('./tools-validation.js');
  await assertToolSchemas(input);
  return toolsFrom(input, agent);
}

/** The tools as the API shows them: header values masked. */
export function toolsToWire(agent: AgentTools): ToolResponse[] {
  const secrets = storedSecrets(agent);
  return storedTools(agent).map((tool) =>
    tool.type === 'function'
      ? {
          type: 'function',
          name: tool.name,
          description: tool.description,
          parameters: tool.parameters,
          url: tool.url,
          ...maskedHeaders(tool.headers, secrets),
          ...(tool.staticArguments ? { static_arguments: tool.staticArguments } : {}),
          timeout_ms: tool.timeoutMs,
          ...(tool.speakDuring ? { speak_during: tool.speakDuring } : {}),
          ...(tool.speakOnFailure ? { speak_on_failure: tool.speakOnFailure } : {}),
        }
      : {
          type: 'mcp',
          name: tool.name,
          url: tool.url,
          ...maskedHeaders(tool.headers, secrets),
          ...(tool.allowedTools ? { allowed_tools: tool.allowedTools } : {}),
          timeout_ms: tool.timeoutMs,
        },
  );
}

/** A tool's header values in plain text (for the request that calls it). */
export async function openHeaders(
  tool: Pick<StoredTool, 'headers'>,
  owner: { workspaceId: string; agentId: string; toolSecrets: ToolSecrets },
): Promise<Record<string, string>> {
  const entries = await Promise.all(
    Object.entries(tool.headers ?? {}).map(async ([name, secretId]) => {
      const secret = owner.toolSecrets[secretId];
      if (!secret) throw new Error(`tool header ${name} refers to a missing secret ${secretId}`);
      const binding = { workspaceId: owner.workspaceId, agentId: owner.agentId, secretId };
      return [name, await openToolSecret(secret.sealed, binding)] as const;
    }),
  );
  return Object.fromEntries(entries);
}

/** A tool ready to run: its definition and its header values opened. */
export type ResolvedTool = (StoredFunctionTool | StoredMcpTool) & { openedHeaders: Record<string, string> };

export async function resolveTool(agent: AgentTools, tool: StoredTool): Promise<ResolvedTool> {
  const openedHeaders = await openHeaders(tool, {
    workspaceId: agent.workspaceId,
    agentId: agent.agentId,
    toolSecrets: storedSecrets(agent),
  });
  return { ...tool, openedHeaders };
}
