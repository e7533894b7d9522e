import Sentiment from 'sentiment';

/**
 * What the post-call pipeline works out from a call, as pure rules: sentiment, a summary, and the
 * profile facts enrichment adds to a contact. No AWS, no clock.
 *
 * Sentiment uses the `sentiment` library (AFINN-165 word list). A turn's score is
 * tanh(AFINN comparative score) — the average word valence per token squashed into (-1, 1); the
 * overall score is the same over everything the other party (role `user`) said, or over every turn
 * when they said nothing. Labels: ≥ 0.1 positive, ≤ -0.1 negative, otherwise neutral.
 */

export type TranscriptRole = 'agent' | 'user';
export interface TranscriptTurn {
  role: TranscriptRole;
  text: string;
  offsetSeconds: number;
  /** The agent that said it (an agents' line of a call with handoffs); absent: the call's agent. */
  agentId?: string;
}

export type SentimentLabel = 'positive' | 'neutral' | 'negative';
export interface TurnSentiment {
  index: number;
  role: TranscriptRole;
  score: number;
  label: SentimentLabel;
}
export interface CallSentiment {
  label: SentimentLabel;
  score: number;
  turns: TurnSentiment[];
}

export const POSITIVE_THRESHOLD = 0.1;

// Built on first use: its word list is evaluated then, not at every cold start.
let analyser: Sentiment | undefined;

const round = (value: number, digits = 3): number => {
  const factor = 10 ** digits;
  const rounded = Math.round(value * factor) / factor;
  return Object.is(rounded, -0) ? 0 : rounded;
};

export function labelFor(score: number): SentimentLabel {
  if (score >= POSITIVE_THRESHOLD) return 'positive';
  if (score <= -POSITIVE_THRESHOLD) return 'negative';
  return 'neutral';
}

function scoreText(text: string): { score: number; tokens: number } {
  const result = (analyser ??= new Sentiment()).analyze(text);
  return { score: result.score, tokens: result.tokens.length };
}

export function analyseSentiment(transcript: readonly TranscriptTurn[]): CallSentiment {
  const scored = transcript.map((turn) => ({ turn, ...scoreText(turn.text) }));
  const turns: TurnSentiment[] = scored.map(({ turn, score, tokens }, index) => {
    const value = round(Math.tanh(tokens > 0 ? score / tokens : 0));
    return { index, role: turn.role, score: value, label: labelFor(value) };
  });
  const userTurns = scored.filter((s) => s.turn.role === 'user');
  const basis = userTurns.length > 0 ? userTurns : scored;
  const totalScore = basis.reduce((sum, s) => sum + s.score, 0);
  const totalTokens = basis.reduce((sum, s) => sum + s.tokens, 0);
  const overall = round(Math.tanh(totalTokens > 0 ? totalScore / totalTokens : 0));
  return { label: labelFor(overall), score: overall, turns };
}

export interface QuotedProperty {
  listingId: string;
  address: string;
  price: string;
}

export interface SummaryFacts {
  direction: 'inbound' | 'outbound';
  status: string;
  endReason?: string;
  fromPhone: string;
  toPhone: string;
  durationSeconds?: number;
  agentName?: string;
  transcript: readonly TranscriptTurn[];
  sentiment: CallSentiment;
  properties: readonly QuotedProperty[];
}

export function formatDuration(seconds: number | undefined): string {
  const total = Math.max(0, Math.floor(seconds ?? 0));
  const minutes = Math.floor(total / 60);
  const rest = total % 60;
  return `${minutes}m ${String(rest).padStart(2, '0')}s`;
}

const clip = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
};

/**
 * A short extractive summary: who called whom and how it ended, what the other party asked first,
 * the listings quoted and the sentiment. Deterministic (the same call gives the same summary).
 */
export function summarise(facts: SummaryFacts): string {
  const who =
    facts.direction === 'inbound'
      ? `Inbound call from ${facts.fromPhone}`
      : `Outbound call to ${facts.toPhone}`;
  const agent = facts.agentName ? ` with ${facts.agentName}` : '';
  const ended =
    facts.status === 'completed'
      ? `completed after ${formatDuration(facts.durationSeconds)}`
      : `${facts.status}${facts.endReason ? ` (${facts.endReason.replace(/_/g, ' ')})` : ''}`;
  const parts = [`${who}${agent}, ${ended}.`];
  const firstUserTurn = facts.transcript.find(
    (turn) => turn.role === 'user' && turn.text.trim().split(/\s+/).length >= 3,
  );
  if (firstUserTurn) parts.push(`The caller said: "${clip(firstUserTurn.text, 160)}"`);
  if (facts.properties.length > 0) {
    parts.push(`Quoted: ${facts.properties.map((p) => `${p.address} (${p.price})`).join('; ')}.`);
  }
  if (facts.transcript.length > 0) parts.push(`Sentiment: ${facts.sentiment.label}.`);
  return parts.join(' ');
}

// ── Profile enrichment ───────────────────────────────────────────────────────────────────────────

export type Intent = 'buy' | 'sell' | 'rent';

export interface ProfileExtract {
  name?: string;
  email?: string;
  intents: Intent[];
  /** The largest amount of money the other party mentioned, in whole currency units. */
  budget?: number;
}

const EMAIL_IN_TEXT = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;
const NAME_IN_TEXT = /\b(?:my name is|my name's|name's|this is)\s+([A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+)?)/;
const NOT_NAMES = new Set(['The', 'It', 'That', 'This', 'What', 'About', 'Regarding', 'Just']);
const INTENT_WORDS: [Intent, RegExp][] = [
  ['buy', /\b(buy|buying|purchase|purchasing|looking for a (?:home|house|place|property))\b/i],
  ['sell', /\b(sell|selling|appraisal|list my|listing my)\b/i],
  ['rent', /\b(rent|renting|rental|lease|leasing|tenant)\b/i],
];
const MONEY =
  /\$\s?(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(k|m|mil|million|thousand)?\b|\b(\d+(?:\.\d+)?)\s*(k|m|mil|million|thousand)\b/gi;

function amountOf(number: string, unit: string | undefined): number {
  const value = Number(number.replace(/,/g, ''));
  switch ((unit ?? '').toLowerCase()) {
    case 'k':
    case 'thousand':
      return value * 1_000;
    case 'm':
    case 'mil':
    case 'million':
      return value * 1_000_000;
    default:
      return value;
  }
}

/** Facts about the other party in what they said (the agent's own words are not about them). */
export function extractProfile(transcript: readonly TranscriptTurn[]): ProfileExtract {
  const said = transcript.filter((turn) => turn.role === 'user').map((turn) => turn.text);
  const extract: ProfileExtract = { intents: [] };
  for (const text of said) {
    if (!extract.email) {
      const email = text.match(EMAIL_IN_TEXT)?.[0];
      if (email) extract.email = email.toLowerCase().replace(/\.$/, '');
    }
    if (!extract.name) {
      const name = text.match(NAME_IN_TEXT)?.[1];
      if (name && !NOT_NAMES.has(name.split(' ')[0])) extract.name = name;
    }
    for (const [intent, pattern] of INTENT_WORDS) {
      if (pattern.test(text) && !extract.intents.includes(intent)) extract.intents.push(intent);
    }
    for (const match of text.matchAll(MONEY)) {
      const amount = match[1] !== undefined ? amountOf(match[1], match[2]) : amountOf(match[3], match[4]);
      if (
        Number.isFinite(amount) &&
        amount >= 1_000 &&
        (extract.budget === undefined || amount > extract.budget)
      ) {
        extract.budget = Math.round(amount);
      }
    }
  }
  return extract;
}

/** SMS templates are rendered like the agent's other texts, by the one template renderer. */
export { renderTemplate } from '../agents/template.js';
