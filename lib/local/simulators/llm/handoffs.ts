import { textOf, type ChatCompletionRequest } from './protocol.js';

/**
 * The model simulator's rules for agents that hand off (docs/language-model.md lists them):
 *
 * - **Hand over**: when the request offers `handoff_to_agent` (its description lists the targets one a
 *   line, `- <agent_id> (<agent name>): <when to hand over>`) and the caller's latest line names a
 *   target's name (a whole word or words, any case), or asks to be put through (`speak`, `talk`,
 *   `put me through`, `connect me`, `transfer me`, `pass me`) with a word of 4+ letters that the
 *   target's description has too (common words aside; `sale` and `sales` are one word): "Let me put
 *   you through to <name>." and `handoff_to_agent {agent_id, reason, summary: <the caller's line>}`.
 *   The first target that matches, in the description's order.
 * - **Take over**: when the system prompt has the section `## You are taking over this call` (a line
 *   `You are <name>.`, maybe a line `The caller's last line: "<line>"`) and the caller has said nothing
 *   since that line: `Hi, this is <name>. You said: "<line>" — I can help with that.`, or only
 *   `Hi, this is <name>.` without a caller's line.
 */

export const HANDOFF_TOOL = 'handoff_to_agent';
export const HANDOFF_FAILED_REPLY = "I'm sorry, I can't put you through just now. I can keep helping you.";

export interface HandoffTarget {
  agentId: string;
  name: string;
  description: string;
}

export const handOverReply = (name: string): string => `Let me put you through to ${name}.`;

export function takeOverReply(name: string, callerLine: string | undefined): string {
  const intro = `Hi, this is ${name}.`;
  return callerLine ? `${intro} You said: "${callerLine}" — I can help with that.` : intro;
}

const TARGET_LINE = /^- (\S+) \((.+?)\): (.*)$/;

/** The targets the offered `handoff_to_agent` lists, in its order; [] when it is not offered. */
export function handoffTargets(request: ChatCompletionRequest): HandoffTarget[] {
  const tool = (request.tools ?? []).find((t) => t.function.name === HANDOFF_TOOL);
  if (!tool) return [];
  const allowed = allowedIds(tool.function.parameters);
  return (tool.function.description ?? '').split('\n').flatMap((raw) => {
    const match = TARGET_LINE.exec(raw.trim());
    if (!match) return [];
    const [, agentId, name, description] = match;
    if (allowed && !allowed.includes(agentId)) return [];
    return [{ agentId, name: name.trim(), description: description.trim() }];
  });
}

/** The `agent_id` parameter's enum, when the schema has one. */
function allowedIds(parameters: Record<string, unknown> | undefined): string[] | undefined {
  const values = (parameters as { properties?: { agent_id?: { enum?: unknown } } } | undefined)?.properties
    ?.agent_id?.enum;
  return Array.isArray(values) ? values.filter((v): v is string => typeof v === 'string') : undefined;
}

const ASKS_TO_BE_PUT_THROUGH =
  /\b(speak|speaking|talk|talking|put me through|connect me|transfer me|pass me|through to)\b/i;

/** Words too common to say which target the caller means. */
const COMMON = new Set([
  'about',
  'after',
  'also',
  'asks',
  'call',
  'caller',
  'calls',
  'could',
  'from',
  'have',
  'into',
  'just',
  'like',
  'need',
  'please',
  'some',
  'someone',
  'somebody',
  'speak',
  'talk',
  'that',
  'their',
  'them',
  'then',
  'there',
  'they',
  'this',
  'through',
  'wants',
  'want',
  'what',
  'when',
  'which',
  'with',
  'would',
  'your',
]);

/** A word as compared: lower case, without an apostrophe's ending or a plural `s`. */
const stem = (word: string): string =>
  word
    .toLowerCase()
    .replace(/'s$|'$/, '')
    .replace(/s$/, '');

const words = (text: string): Set<string> =>
  new Set(
    (text.match(/[A-Za-z][A-Za-z']*/g) ?? [])
      .filter((w) => w.replace(/'.*$/, '').length >= 4 && !COMMON.has(w.toLowerCase()))
      .map(stem),
  );

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The target the caller's line asks for (the first that matches), or undefined. */
export function requestedTarget(targets: readonly HandoffTarget[], line: string): HandoffTarget | undefined {
  if (targets.length === 0 || line.trim() === '') return undefined;
  const named = targets.find((t) => new RegExp(`(^|\\W)${escapeRegExp(t.name)}($|\\W)`, 'i').test(line));
  if (named) return named;
  if (!ASKS_TO_BE_PUT_THROUGH.test(line)) return undefined;
  const said = words(line);
  return targets.find((t) => [...words(t.description)].some((w) => said.has(w)));
}

/** The hand-over reply, when the request offers the tool and the caller's line asks for a target. */
export function handOver(
  request: ChatCompletionRequest,
  line: string,
): { text: string; toolCalls: { name: string; arguments: Record<string, unknown> }[] } | undefined {
  const target = requestedTarget(handoffTargets(request), line);
  if (!target) return undefined;
  return {
    text: handOverReply(target.name),
    toolCalls: [
      {
        name: HANDOFF_TOOL,
        arguments: {
          agent_id: target.agentId,
          reason: `caller asked for ${target.name}`,
          summary: line.slice(0, 500),
        },
      },
    ],
  };
}

const TAKING_OVER = /(?:^|\n)## You are taking over this call\n([\s\S]*?)(?=\n## |$)/;

/**
 * The target's first reply, when the system prompt says it takes over and the caller has said nothing
 * since the line the note quotes (the latest message is the caller's, or there is none).
 */
export function takeOver(request: ChatCompletionRequest): string | undefined {
  const system = request.messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => textOf(m.content))
    .join('\n');
  const section = TAKING_OVER.exec(system)?.[1];
  if (section === undefined) return undefined;
  const name = /^You are (.+?)\.\s*$/m.exec(section)?.[1]?.trim();
  if (!name) return undefined;
  const quoted = /^The caller's last line: "(.*)"\s*$/m.exec(section)?.[1];
  const last = request.messages.at(-1);
  const lastUser = [...request.messages].reverse().find((m) => m.role === 'user');
  if (lastUser) {
    // The caller has spoken since (or the target has answered already): the other rules apply.
    if (last?.role !== 'user') return undefined;
    const said = textOf(lastUser.content).trim();
    if (quoted === undefined || said.replace(/"/g, "'") !== quoted.trim()) return undefined;
  } else if (last?.role === 'assistant' || last?.role === 'tool') return undefined;
  return takeOverReply(name, quoted?.trim() || undefined);
}
