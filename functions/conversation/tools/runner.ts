import type { LlmToolCall } from '../../providers/llm/port.js';
import { TOOL_NAMES, type ConversationSetup } from '../engine/model.js';
import type { ToolOutcome, ToolRunner } from '../engine/ports.js';
import type { CallToolBox } from './agent-toolbox.js';
import { runAgentTool } from './built-in.js';

/** Makes a `handoff_to_agent` call's target ready (../handoffs.ts `prepareHandoff`, bound to the session). */
export type HandoffPreparer = (call: LlmToolCall, setup: ConversationSetup) => Promise<ToolOutcome>;

/**
 * A call's tool runner: the agent's own tools by the box, a handoff by its preparer, the built-in ones
 * (and unknown names) as before.
 */
export const toolRunner =
  (box: CallToolBox | undefined, handoff?: HandoffPreparer): ToolRunner =>
  (call, setup, signal, current) =>
    box?.has(call.name)
      ? box.run(call, signal, current)
      : handoff && call.name === TOOL_NAMES.handoffToAgent
        ? handoff(call, setup)
        : runAgentTool(call, setup);
