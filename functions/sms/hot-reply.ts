/**
 * What an inbound SMS says, read by two small, documented rules.
 *
 * Opt-out and opt-in keywords (docs/api.md, SMS): the message, trimmed and in any case, is exactly one
 * of STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, OPTOUT, REVOKE (→ `stop`: the contact becomes
 * `unsubscribed`) or START, UNSTOP (→ `start`: `contactable` again). A trailing full stop or
 * exclamation mark is allowed ("Stop!"); a keyword inside a sentence ("please don't stop") is not one.
 *
 * Hot replies: a reply that shows interest alerts the workspace's hot-reply recipients. The detector
 * is deliberately simple and predictable:
 *   1. The text is lower-cased, apostrophes dropped (`don't` → `dont`), punctuation turned into spaces.
 *   2. A negative phrase anywhere makes it not hot: "not interested", "no thanks", "no thank you",
 *      "dont call", "do not call", "dont contact", "not keen", "not now", "not for me", "wrong number",
 *      "leave me alone", "remove me", "unsubscribe", "stop", and a reply that is only "no"/"nope"/"nah"
 *      or starts with "no " / "nope" / "nah".
 *   3. Otherwise it is hot when it contains an interest phrase as whole words: yes, yeah, yep, yes
 *      please, sure, ok, okay, interested, keen, call me, ring me, give me a call, phone me, book,
 *      appointment, inspection, viewing, available, how much, price, tell me more, more info,
 *      sounds good, lets talk, lets chat, when can, i would like, id like, love to.
 *   4. Negation right before an interest word flips it: "not", "never", "dont", "isnt", "no" within
 *      the two words before the phrase ("I am not interested", "don't call me", "never keen").
 * Keywords (opt-out/opt-in) are never hot.
 */

export type Keyword = 'stop' | 'start';

const STOP_WORDS = new Set(['stop', 'stopall', 'unsubscribe', 'cancel', 'end', 'quit', 'optout', 'revoke']);
const START_WORDS = new Set(['start', 'unstop']);

/** The opt-out (`stop`) or opt-in (`start`) keyword the message is, or undefined. */
export function keywordOf(body: string): Keyword | undefined {
  const word = body
    .trim()
    .toLowerCase()
    .replace(/[.!]+$/, '');
  if (STOP_WORDS.has(word)) return 'stop';
  if (START_WORDS.has(word)) return 'start';
  return undefined;
}

const NEGATIVE_PHRASES = [
  'not interested',
  'no thanks',
  'no thank you',
  'dont call',
  'do not call',
  'dont contact',
  'do not contact',
  'not keen',
  'not now',
  'not for me',
  'wrong number',
  'leave me alone',
  'remove me',
  'unsubscribe',
  'stop',
];

const INTEREST_PHRASES = [
  'yes please',
  'yes',
  'yeah',
  'yep',
  'sure',
  'ok',
  'okay',
  'interested',
  'keen',
  'call me',
  'ring me',
  'give me a call',
  'phone me',
  'book',
  'appointment',
  'inspection',
  'viewing',
  'available',
  'how much',
  'price',
  'tell me more',
  'more info',
  'sounds good',
  'lets talk',
  'lets chat',
  'when can',
  'i would like',
  'id like',
  'love to',
];

const NEGATIONS = new Set(['not', 'never', 'dont', 'isnt', 'no', 'cant', 'wont']);

function words(body: string): string[] {
  return body
    .toLowerCase()
    .replace(/['’`]/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean);
}

/** Where `phrase` (words) occurs in `text` (words), as whole words. */
function occurrences(text: string[], phrase: string[]): number[] {
  const found: number[] = [];
  for (let i = 0; i + phrase.length <= text.length; i += 1) {
    if (phrase.every((word, k) => text[i + k] === word)) found.push(i);
  }
  return found;
}

/** Whether an inbound reply shows interest (see the rules above). */
export function isHotReply(body: string): boolean {
  if (keywordOf(body)) return false;
  const text = words(body);
  if (text.length === 0) return false;
  if (['no', 'nope', 'nah'].includes(text[0])) return false;
  if (NEGATIVE_PHRASES.some((phrase) => occurrences(text, phrase.split(' ')).length > 0)) return false;
  return INTEREST_PHRASES.some((phrase) =>
    occurrences(text, phrase.split(' ')).some(
      (at) => !text.slice(Math.max(0, at - 2), at).some((word) => NEGATIONS.has(word)),
    ),
  );
}
