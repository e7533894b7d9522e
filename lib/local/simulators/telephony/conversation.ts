import type {
  QuotedListing,
  TranscriptTurn,
} from '../../../../functions/providers/telephony/twilio-format.js';

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
}

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

  const seconds = Math.max(1, input.talkSeconds);
  const transcript = lines.map((line, i) => ({
    ...line,
    offset_seconds: Math.floor((i * seconds) / lines.length),
  }));
  return { transcript, quotedListings };
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
