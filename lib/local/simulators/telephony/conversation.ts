import type {
  QuotedListing,
  TranscriptTurn,
} from '../../../../functions/providers/telephony/twilio-format.js';
import { bestSentence, NO_ANSWER_REPLY, type Exchange } from '../llm/wording.js';

export {
  asksAboutListing,
  NO_ANSWER_REPLY,
  NOTHING_FOUND_REPLY,
  replyFromKnowledge,
  type Exchange,
  type KnowledgeHit,
} from '../llm/wording.js';

/**
 * The conversation the simulator's voice runtime "has": built from the agent's greeting, its prompt
 * (already filled with the call's parameters) and the parameters themselves. When the parameters name
 * a listing and its price (`listing_id`, `listing_address`, `listing_price`), the agent quotes that
 * price, and the quote is reported as a structured listing next to the transcript.
 */
export interface ConversationInput {
  greeting: string;
  prompt: string;
  parameters: Record<string, string>;
  direction: 'outbound' | 'inbound';
  /** Seconds from answer to end; the turns are spread over them. */
  talkSeconds: number;
  /** Conversation memories (summaries of earlier calls, newest first): the agent recalls the latest. */
  memories?: string[];
  /**
   * What the caller said and how the agent answered (looked up in its knowledge bases through the
   * knowledge tool): replaces the default small talk of the middle of the call.
   */
  exchanges?: Exchange[];
}

/** What the agent says when it recalls the last call (conversation memories). */
export const RECALL_PREFIX = 'Good to speak with you again. Last time:';

export interface Conversation {
  transcript: TranscriptTurn[];
  quotedListings: QuotedListing[];
}

function firstSentence(text: string): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  if (clean === '') return '';
  const match = /^(.{1,240}?[.!?])(\s|$)/.exec(clean);
  const sentence = (match ? match[1] : clean.slice(0, 240)).trim();
  return sentence.replace(/^you are\s+/i, '').replace(/[.!?]$/, '');
}

/** The listing the agent will quote, when the parameters describe one with a price. */
export function listingFrom(parameters: Record<string, string>): QuotedListing | undefined {
  const id = parameters.listing_id?.trim();
  const price = (parameters.listing_price ?? parameters.price)?.trim();
  if (!id || !price) return undefined;
  const address = (parameters.listing_address ?? parameters.address ?? '').trim();
  return { listing_id: id, address, price };
}

export function buildConversation(input: ConversationInput): Conversation {
  const lines: { role: TranscriptTurn['role']; text: string }[] = [];
  const name = input.parameters.name?.trim();
  const greeting =
    input.greeting.trim() ||
    (input.direction === 'inbound'
      ? 'Hello, thanks for calling. How can I help?'
      : 'Hello, this is your assistant calling.');
  lines.push({ role: 'agent', text: greeting });
  const recalled = input.memories?.[0]?.replace(/\s+/g, ' ').trim();
  if (recalled) lines.push({ role: 'agent', text: `${RECALL_PREFIX} ${recalled.slice(0, 300)}` });
  if (input.exchanges && input.exchanges.length > 0) {
    const quotedListings: QuotedListing[] = [];
    for (const exchange of input.exchanges) {
      lines.push({ role: 'user', text: exchange.said });
      lines.push({ role: 'agent', text: exchange.reply });
      if (exchange.listing) quotedListings.push(exchange.listing);
    }
    lines.push({ role: 'user', text: "Thanks, that's all I needed." });
    lines.push({ role: 'agent', text: 'Thank you for your time. Goodbye!' });
    return { transcript: spread(lines, input.talkSeconds), quotedListings };
  }
  lines.push({
    role: 'user',
    text:
      input.direction === 'inbound'
        ? 'Hi, I was hoping to get some information.'
        : `Hi, yes${name ? `, this is ${name}` : ''}. What is this about?`,
  });
  const topic = firstSentence(input.prompt);
  lines.push({
    role: 'agent',
    text: topic ? `I'm here to help: ${topic}.` : 'I wanted to check in and see how I can help.',
  });

  const listing = listingFrom(input.parameters);
  const quotedListings: QuotedListing[] = [];
  if (listing) {
    const where = listing.address ? `the property at ${listing.address}` : 'the property';
    lines.push({ role: 'user', text: 'Which property is it, and what is the price?' });
    lines.push({
      role: 'agent',
      text: `It's ${where}, listing ${listing.listing_id}, and it is listed at ${listing.price}.`,
    });
    lines.push({ role: 'user', text: 'That sounds interesting. Could you send me the details?' });
    lines.push({ role: 'agent', text: "Of course, I'll send the details through straight after this call." });
    quotedListings.push(listing);
  } else {
    lines.push({ role: 'user', text: 'Sure, tell me more.' });
    lines.push({ role: 'agent', text: 'Happy to. I can follow up with everything in writing as well.' });
  }
  lines.push({ role: 'user', text: "Thanks, that's all I needed." });
  lines.push({ role: 'agent', text: 'Thank you for your time. Goodbye!' });

  return { transcript: spread(lines, input.talkSeconds), quotedListings };
}

/** The turns spread evenly over the talk time. */
function spread(
  lines: { role: TranscriptTurn['role']; text: string }[],
  talkSeconds: number,
): TranscriptTurn[] {
  const seconds = Math.max(1, talkSeconds);
  return lines.map((line, i) => ({ ...line, offset_seconds: Math.floor((i * seconds) / lines.length) }));
}

/** The part of a conversation that happened within `elapsedSeconds` (a call hung up early). */
export function truncateConversation(
  conversation: Conversation,
  fullSeconds: number,
  elapsedSeconds: number,
): Conversation {
  if (elapsedSeconds >= fullSeconds) return conversation;
  const transcript = conversation.transcript.filter((turn) => turn.offset_seconds <= elapsedSeconds);
  const quoted = transcript.some((turn) => /listed at/.test(turn.text)) ? conversation.quotedListings : [];
  return { transcript, quotedListings: quoted };
}

// ── Scripted conversations (agent evaluations) ───────────────────────────────────────────────────────

export interface ScriptedConversationInput {
  greeting: string;
  prompt: string;
  callerScript: string[];
  /** Seconds the conversation may last (the turns are spread over it, at most 10 s a turn). */
  timeLimit: number;
  /** Answers from the knowledge bases, by caller line (the knowledge tool's), taking precedence. */
  knowledgeReplies?: (string | undefined)[];
}

/**
 * The simulator's voice runtime answering a scripted caller: it greets, then answers each line the
 * caller says with the sentence of its prompt that shares the most words with it (no shared word: it
 * says it does not know), and says goodbye. Deterministic, so an evaluation judges the agent's prompt.
 */
export function buildScriptedConversation(input: ScriptedConversationInput): {
  transcript: TranscriptTurn[];
  durationSeconds: number;
} {
  const lines: { role: TranscriptTurn['role']; text: string }[] = [
    { role: 'agent', text: input.greeting.trim() || 'Hello, thanks for calling. How can I help?' },
  ];
  for (const [i, said] of input.callerScript.entries()) {
    lines.push({ role: 'user', text: said });
    const known = input.knowledgeReplies?.[i];
    if (known) {
      lines.push({ role: 'agent', text: known });
      continue;
    }
    lines.push({ role: 'agent', text: bestSentence(input.prompt, said) ?? NO_ANSWER_REPLY });
  }
  lines.push({ role: 'agent', text: 'Thank you for your time. Goodbye!' });
  const seconds = Math.max(1, Math.min(input.timeLimit, lines.length * 10));
  return {
    transcript: lines.map((line, i) => ({
      ...line,
      offset_seconds: Math.floor((i * seconds) / lines.length),
    })),
    durationSeconds: seconds,
  };
}
