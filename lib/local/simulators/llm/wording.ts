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

/**
 * An instruction to the agent, not a fact it would say: a sentence that starts with an order ("Quote…",
 * "Always…", "Never…", "Do not…"), or the clause after a colon that does ("…: quote that price when asked").
 */
const INSTRUCTION =
  /^(?:please\s+)?(?:always|never|do not|don't|quote|say|tell|mention|answer|ask|offer|use|keep|be|make sure|remember|only|avoid|greet|introduce|respond|reply|speak|refer|confirm|repeat)\b/i;

/**
 * A sentence with a hole where a parameter was empty ("it is  at , listed at :"): a word that needs
 * something after it directly followed by punctuation, or nothing at all after a "to"/"is" before "about"/"at".
 */
const HOLE =
  /\b(?:at|is|to|of|for|from|with|by|in|on|called|named)\s*[,.:;!?]|\b(?:to|is)\s+(?:about|at)\b|\$(?!\s?\d)/i;

/** "On a call to Sam about a listing, it is …": the framing is for the agent; what follows is the fact. */
const FRAMING =
  /^(?:on|for|in|during)\s+(?:a|an|the|each|every|this)\s+(?:call|conversation|chat)\b[^,]*,\s*/i;

/**
 * The prompt's facts, each as the agent would say it: its sentences but the "You are …" ones, without
 * instructions (an order is dropped; a clause ordering something after a colon is cut off), without
 * the framing meant for the agent ("On a call to … about a listing,"), and never a sentence with a
 * hole where a parameter was empty. `all`: the "You are …" and ordering sentences too (they may
 * name the listing the agent calls about: its address and price are taken from them, never said as
 * they are).
 */
export function promptSentences(prompt: string, options: { all?: boolean } = {}): string[] {
  return prompt
    .replace(/\s+/g, ' ')
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s !== '' && (options.all || (!/^you are\b/i.test(s) && !INSTRUCTION.test(s))))
    .map((s) => {
      const colon = s.indexOf(': ');
      const fact = colon > 0 && INSTRUCTION.test(s.slice(colon + 2)) ? `${s.slice(0, colon)}.` : s;
      const unframed = fact.replace(FRAMING, '');
      return unframed.charAt(0).toUpperCase() + unframed.slice(1);
    })
    .filter((s) => !HOLE.test(s));
}

export const NO_ANSWER_REPLY =
  "I'm sorry, I don't have that information, but I can have someone follow up with you.";

/** Words any question about property shares with any sentence about one: they tell nothing apart. */
const GENERIC = new Set(
  'any anything anyone something house houses home homes property properties listing listings apartment apartments unit units place places sale buy buying available got have has'.split(
    ' ',
  ),
);

/**
 * The fact of the prompt (promptSentences) sharing the most words with the line (the first of the
 * best), if any shares one; `specific`: words that say nothing in particular about property ("any",
 * "homes", "for sale") do not count.
 */
export function bestSentence(prompt: string, line: string, specific = false): string | undefined {
  const asked = new Set([...words(line)].filter((w) => !specific || !GENERIC.has(w)));
  let best: { text: string; score: number } | undefined;
  for (const fact of promptSentences(prompt)) {
    const score = [...words(fact)].filter((w) => asked.has(w)).length;
    if (score > 0 && (!best || score > best.score)) best = { text: fact, score };
  }
  return best?.text;
}
