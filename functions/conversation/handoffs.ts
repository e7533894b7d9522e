import { AgentEntity, DEFAULT_AGENT_LANGUAGE, type Agent } from '../agents/entities.js';
import { storedTools } from '../agents/tool-definitions.js';
import { logger } from '../platform/logger.js';
import { batchGetStoredItems, type TableKey } from '../platform/table.js';
import type { LlmToolCall } from '../providers/llm/port.js';
import { handoffNote } from './engine/handoff.js';
import type { ConversationSetup, HandoffTarget } from './engine/model.js';
import type { ToolOutcome } from './engine/ports.js';
import { transferNumber, systemPrompt } from './setup.js';
import { callToolsItem, CallToolsEntity, keepInHand } from './storage/call-tools.js';
import type { CallTools } from './tools/agent-toolbox.js';
import { agentTools } from './tools/built-in.js';

/**
 * Agents that hand off, where they touch the table: an agent's targets named for its setup, and a
 * `handoff_to_agent` call's target made ready — its agent read (one consistent read: the agent item
 * is its current version), its setup made with the call's parameters and the note, its own tools kept
 * beside the conversation under their own key. The switch itself is the turn's closing write
 * (engine/handoff.ts).
 */

/** The agent's `handoffs` setting as stored (agents/), never itself. */
const settingOf = (agent: Agent) => (agent.handoffs ?? []).filter((h) => h.agentId !== agent.agentId);

/** A day: the target's tools outlive the session's connection, as the conversation's item does. */
const TOOLS_TTL_SECONDS = 24 * 3600;

/** The agent's targets with their names (one BatchGetItem); a target deleted since is left out. */
export async function handoffTargets(agent: Agent): Promise<HandoffTarget[]> {
  const setting = settingOf(agent);
  if (setting.length === 0) return [];
  const keys = setting.map(
    (h) =>
      AgentEntity.get({ workspaceId: agent.workspaceId, agentId: h.agentId }).params<{ Key: TableKey }>().Key,
  );
  const found = await batchGetStoredItems(keys);
  return setting.flatMap((h, i) => {
    const item = found[i];
    if (!item) return [];
    const target = AgentEntity.parse({ Item: item }).data as Agent | null;
    return target
      ? [{ agentId: h.agentId, name: target.name, description: h.description, context: h.context }]
      : [];
  });
}

/** A target's own targets, named, kept in the container per version of it for a minute (a rename shows after that). */
const TARGETS_KEPT_MS = 60_000;
const TARGETS_KEPT_AT_MOST = 200;
const keptTargets = new Map<string, { targets: HandoffTarget[]; until: number }>();

/** The agent's targets (handoffTargets), read once a minute at most per version of the agent in this container. */
async function targetsOfVersion(agent: Agent, nowMs: number): Promise<HandoffTarget[]> {
  if (settingOf(agent).length === 0) return [];
  const key = `${agent.workspaceId}#${agent.agentId}#${agent.version ?? 0}`;
  const kept = keptTargets.get(key);
  if (kept && kept.until > nowMs) return kept.targets;
  const targets = await handoffTargets(agent);
  keptTargets.delete(key);
  if (keptTargets.size >= TARGETS_KEPT_AT_MOST) keptTargets.delete(keptTargets.keys().next().value!);
  keptTargets.set(key, { targets, until: nowMs + TARGETS_KEPT_MS });
  return targets;
}

const failed = (error: string): ToolOutcome => ({ ok: false, content: JSON.stringify({ error }), error });

/**
 * The target of a `handoff_to_agent` call made ready (nothing is switched yet: the turn's closing write
 * does that, only if the turn is still current). A target gone since: `{error}` to the model, and the
 * current agent goes on.
 */
export async function prepareHandoff(
  /** Where the target's own tools are kept beside the conversation; undefined (an evaluation): not offered. */
  connectionId: string | undefined,
  call: LlmToolCall,
  setup: ConversationSetup,
  now: Date = new Date(),
): Promise<ToolOutcome> {
  const target = setup.handoffs?.find((t) => t.agentId === call.arguments.agent_id);
  if (!target || !setup.callContext) return failed('that agent cannot take the call');
  const { data } = await AgentEntity.get({ workspaceId: setup.workspaceId, agentId: target.agentId }).go({
    consistent: true,
  });
  const agent = (data ?? undefined) as Agent | undefined;
  if (!agent) {
    logger.info('handoff target gone; the current agent goes on', { agentId: target.agentId });
    return failed('that agent is no longer available');
  }
  const reason = typeof call.arguments.reason === 'string' ? call.arguments.reason.trim().slice(0, 500) : '';
  const summary =
    typeof call.arguments.summary === 'string' ? call.arguments.summary.trim().slice(0, 2_000) : '';
  const context = setup.callContext;
  const tools = connectionId === undefined ? [] : storedTools(agent);
  const toolsKey = `${connectionId}#${agent.agentId}`;
  if (tools.length > 0) {
    const callTools: CallTools = {
      tools,
      context: {
        callId: setup.callId,
        channel: context.channel,
        workspaceId: setup.workspaceId,
        agentId: agent.agentId,
        agentVersion: agent.version ?? null,
        direction: context.direction,
        fromPhone: context.fromPhone,
        toPhone: context.toPhone,
        parameters: context.parameters,
        test: context.channel === 'web',
      },
    };
    await CallToolsEntity.put(
      callToolsItem(toolsKey, callTools, Math.floor(now.getTime() / 1000) + TOOLS_TTL_SECONDS),
    ).go({ response: 'none' });
    keepInHand(toolsKey, callTools);
  }
  const knowledgeBaseIds = agent.knowledgeBaseIds ?? [];
  const system = [
    systemPrompt({
      prompt: agent.prompt,
      parameters: context.parameters,
      memories: context.memories,
      timezone: agent.settings.timezone,
      now,
      callerGrowthLoop: agent.settings.callerGrowthLoop,
      channel: context.channel,
    }),
    handoffNote({
      targetName: agent.name,
      fromName: setup.agentName ?? 'Another agent',
      reason,
      summary,
      context: target.context,
    }),
  ].join('\n\n');
  const targetSetup: ConversationSetup = {
    workspaceId: setup.workspaceId,
    agentId: agent.agentId,
    callId: setup.callId,
    system,
    greeting: '',
    tools: agentTools({ knowledge: knowledgeBaseIds.length > 0, transfer: !!transferNumber(agent) }),
    knowledgeBaseIds,
    ...(transferNumber(agent) ? { transferPhoneNumber: transferNumber(agent) } : {}),
    ...(agent.transfer?.mode === 'warm' ? { transferMode: 'warm' as const } : {}),
    ...(agent.transfer?.mode === 'warm' && agent.transfer.whisper
      ? { transferWhisper: agent.transfer.whisper }
      : {}),
    ...(tools.length > 0 ? { agentTools: true, toolsKey } : {}),
    agentName: agent.name,
    language: agent.language ?? DEFAULT_AGENT_LANGUAGE,
    handoffs: await targetsOfVersion(agent, Date.now()),
    callContext: { ...context, agentVersion: agent.version ?? null },
    callListing: setup.callListing ?? null,
    startedAt: setup.startedAt,
    timeScale: setup.timeScale,
  };
  return {
    ok: true,
    content: JSON.stringify({ handed_over_to: agent.agentId }),
    handoff: {
      setup: targetSetup,
      context: target.context,
      record: {
        fromAgentId: setup.agentId,
        toAgentId: agent.agentId,
        toAgentVersion: agent.version ?? null,
        at: now.toISOString(),
        reason,
        summary,
      },
    },
  };
}
