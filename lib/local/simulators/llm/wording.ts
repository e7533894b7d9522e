import type { QuotedListing } from '../../../../functions/providers/telephony/twilio-format.js';

/**
 * What the simulated agent says, shared by the model simulator (server.ts, replies.ts) and the
 * telephony simulator's scripted conversations: how it speaks of a knowledge-tool hit, how it tells a
 * question about a property, and how it finds the sentence of its prompt that answers a line.
 */

/** One thing the caller said and the agent's answer; `listing` when the answer quoted one. */
export interface Exchange {
  said: string;
  reply: string;
  listing?: QuotedListing;
}

/** A hit of the knowledge tool (functions/knowledge/voice-tool.ts), as much as the agent speaks of it. */
export interface KnowledgeHit {
  item_id: string;
  type: 'listing' | 'document';
  title: string;
  passage: string;
  listing?: {
    external_id: string | null;
    full_address: string;
    price_text: string | null;
    status: string;
    bedrooms: number | null;
    bathrooms: number | null;
  };
}

/** What the agent says when its knowledge bases had nothing on what the caller asked. */
export const NOTHING_FOUND_REPLY =
  "I'm sorry, I couldn't find anything on that, but I can have someone follow up with you.";

/**
 * Whether a caller's line asks about a property (the simulated agent then searches its knowledge
 * bases with it): a word about property or a street, a number followed by a name (an address), or
 * a place named after in, at, on, near, around or about ("anything in Bondi?").
 */
export function asksAboutListing(line: string): boolean {
  return (
    /\b(listings?|propert(y|ies)|house|home|apartment|unit|townhouse|flat|bedrooms?|for sale|price|street|st|road|rd|avenue|ave|grove|lane|drive|place|parade|crescent)\b/i.test(
      line,
    ) ||
    /\b\d+[a-z]?\s+[A-Z][a-z]+/.test(line) ||
    /\b(in|at|on|near|around|about)\s+[A-Z][a-z]{2,}/.test(line)
  );
}

/** The agent's answer from the top hit of the knowledge tool (none: it says it found nothing). */
export function replyFromKnowledge(said: string, hit: KnowledgeHit | undefined): Exchange {
  if (!hit) return { said, reply: NOTHING_FOUND_REPLY };
  const listing = hit.listing;
  if (hit.type === 'listing' && listing) {
    const status =
      listing.status === 'sold'
        ? 'has been sold'
        : listing.status === 'under_offer'
          ? 'is under offer'
          : 'is available';
    const rooms = [
      listing.bedrooms !== null ? `${listing.bedrooms} bedrooms` : undefined,
      listing.bathrooms !== null ? `${listing.bathrooms} bathrooms` : undefined,
    ].filter(Boolean);
    const price = listing.price_text ? `, listed at ${listing.price_text}` : '';
    const facts = rooms.length > 0 ? ` It has ${rooms.join(' and ')}.` : '';
    return {
      said,
      reply: `That's ${listing.full_address}: it ${status}${price}.${facts}`,
      ...(listing.price_text
        ? { listing: { listing_id: hit.item_id, address: listing.full_address, price: listing.price_text } }
        : {}),
    };
  }
  return { said, reply: `From "${hit.title}": ${hit.passage}` };
}

const STOP_WORDS = new Set(
  'a an and are as at be but by can could do does for from have how i if in into is it its me my of on or our please so that the their them then there these they this to us was we what when where which who why will with would you your'.split(
    ' ',
  ),
);

export const words = (text: string): Set<string> =>
  new Set(
    text
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length > 1 && !STOP_WORDS.has(w)),
  );

/** The prompt's sentences, each a thing the agent knows (not the "You are …" ones). */
export function promptSentences(prompt: string): string[] {
  return prompt
    .replace(/\s+/g, ' ')
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s !== '' && !/^you are\b/i.test(s));
}

export const NO_ANSWER_REPLY =
  "I'm sorry, I don't have that information, but I can have someone follow up with you.";

/** The sentence of the prompt sharing the most words with the line (the first of the best), if any shares one. */
export function bestSentence(prompt: string, line: string): string | undefined {
  const asked = words(line);
  let best: { text: string; score: number } | undefined;
  for (const fact of promptSentences(prompt)) {
    const score = [...words(fact)].filter((w) => asked.has(w)).length;
    if (score > 0 && (!best || score > best.score)) best = { text: fact, score };
  }
  return best?.text;
}
