import { DEFAULT_AGENT_LANGUAGE, type Agent } from '../../agents/entities.js';
import { renderTemplate } from '../../agents/template.js';
import { languageModel } from '../../providers/llm/index.js';
import { runTurn } from '../engine/turn.js';
import { type ConversationOutput } from '../engine/ports.js';
import { emptyState, type ConversationSetup, type TranscriptEntry } from '../engine/model.js';
import { systemPrompt, transferNumber } from '../setup.js';
import { MemoryConversationStore } from '../engine/store.js';
import { storedSecrets, storedTools } from '../../agents/tool-definitions.js';
import { CallToolBox, MemoryCallToolsStore } from '../tools/agent-toolbox.js';
import { agentTools } from '../tools/built-in.js';
import { toolRunner } from '../tools/runner.js';
import { handoffTargets, prepareHandoff } from '../handoffs.js';

/**
 * The model failed during a scripted call (a bad key, the provider down, a turn past its deadline): the
 * agent's words were apologies, not answers. `detail` names the failure (no conversation text).
 */
export class ScriptedCallFailed extends Error {
  constructor(readonly detail: string) {
    super(`the language model failed during the scripted call: ${detail}`);
    this.name = 'ScriptedCallFailed';
  }
}

/**
 * A scripted caller talks to an agent through the same engine as a phone call (its prompt, its
 * tools, its knowledge bases, the configured model), without a phone: an evaluation's scenario. The
 * caller's lines are said one after another, each after the agent's reply; the conversation stops when
 * the agent ends it. Nothing is stored but what is returned. A turn whose model request failed (the
 * caller heard an apology) ends the script with `ScriptedCallFailed`: what followed it would be a
 * conversation with apologies.
 */
export async function playScript(input: {
  agent: Agent;
  callerScript: string[];
  now?: Date;
}): Promise<{ transcript: TranscriptEntry[]; durationSeconds: number }> {
  const { agent } = input;
  const now = input.now ?? new Date();
  const knowledgeBaseIds = agent.knowledgeBaseIds ?? [];
  const handoffs = await handoffTargets(agent);
  const setup: ConversationSetup = {
    workspaceId: agent.workspaceId,
    agentId: agent.agentId,
    callId: 'scripted',
    system: systemPrompt({
      prompt: agent.prompt,
      parameters: {},
      memories: [],
      timezone: agent.settings.timezone,
      now,
      callerGrowthLoop: agent.settings.callerGrowthLoop,
      channel: 'phone',
    }),
    greeting: renderTemplate(agent.greeting, {}).trim(),
    tools: agentTools({ knowledge: knowledgeBaseIds.length > 0, transfer: !!transferNumber(agent) }),
    knowledgeBaseIds,
    ...(transferNumber(agent) ? { transferPhoneNumber: transferNumber(agent) } : {}),
    agentName: agent.name,
    language: agent.language ?? DEFAULT_AGENT_LANGUAGE,
    ...(handoffs.length > 0
      ? {
          handoffs,
          callContext: {
            parameters: {},
            memories: [],
            channel: 'phone' as const,
            agentVersion: agent.version ?? null,
            direction: null,
            fromPhone: null,
            toPhone: null,
          },
        }
      : {}),
    startedAt: now.toISOString(),
    timeScale: 1,
  };
  const store = new MemoryConversationStore(setup, emptyState(setup.greeting));
  const box = scriptedToolBox(agent);
  let ended = false;
  const output: ConversationOutput = {
    text: () => Promise.resolve(),
    end: () => {
      ended = true;
      return Promise.resolve();
    },
  };
  const started = Date.now();
  for (const line of input.callerScript) {
    if (ended) break;
    // Handed over: the target answers with its built-in tools (its own function tools are not run in an evaluation).
    const own = (await store.load()).setup.agentId === agent.agentId ? box : undefined;
    await runTurn(
      {
        store,
        model: languageModel(),
        output,
        runTool: toolRunner(own, (call, active) => prepareHandoff(undefined, call, active)),
        channel: 'evaluation',
        ...(own ? { agentTools: own } : {}),
      },
      { kind: 'prompt', text: line },
    );
    const failure = (await store.load()).state.incidents.find(
      (incident) => incident.kind === 'model_error' || incident.kind === 'turn_deadline',
    );
    if (failure) throw new ScriptedCallFailed(`${failure.kind}: ${failure.detail}`);
  }
  const { state } = await store.load();
  return {
    transcript: state.transcript,
    durationSeconds: Math.max(1, Math.round((Date.now() - started) / 1000)),
  };
}

/** An evaluation runs the agent's own tools too, as a test (`test: true`, no call id). */
function scriptedToolBox(agent: Agent): CallToolBox | undefined {
  const tools = storedTools(agent);
  if (tools.length === 0) return undefined;
  const callTools = {
    tools,
    context: {
      callId: null,
      channel: 'evaluation' as const,
      workspaceId: agent.workspaceId,
      agentId: agent.agentId,
      agentVersion: agent.version ?? null,
      direction: null,
      fromPhone: null,
      toPhone: null,
      parameters: {},
      test: true,
    },
  };
  return new CallToolBox(callTools, new MemoryCallToolsStore(callTools, storedSecrets(agent)));
}
