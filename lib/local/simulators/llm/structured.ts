import { textOf, type ChatCompletionRequest } from './protocol.js';

/**
 * The model simulator's structured output (a request with `response_format: {type: "json_schema"}`),
 * deterministic. By the schema's name:
 *
 * `call_analysis` (post-call analysis, functions/post-call/call-analysis.ts), from the transcript in
 * the user message (`Caller: …` / `Agent: …` lines):
 *  - a transcript containing "simulate an analysis error" → HTTP 500; containing "simulate invalid
 *    analysis" → a 200 whose content is not JSON (every time: the retry gets the same);
 *  - `summary`: what was asked and answered: `The caller asked: "<question>" The agent answered:
 *    "<the agent's next line>".` for each of the caller's first two questions (sentences ending in
 *    "?"); with no question, `The caller said: "<first caller line of 3+ words>". The agent answered:
 *    "<…>".`; then `The caller agreed: "<agreeing line>".` or `Nothing was agreed.`;
 *  - `call_successful`: the caller agreed to something: a caller sentence (not a question) with sounds
 *    good, that works, book it / book me, I'll take, let's do, deal, agreed; or with yes, yeah, sure,
 *    okay right after the agent asked something (not its greeting: "Hi, yes." agrees to nothing);
 *  - `user_sentiment`: caller lines' positive words (thanks, thank you, great, perfect, wonderful,
 *    excellent, helpful, happy, love, awesome) against negative ones (angry, upset, terrible, awful,
 *    unhappy, disappointed, frustrated, rude, useless, waste, complain): more positive → positive,
 *    more negative → negative, else neutral;
 *  - `custom`: each field from the caller lines that name it (its name, underscores as spaces, in the
 *    line, case and punctuation ignored): `number` → the first amount after the name ($900,000, 1.2
 *    million, 800k); `boolean` → false when that line says no/not/don't/haven't/isn't, else true;
 *    `string` → the words after "<name> is" up to the sentence's end; `enum` → the first of its values
 *    any caller line contains (the name need not be said). Not said → null.
 *
 * `evaluation_judgement` (evaluation judging, functions/evaluations/judge.ts), from the numbered
 * `Criteria:` list and the transcript in the user message: a criterion passes when the agent's lines
 * hold at least half of its content words (stop words aside; a word matches by its first 5 letters,
 * so "offers" matches "offer"); the reason quotes the agent's line that matched most, or names the
 * words no agent line said. A criterion containing "simulate a judge error" → HTTP 500.
 *
 * `transfer_summary` (a warm transfer's summary, functions/conversation/transfer.ts), from the
 * transcript in the user message: `On this call the caller said: "<line 1>", "<line 2>" and "<line 3>".`
 * (the caller's first three lines), cut to 60 words; no caller line → "A caller asked to be put
 * through."; a transcript containing "simulate a summary error" → HTTP 500.
 *
 * Any other schema: a value valid for it. A string property whose name suggests text from the
 * conversation (summary, notes, reason, text, answer, …) gets the caller's lines; other strings their
 * enum's first value, a `const`, or "" (padded to `minLength`); booleans false; numbers 0 (or their
 * `minimum`); arrays `minItems` items; null where the schema allows it; `$ref`s into `$defs` /
 * `definitions` are followed.
 */
export type AnswerStructured = (request: ChatCompletionRequest) => unknown;

type Schema = Record<string, unknown>;

/** Thrown by an AnswerStructured: `error` → HTTP 500; `invalid` → a 200 whose content is not JSON. */
export class StructuredFault extends Error {
  constructor(readonly fault: 'error' | 'invalid') {
    super(`structured output fault: ${fault}`);
    this.name = 'StructuredFault';
  }
}

/** The content of an `invalid` answer. */
export const INVALID_STRUCTURED_CONTENT = 'Sure! Here is the analysis you asked for: {summary: ';

export const answerStructured: AnswerStructured = (request) => {
  const format = request.response_format;
  const schema = format?.type === 'json_schema' ? (format.json_schema.schema ?? {}) : {};
  const name = format?.type === 'json_schema' ? format.json_schema.name : '';
  const userText = request.messages
    .filter((m) => m.role === 'user')
    .map((m) => textOf(m.content))
    .join('\n');
  if (name === 'call_analysis') return analyseCall(userText, schema);
  if (name === 'evaluation_judgement') return judge(userText);
  if (name === 'transfer_summary') return summariseForTransfer(userText);
  const said = request.messages
    .filter((m) => m.role === 'user')
    .map((m) => textOf(m.content).trim())
    .filter(Boolean)
    .join(' ');
  return valueFor(schema, '', { root: schema, said, depth: 0 });
};

// ── Post-call analysis ───────────────────────────────────────────────────────────────────────────

interface Line {
  role: 'caller' | 'agent';
  text: string;
}

function transcriptLines(text: string): Line[] {
  const lines: Line[] = [];
  for (const raw of text.split('\n')) {
    const match = /^(Caller|Agent): (.*)$/.exec(raw);
    if (match) lines.push({ role: match[1] === 'Caller' ? 'caller' : 'agent', text: match[2].trim() });
  }
  return lines;
}

const AGREES =
  /\b(yes|yeah|yep|sure|okay|ok|sounds good|that works|book (?:it|me|that)|i'?ll take|let'?s do|deal|agreed)\b/i;
/** Agreement whatever was asked ("book me in"), where a bare yes may only be an acknowledgement ("Hi, yes."). */
const AGREES_OUTRIGHT = /\b(sounds good|that works|book (?:it|me|that)|i'?ll take|let'?s do|deal|agreed)\b/i;

const sentencesOf = (text: string) =>
  text
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * What was asked and answered: each of the caller's first two questions (a sentence ending in "?")
 * with the agent's next line; without a question, the caller's first line of 3+ words and the answer.
 */
function askedAndAnswered(lines: Line[]): string[] {
  const answerAfter = (i: number) => lines.slice(i + 1).find((l) => l.role === 'agent');
  const asked: string[] = [];
  lines.forEach((line, i) => {
    if (line.role !== 'caller') return;
    for (const question of sentencesOf(line.text).filter((s) => s.endsWith('?'))) {
      if (asked.length >= 2) return;
      const answer = answerAfter(i);
      asked.push(
        `The caller asked: "${quote(question)}"${answer ? ` The agent answered: "${quote(answer.text)}".` : ' It was not answered.'}`,
      );
    }
  });
  if (asked.length > 0) return asked;
  const firstAt = lines.findIndex((l) => l.role === 'caller' && l.text.split(/\s+/).length >= 3);
  const first = firstAt >= 0 ? lines[firstAt] : lines.find((l) => l.role === 'caller');
  const answer = firstAt >= 0 ? answerAfter(firstAt) : undefined;
  return [
    first ? `The caller said: "${quote(first.text)}".` : 'The caller said nothing.',
    ...(answer ? [`The agent answered: "${quote(answer.text)}".`] : []),
  ];
}

/**
 * The caller line that agrees to something: a sentence (not a question) agreeing outright, or saying
 * yes, sure, okay… right after the agent asked something (not its greeting: "Hi, yes." to a hello agrees
 * to nothing).
 */
function agreedLine(lines: Line[]): string | undefined {
  const firstAgent = lines.findIndex((l) => l.role === 'agent');
  for (const [i, line] of lines.entries()) {
    if (line.role !== 'caller') continue;
    const statements = sentencesOf(line.text).filter((s) => !s.endsWith('?'));
    if (statements.some((s) => AGREES_OUTRIGHT.test(s))) return line.text;
    const before = lines.slice(0, i).findLastIndex((l) => l.role === 'agent');
    const offered = before > firstAgent && lines[before].text.trim().endsWith('?');
    if (offered && statements.some((s) => AGREES.test(s))) return line.text;
  }
  return undefined;
}

const agreement = (lines: Line[]) => {
  const agreed = agreedLine(lines);
  return agreed ? `The caller agreed: "${quote(agreed)}".` : 'Nothing was agreed.';
};
const POSITIVE = /\b(thanks|thank you|great|perfect|wonderful|excellent|helpful|happy|love|awesome)\b/gi;
const NEGATIVE =
  /\b(angry|upset|terrible|awful|unhappy|disappointed|frustrated|rude|useless|waste|complain\w*)\b/gi;
const NEGATION = /\b(no|not|don'?t|haven'?t|hasn'?t|isn'?t|won'?t|never)\b/i;
const AMOUNT = /\$?\s?(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(k|m|million|thousand)?\b/i;

const flat = (text: string) =>
  ` ${text
    .toLowerCase()
    .replace(/[^a-z0-9$.,']+/g, ' ')
    .trim()} `;
const quote = (text: string) => (text.length > 160 ? `${text.slice(0, 159)}…` : text);

function amount(text: string): number | null {
  const match = AMOUNT.exec(text);
  if (!match) return null;
  const value = Number(match[1].replace(/,/g, ''));
  const unit = (match[2] ?? '').toLowerCase();
  const factor =
    unit === 'k' || unit === 'thousand' ? 1_000 : unit === 'm' || unit === 'million' ? 1_000_000 : 1;
  return Number.isFinite(value) ? value * factor : null;
}

function customValue(field: string, property: Schema, callerLines: string[]): unknown {
  const types = Array.isArray(property.type) ? (property.type as string[]) : [String(property.type)];
  const values = Array.isArray(property.enum)
    ? property.enum.filter((v): v is string => typeof v === 'string')
    : [];
  if (values.length > 0) {
    for (const line of callerLines) {
      const found = values.find((v) => flat(line).includes(` ${v.toLowerCase().replace(/_/g, ' ')} `));
      if (found) return found;
    }
    return null;
  }
  const named = field.replace(/_/g, ' ');
  const line = callerLines.find((l) => flat(l).includes(` ${named} `));
  if (!line) return null;
  const after = line.slice(line.toLowerCase().indexOf(named.split(' ')[0]) + named.length);
  if (types.includes('number') || types.includes('integer')) return amount(after);
  if (types.includes('boolean')) return !NEGATION.test(line);
  const said = /^\W*(?:is|are|was|:)\s+([^.!?]+)/i.exec(after);
  return said ? said[1].trim() : null;
}

function analyseCall(userText: string, schema: Schema): unknown {
  const lower = userText.toLowerCase();
  if (lower.includes('simulate an analysis error')) throw new StructuredFault('error');
  if (lower.includes('simulate invalid analysis')) throw new StructuredFault('invalid');
  const lines = transcriptLines(userText);
  const caller = lines.filter((l) => l.role === 'caller').map((l) => l.text);
  const summary = [...askedAndAnswered(lines), agreement(lines)].join(' ');
  const agreed = agreedLine(lines);
  const count = (pattern: RegExp) => caller.reduce((n, line) => n + (line.match(pattern)?.length ?? 0), 0);
  const positive = count(POSITIVE);
  const negative = count(NEGATIVE);
  const customProperties = ((schema.properties as Schema | undefined)?.custom as Schema | undefined)
    ?.properties as Record<string, Schema> | undefined;
  return {
    summary,
    call_successful: agreed !== undefined,
    user_sentiment: positive > negative ? 'positive' : negative > positive ? 'negative' : 'neutral',
    custom: Object.fromEntries(
      Object.entries(customProperties ?? {}).map(([field, property]) => [
        field,
        customValue(field, property, caller),
      ]),
    ),
  };
}

// ── A warm transfer's summary ─────────────────────────────────────────────────────────────────────

/** At most this many words (what functions/conversation/transfer.ts asks for). */
const SUMMARY_WORDS = 60;

/**
 * `transfer_summary`: the caller's first three lines, quoted (`On this call the caller said: "…",
 * "…" and "…".`), cut to 60 words; no caller line → "A caller asked to be put through.". A
 * transcript containing "simulate a summary error" → HTTP 500.
 */
function summariseForTransfer(userText: string): { summary: string } {
  if (userText.toLowerCase().includes('simulate a summary error')) throw new StructuredFault('error');
  const said = transcriptLines(userText)
    .filter((l) => l.role === 'caller' && l.text !== '')
    .slice(0, 3)
    .map((l) => `"${l.text}"`);
  if (said.length === 0) return { summary: 'A caller asked to be put through.' };
  const listed = said.length === 1 ? said[0] : `${said.slice(0, -1).join(', ')} and ${said.at(-1)}`;
  const words = `On this call the caller said: ${listed}.`.split(/\s+/);
  return {
    summary: words.length <= SUMMARY_WORDS ? words.join(' ') : `${words.slice(0, SUMMARY_WORDS).join(' ')}…`,
  };
}

// ── Evaluation judging ───────────────────────────────────────────────────────────────────────────

const STOP_WORDS = new Set(
  'a an the and or but of to in on at for with by from is are was be been it its this that these those agent caller they them their he she his her you your we our i me my does do did should must can will would could has have had any some about into as if then than so not no'.split(
    ' ',
  ),
);
const stem = (word: string) => word.slice(0, 5);
const contentWords = (text: string) =>
  [...new Set(text.toLowerCase().match(/[a-z0-9']+/g) ?? [])].filter((w) => !STOP_WORDS.has(w));

function judge(userText: string): unknown {
  const criteria: string[] = [];
  const [head, ...rest] = userText.split(/\n\s*\n/);
  for (const raw of head.split('\n')) {
    const match = /^\s*\d+\.\s+(.*)$/.exec(raw);
    if (match) criteria.push(match[1].trim());
  }
  const agentLines = transcriptLines(rest.join('\n\n'))
    .filter((l) => l.role === 'agent')
    .map((l) => l.text);
  return {
    results: criteria.map((criterion) => {
      if (criterion.toLowerCase().includes('simulate a judge error')) throw new StructuredFault('error');
      const wanted = contentWords(criterion);
      let best = { line: '', hits: [] as string[] };
      for (const line of agentLines) {
        const said = new Set(contentWords(line).map(stem));
        const hits = wanted.filter((w) => said.has(stem(w)));
        if (hits.length > best.hits.length) best = { line, hits };
      }
      const passed = wanted.length > 0 && best.hits.length * 2 >= wanted.length;
      const missing = wanted.filter((w) => !best.hits.includes(w));
      return {
        passed,
        reason: passed
          ? `The agent said: "${quote(best.line)}".`
          : `No line of the agent's covers ${missing.map((w) => `"${w}"`).join(', ')}.`,
      };
    }),
  };
}

// ── Any other schema ─────────────────────────────────────────────────────────────────────────────

const FROM_CONVERSATION =
  /(summary|notes?|description|reason|text|content|message|answer|quote|transcript|comment|explanation|feedback|rationale)/i;

interface Walk {
  root: Schema;
  said: string;
  depth: number;
}

function resolve(schema: Schema, walk: Walk): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema;
  let target: unknown = walk.root;
  for (const part of ref.slice(2).split('/')) target = (target as Schema | undefined)?.[part];
  return typeof target === 'object' && target !== null ? (target as Schema) : {};
}

function valueFor(input: Schema, name: string, walk: Walk): unknown {
  if (walk.depth > 20) return null;
  const schema = resolve(input, walk);
  const next = { ...walk, depth: walk.depth + 1 };
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const options = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(options) && options.length > 0) {
    const nullable = options.some((o) => resolve(o, walk).type === 'null');
    const real = options.find((o) => resolve(o, walk).type !== 'null');
    if (nullable && !(real && wantsConversation(resolve(real, walk), name))) return null;
    return valueFor(real ?? options[0], name, next);
  }
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string | undefined];
  const type = types.find((t) => t !== 'null');
  if (types.includes('null') && !wantsConversation({ ...schema, type }, name)) return null;
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      return Object.fromEntries(
        Object.entries(properties).map(([key, sub]) => [key, valueFor(sub, key, next)]),
      );
    }
    case 'array': {
      const count = typeof schema.minItems === 'number' ? schema.minItems : 0;
      return Array.from({ length: count }, () => valueFor((schema.items ?? {}) as Schema, name, next));
    }
    case 'string':
      return stringFor(schema, name, walk);
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

function wantsConversation(schema: Schema, name: string): boolean {
  return schema.type === 'string' && FROM_CONVERSATION.test(name);
}

function stringFor(schema: Schema, name: string, walk: Walk): string {
  if (schema.format === 'date-time') return '1970-01-01T00:00:00.000Z';
  if (schema.format === 'date') return '1970-01-01';
  let text = FROM_CONVERSATION.test(name) ? walk.said : '';
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  if (max !== undefined) text = text.slice(0, max);
  if (text.length < min) text = text.padEnd(min, '-');
  return text;
}
