/**
 * The tools every agent has, by name: the conversation engine offers and runs them
 * (conversation/tools/built-in.ts), and an agent's own tools may not take their names
 * (tools-schema.ts). One list, here in the lower layer, imported by both.
 */
export const BUILT_IN_TOOLS = {
  endCall: 'end_call',
  searchKnowledge: 'search_knowledge',
  transferCall: 'transfer_call',
  /** Offered only when the agent has `handoffs` (agents that hand off). */
  handoffToAgent: 'handoff_to_agent',
} as const;

export type BuiltInToolName = (typeof BUILT_IN_TOOLS)[keyof typeof BUILT_IN_TOOLS];

/** Every built-in tool's name, sorted (what a 422 lists). */
export const BUILT_IN_TOOL_NAMES: readonly BuiltInToolName[] = Object.values(BUILT_IN_TOOLS).sort();

export const isBuiltInToolName = (name: string): name is BuiltInToolName =>
  (BUILT_IN_TOOL_NAMES as readonly string[]).includes(name);
