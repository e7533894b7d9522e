import { textOf, type ChatCompletionRequest, type ChatMessage } from './protocol.js';
import {
  asksAboutListing,
  bestSentence,
  NO_ANSWER_REPLY,
  promptSentences,
  NOTHING_FOUND_REPLY,
  replyFromKnowledge,
  type KnowledgeHit,
} from './wording.js';
import { HANDOFF_FAILED_REPLY, HANDOFF_TOOL, handOver, takeOver } from './handoffs.js';

/**
 * What the model simulator answers a chat-completions request with (server.ts lists the rules; they
 * are applied here in that order). Deterministic: the same request, the same reply.
 */
export interface SimulatedReply {
  text: string;
  toolCalls: { name: string; arguments: Record<string, unknown> }[];
  /** A test trigger: answer 500, cut the stream, wait before the first chunk, or pace every chunk. */
  fault?: 'error' | 'broken';
  slow?: boolean;
  paced?: boolean;
}

export const GOODBYE_REPLY = 'Thank you for calling. Goodbye!';
export const TRANSFER_REPLY = 'Let me transfer you now.';
export const GREETING_REPLY = 'Hello! How can I help you today?';
export const TOOL_FAILED_REPLY = "I'm sorry, I couldn't look that up just now.";
export const TRANSFERRED_REPLY = 'Please hold while I connect you.';
export const ENDED_REPLY = 'Goodbye!';
export const TOOL_DONE_REPLY = "All right, that's done.";

/** The reply to "tell me everything": 62 words, paced, so a test can interrupt it mid-way. */
export const LONG_REPLY =
  'Of course, here is everything, from the start. We look after buyers and sellers across the whole area, ' +
  'every day of the week. Our team can arrange inspections, send you the full contract, and explain each ' +
  'step of the process. Most of our listings come with floor plans and photos, and we are happy to call ' +
  'you back whenever suits you best.';

const GOODBYE = /\b(bye|goodbye|good-bye|that's all|that is all|hang up|end the call)\b/i;
const PERSON =
  /\b(speak|talk)\s+(to|with)\s+(a\s+|an\s+|the\s+|some\s+|your\s+)?(real\s+)?(person|human|someone|somebody|manager|representative|agent)\b|\btransfer me\b|\breal person\b/i;
const PRICE = /\b(price|how much|cost|costs)\b/i;
const MONEY = /\$\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|million|thousand)\b)?/i;
/** An address after "at" in the prompt: a number, then capitalised words, optionally ", Suburb". */
const ADDRESS =
  /\bat\s+(\d+[A-Za-z]?\s+[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*(?:,\s*[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*(?:\s+\d{4})?)?)/;
const DTMF = /^The caller pressed the key "([^"]+)"\.?$/;
const GREETING = /^\s*(hi|hello|hey|hiya|good (morning|afternoon|evening))(\s+there)?\s*[.!,?]*\s*$/i;
/** "What is this about?": the caller asks why they are called. */
const WHY_CALLED =
  /\bwhat(?:'s| is| was)? (?:this|it|the call) (?:about|regarding)\b|\bwhy (?:are|did) you call(?:ing|ed)?\b|\bwhat are you calling (?:about|for)\b|\bwho(?:'s| is) (?:this|calling)\b/i;
/** "Which property is it?", "Where is it?": the caller asks which listing the call is about. */
const WHICH_PROPERTY =
  /\b(?:which|what) (?:property|house|home|listing|place|one|address)\b|\bwhere is (?:it|the (?:property|house|home|place))\b|\bthe address\b/i;

const offered = (request: ChatCompletionRequest, name: string): boolean =>
  (request.tools ?? []).some((tool) => tool.function.name === name);

const say = (text: string): SimulatedReply => ({ text, toolCalls: [] });

/** What the agent says first when the service gave it the caller's earlier calls (conversation memories). */
export const RECALL_PREFIX = 'Good to speak with you again. Last time:';
const MEMORIES = /\n## Earlier calls with this caller[^\n]*\n- ([^\n]+)/;

/**
 * The reply to the request (rules a–h below). On the caller's first line, when the system prompt lists
 * their earlier calls (the service's `## Earlier calls with this caller` section), the agent first recalls
 * the latest: "Good to speak with you again. Last time: <its summary>".
 */
export function simulateReply(request: ChatCompletionRequest): SimulatedReply {
  // j. An agent taking the call over introduces itself, with the caller's last line in hand (handoffs.ts).
  if (request.messages.at(-1)?.role !== 'tool') {
    const takingOver = takeOver(request);
    if (takingOver) return say(takingOver);
  }
  const reply = simulateBaseReply(request);
  const users = request.messages.filter((m) => m.role === 'user').length;
  if (users !== 1 || reply.fault || request.messages.at(-1)?.role === 'tool') return reply;
  const system = request.messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => textOf(m.content))
    .join('\n');
  const memory = MEMORIES.exec(system)?.[1]?.trim();
  if (!memory) return reply;
  const recall = `${RECALL_PREFIX} ${memory.replace(/[.!?]*$/, '')}.`;
  return { ...reply, text: reply.text ? `${recall} ${reply.text}` : recall };
}

function simulateBaseReply(request: ChatCompletionRequest): SimulatedReply {
  const messages = request.messages;
  // The agent's own prompt: the service adds its instructions after it, each section under `## `.
  const system = messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => textOf(m.content).split(/\n\n## /)[0])
    .join('\n');
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const line = lastUser ? textOf(lastUser.content).trim() : '';

  // a. Tool results are last: speak from them.
  if (messages.at(-1)?.role === 'tool') return replyFromTools(messages, line);
  if (!lastUser) return say(GREETING_REPLY);

  // Test triggers.
  if (/simulate a model error/i.test(line)) return { ...say(''), fault: 'error' };
  if (/simulate a broken stream/i.test(line)) return { ...say(LONG_REPLY), fault: 'broken' };
  if (/simulate a slow model/i.test(line))
    return { ...say('Sorry for the wait. How can I help?'), slow: true };
  if (/tell me everything/i.test(line)) return { ...say(LONG_REPLY), paced: true };

  // b. Goodbye.
  if (GOODBYE.test(line) && offered(request, 'end_call'))
    return {
      text: GOODBYE_REPLY,
      toolCalls: [{ name: 'end_call', arguments: { reason: 'caller said goodbye' } }],
    };
  // k. Another agent of the business, asked for by name or in words of its description (handoffs.ts).
  const handover = handOver(request, line);
  if (handover) return handover;
  // c. A person.
  if (PERSON.test(line) && offered(request, 'transfer_call'))
    return {
      text: TRANSFER_REPLY,
      toolCalls: [{ name: 'transfer_call', arguments: { reason: 'caller asked to speak to a person' } }],
    };
  // i. One of the agent's own tools, named by the caller's words (every word of its name in the line).
  const own = namedAgentTool(request, line);
  if (own) return { text: '', toolCalls: [own] };
  // e. The listing the prompt names (the agent knows the one it calls about: before d), said as a fact:
  // its price when asked, what the call is about, which property it is.
  const facts = promptSentences(system, { all: true }).join(' ');
  const money = MONEY.exec(facts)?.[0].replace(/\s/g, '');
  const address = ADDRESS.exec(facts)?.[1];
  if (PRICE.test(line) && money)
    return say(`${address ? `The property at ${address}` : 'It'} is listed at ${money}.`);
  if (address && WHY_CALLED.test(line))
    return say(`I'm calling about the property at ${address}${money ? `, listed at ${money}` : ''}.`);
  if (address && WHICH_PROPERTY.test(line))
    return say(`It's the property at ${address}${money ? `, listed at ${money}` : ''}.`);
  // d. A property: search the knowledge bases with the caller's words; without them, answer only from
  // a fact of the prompt about what was asked (the suburb, the street), else say so.
  if (asksAboutListing(line)) {
    if (offered(request, 'search_knowledge'))
      return { text: '', toolCalls: [{ name: 'search_knowledge', arguments: { query: line } }] };
    const fact = bestSentence(system, line, true);
    if (!fact) return say(NO_ANSWER_REPLY);
    if (address && money && fact.includes(address))
      return say(`The property at ${address} is listed at ${money}.`);
    return say(fact);
  }
  // f. A key press.
  const key = DTMF.exec(line);
  if (key) return say(`You pressed ${key[1]}.`);
  // g. Only a greeting.
  if (GREETING.test(line)) return say(GREETING_REPLY);
  // h. The prompt's sentence closest to the line.
  return say(bestSentence(system, line) ?? NO_ANSWER_REPLY);
}

/** The tool results after the last assistant message, each spoken in turn. */
function replyFromTools(messages: ChatMessage[], line: string): SimulatedReply {
  let start = messages.length;
  while (start > 0 && messages[start - 1].role === 'tool') start -= 1;
  const assistant = messages[start - 1];
  const calls = assistant?.role === 'assistant' ? (assistant.tool_calls ?? []) : [];
  const lines = messages.slice(start).map((message) => {
    if (message.role !== 'tool') return '';
    const name = calls.find((call) => call.id === message.tool_call_id)?.function.name ?? message.name ?? '';
    return speakToolResult(name, textOf(message.content), line);
  });
  return say([...new Set(lines.filter(Boolean))].join(' '));
}

function speakToolResult(name: string, content: string, line: string): string {
  let result: unknown;
  try {
    result = JSON.parse(content);
  } catch {
    result = undefined;
  }
  const failed =
    result !== undefined
      ? typeof result === 'object' && result !== null && 'error' in result
      : content.includes('"error"');
  if (failed) return name === HANDOFF_TOOL ? HANDOFF_FAILED_REPLY : TOOL_FAILED_REPLY;
  if (name === 'search_knowledge') {
    const hits = (result as { results?: KnowledgeHit[] } | undefined)?.results;
    const top = Array.isArray(hits) ? hits[0] : undefined;
    return top ? replyFromKnowledge(line, top).reply : NOTHING_FOUND_REPLY;
  }
  if (name === 'transfer_call') return TRANSFERRED_REPLY;
  if (name === 'end_call') return ENDED_REPLY;
  // A text answer (an MCP tool's, a text/* endpoint's) is said as it is, cut to a spoken length.
  if (result === undefined && content.trim() !== '') return content.trim().slice(0, 300);
  return agentToolReply(result) ?? TOOL_DONE_REPLY;
}

/** Roughly a token a word. */
export const countWords = (text: string): number => text.split(/\s+/).filter(Boolean).length;

const BUILT_IN = new Set(['end_call', 'transfer_call', 'search_knowledge', HANDOFF_TOOL]);

/**
 * Rule i: an offered tool that is not a built-in one, every word of whose name (split at `_`, words
 * of 3 letters or more) the caller's line contains ("book_inspection": "Can you book an inspection?").
 * Its arguments: each required property of its schema, a string property given the caller's line.
 */
function namedAgentTool(
  request: ChatCompletionRequest,
  line: string,
): { name: string; arguments: Record<string, unknown> } | undefined {
  const lower = line.toLowerCase();
  for (const tool of request.tools ?? []) {
    const { name } = tool.function;
    if (BUILT_IN.has(name)) continue;
    const words = (name.split('__').at(-1) ?? name).split(/[_-]+/).filter((w) => w.length >= 3);
    if (words.length === 0 || !words.every((word) => lower.includes(word.toLowerCase()))) continue;
    const schema = (tool.function.parameters ?? {}) as {
      required?: string[];
      properties?: Record<string, { type?: string }>;
    };
    const args: Record<string, unknown> = {};
    for (const key of schema.required ?? []) {
      const type = schema.properties?.[key]?.type;
      args[key] =
        type === 'number' || type === 'integer' ? 1 : type === 'boolean' ? true : line.slice(0, 200);
    }
    return { name, arguments: args };
  }
  return undefined;
}

/** An agent tool's answer, spoken: its `message`, or a booking's confirmation and reference. */
function agentToolReply(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const answer = result as { message?: unknown; confirmed?: unknown; reference?: unknown };
  if (typeof answer.message === 'string' && answer.message.trim() !== '')
    return answer.message.trim().slice(0, 300);
  if (answer.confirmed === true)
    return `That's booked${typeof answer.reference === 'string' ? `, your reference is ${answer.reference}` : ''}.`;
  return undefined;
}
