import type { LlmMessage, LlmTool } from '../../providers/llm/port.js';
import {
  MAX_HANDOFFS_A_CALL,
  TOOL_NAMES,
  type ConversationSetup,
  type ConversationState,
  type HandoffSwitch,
} from './model.js';

/**
 * Agents that hand off: one call, several agents. The active agent is offered `handoff_to_agent` when it
 * has targets; the switch is the turn's closing write (turn.ts `finish`: only when that write finds the
 * turn current, so an overtaken turn hands over nothing), and the target then speaks first, on the
 * context its setting asks for. The call stays the first agent's (its item's setup); the agent speaking
 * now is the state's `activeSetup`.
 */

/** The tool, as offered now: none without targets, after MAX_HANDOFFS_A_CALL, or with only the agent just handed from. */
export function handoffTool(setup: ConversationSetup, state: ConversationState): LlmTool | undefined {
  if ((state.handoffs?.length ?? 0) >= MAX_HANDOFFS_A_CALL) return undefined;
  const targets = (setup.handoffs ?? []).filter((target) => target.agentId !== state.handedFromAgentId);
  if (targets.length === 0) return undefined;
  return {
    name: TOOL_NAMES.handoffToAgent,
    description: [
      'Hand the caller over to another agent of this business, in this same call, when the caller needs what that agent does. Say one short line first (who you are putting them through to). The agents:',
      ...targets.map((t) => `- ${t.agentId} (${t.name}): ${t.description.replace(/\s+/g, ' ').trim()}`),
    ].join('\n'),
    parameters: {
      type: 'object',
      properties: {
        agent_id: {
          type: 'string',
          enum: targets.map((t) => t.agentId),
          description: 'The agent to hand over to.',
        },
        reason: { type: 'string', description: 'Why, in a few words.' },
        summary: { type: 'string', description: 'What the caller wants and what they told you so far.' },
      },
      required: ['agent_id', 'reason', 'summary'],
    },
  };
}

/** The section the target's system prompt ends with: who it is, who handed over and why, the caller's line. */
export function handoffNote(input: {
  targetName: string;
  fromName: string;
  reason: string;
  summary: string;
  context: HandoffSwitch['context'];
}): string {
  const lines = [
    '## You are taking over this call',
    `You are ${input.targetName}.`,
    `${input.fromName} handed the caller to you. Reason: ${input.reason || 'not given'}.`,
    ...(input.context === 'none' ? [] : [`Summary: ${input.summary || 'none'}.`]),
    'Speak first: introduce yourself in a few words and carry on from there; do not greet as if the call were new.',
  ];
  return lines.join('\n');
}

/** The caller's latest line in the history (the target always has it). */
export const lastCallerLine = (history: readonly LlmMessage[]): string | undefined =>
  history.findLast((message) => message.role === 'user')?.content;

/**
 * The history the target starts on: `full` the caller's and agents' words so far (no earlier agent's
 * tool calls or results), `summary` and `none` only the caller's last line (the note is in its prompt).
 * It ends on the caller's line: the handing agent's words after it are its own.
 */
export function targetHistory(
  history: readonly LlmMessage[],
  context: HandoffSwitch['context'],
): LlmMessage[] {
  const last = history.findLastIndex((message) => message.role === 'user');
  if (context !== 'full') return last >= 0 ? [{ role: 'user', content: history[last].content }] : [];
  return history
    .slice(0, last >= 0 ? last + 1 : history.length)
    .flatMap((message): LlmMessage[] =>
      message.role === 'tool' || message.content.trim() === ''
        ? []
        : [
            message.role === 'user'
              ? { role: 'user', content: message.content }
              : { role: 'assistant', content: message.content },
          ],
    );
}

/** The switch applied to the state (the closing write's, when the turn is current): a new generation, the target speaking. */
export function applyHandoff(state: ConversationState, handoff: HandoffSwitch): ConversationState {
  const line = lastCallerLine(state.history);
  const setup = line
    ? {
        ...handoff.setup,
        system: `${handoff.setup.system}\nThe caller's last line: "${line.replace(/"/g, "'")}"`,
      }
    : handoff.setup;
  return {
    ...state,
    generation: state.generation + 1,
    activeSetup: setup,
    handoffs: [...(state.handoffs ?? []), handoff.record],
    handedFromAgentId: handoff.record.fromAgentId,
    history: targetHistory(state.history, handoff.context),
  };
}
