import type { ToolRunner } from '../engine/turn.js';
import type { CallToolBox } from './agent-toolbox.js';
import { runAgentTool } from './built-in.js';

/** A call's tool runner: the agent's own tools by the box, the built-in ones (and unknown names) as before. */
export const toolRunner =
  (box: CallToolBox | undefined): ToolRunner =>
  (call, setup, signal, current) =>
    box?.has(call.name) ? box.run(call, signal, current) : runAgentTool(call, setup);
