import { nationalDigits, toE164InCountry } from '../phone.js';
import {
  PII_CATEGORIES,
  REDACTION_FAILED,
  TOKEN_PATTERN,
  tokenLabel,
  type PiiCategory,
} from './categories.js';
import { ruleFindings, type Finding } from './rules.js';
import { spokenView } from './spoken.js';

/**
 * The redactor of one call: every text of the call goes through the same instance, so the same
 * value becomes the same token throughout (`[EMAIL_1]` said twice, the card read back by the agent,
 * the e-mail in a tool's arguments). Pure: no I/O, no clock (the year comes in with the options).
 *
 * What it finds, in order of precedence where two findings overlap: the known values (the call's
 * parameters, the contact's name, phone and e-mail: always found, in any of their written or spoken
 * forms), the rules (rules.ts), and an outside detector's findings (names and addresses in free
 * text, passed in per text: Amazon Comprehend in the cloud).
 */

export interface KnownValue {
  category: PiiCategory;
  value: string;
}

/** A span an outside detector found in one text (offsets in that text). */
export interface DetectedSpan {
  start: number;
  end: number;
  category: PiiCategory;
}

/** Whose line a text is, when known: the agent introducing itself names no one of the caller's. */
export type Speaker = 'agent' | 'user';

export interface RedactorOptions {
  /** Default: every category. */
  categories?: readonly PiiCategory[];
  known?: readonly KnownValue[];
  /** Texts that are never personal data here (the listing's address the agent quotes). */
  keep?: readonly string[];
  /** Regions (ISO 3166) whose national phone formats apply: the call's numbers' (default AU, US). */
  regions?: readonly string[];
  /** This year (dates of birth are in the past). */
  year: number;
  /** Another detector run on each text with the rules (tests make one fail). */
  extraRule?: (text: string) => DetectedSpan[];
}

interface KnownMatcher {
  category: PiiCategory;
  canonical: string;
  /** Matched in the spoken view. */
  pattern: RegExp;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A literal that may come spaced out in the view (`jane @ example . com`, digits in groups). */
const spaced = (value: string) =>
  [...value]
    .filter((c) => !/\s/.test(c))
    .map((c, i, all) =>
      i === 0 ? escape(c) : (/\d/.test(c) && /\d/.test(all[i - 1]!) ? '[ .\\-()\\n]{0,3}' : ' ?') + escape(c),
    )
    .join('');

const isDigitValue = (value: string) => /^[\d\s().+-]{6,}$/.test(value) && /\d{2}/.test(value);

export class Redactor {
  private readonly enabled: Set<PiiCategory>;
  private readonly tokens = new Map<string, string>();
  private readonly counts = new Map<PiiCategory, number>();
  private readonly known: KnownMatcher[] = [];
  private readonly regions: string[];
  /** Texts the redactor failed on (each stored as REDACTION_FAILED). */
  failures = 0;

  constructor(private readonly options: RedactorOptions) {
    this.enabled = new Set(options.categories ?? PII_CATEGORIES);
    this.regions = [...(options.regions?.length ? options.regions : ['AU', 'US'])];
    for (const known of options.known ?? []) this.addKnown(known);
  }

  private addKnown({ category, value }: KnownValue): void {
    const trimmed = value.trim();
    if (trimmed.length < 2 || !this.enabled.has(category)) return;
    const add = (canonical: string, source: string, flags = 'gi', whole = true) => {
      const body = spaced(source);
      if (!body) return;
      this.known.push({
        category,
        canonical,
        pattern: new RegExp(whole ? `(?<![\\p{L}\\p{N}])${body}(?![\\p{L}\\p{N}])` : body, `${flags}u`),
      });
    };
    if (category === 'phone_number') {
      const e164 = toE164InCountry(trimmed, this.regions[0]!) ?? trimmed;
      add(e164, e164);
      for (const national of nationalDigits(e164)) if (national.length >= 6) add(e164, national);
      return;
    }
    if (category === 'email') return add(trimmed.toLowerCase(), trimmed.toLowerCase());
    if (category === 'person_name') {
      const canonical = trimmed.toLowerCase().replace(/\s+/g, ' ');
      add(canonical, trimmed);
      // Each part alone is the same person ("Hi Jane"): as written with its capital, not the word.
      for (const part of trimmed.split(/\s+/))
        if (part.length >= 2 && /^\p{Lu}/u.test(part)) add(canonical, part, 'g');
      return;
    }
    const canonical = isDigitValue(trimmed) ? trimmed.replace(/\D/g, '') : trimmed.toLowerCase();
    add(canonical, isDigitValue(trimmed) ? trimmed.replace(/\D/g, '') : trimmed);
  }

  /** Numbers new tokens after those already in the text (a second pass over redacted text). */
  adoptTokens(text: string): void {
    for (const m of text.matchAll(TOKEN_PATTERN)) {
      const category = m[1]!.toLowerCase() as PiiCategory;
      this.counts.set(category, Math.max(this.counts.get(category) ?? 0, Number(m[2])));
    }
  }

  private tokenFor(category: PiiCategory, canonical: string): string {
    const key = `${category}\u0000${canonical}`;
    let token = this.tokens.get(key);
    if (!token) {
      const n = (this.counts.get(category) ?? 0) + 1;
      this.counts.set(category, n);
      token = `[${tokenLabel(category)}_${n}]`;
      this.tokens.set(key, token);
    }
    return token;
  }

  private findings(text: string, detected: readonly DetectedSpan[], speaker?: Speaker): Finding[] {
    const view = spokenView(text);
    const all: Finding[] = [];
    for (const known of this.known) {
      for (const m of view.text.matchAll(known.pattern)) {
        const start = view.from[m.index]!;
        const end = view.to[m.index + m[0].length - 1]!;
        all.push({ start, end, category: known.category, canonical: known.canonical, priority: 3 });
      }
    }
    all.push(
      ...ruleFindings(view, {
        regions: this.regions,
        year: this.options.year,
        keep: [...(this.options.keep ?? [])],
        ...(speaker ? { speaker } : {}),
      }),
    );
    const outside = [...detected, ...(this.options.extraRule?.(text) ?? [])];
    for (const span of outside) {
      if (span.start < 0 || span.end > text.length || span.end <= span.start) continue;
      const canonical = text.slice(span.start, span.end).toLowerCase().replace(/\s+/g, ' ').trim();
      all.push({ ...span, canonical, priority: 1 });
    }
    // Tokens already in the text stay as they are.
    const tokens = [...text.matchAll(TOKEN_PATTERN)].map((m) => [m.index, m.index + m[0].length]);
    const kept = all.filter(
      (f) => this.enabled.has(f.category) && !tokens.some(([s, e]) => f.start < e! && s! < f.end),
    );
    kept.sort((a, b) => b.priority - a.priority || b.end - b.start - (a.end - a.start) || a.start - b.start);
    const chosen: Finding[] = [];
    for (const f of kept) if (!chosen.some((c) => f.start < c.end && c.start < f.end)) chosen.push(f);
    return chosen.sort((a, b) => a.start - b.start);
  }

  /**
   * Texts read as one (a speaker's consecutive lines: a value may span two), each redacted. `speaker`:
   * whose lines they are (the agent's "this is Ava" names the agent, not the caller).
   */
  redactSegments(
    segments: readonly string[],
    detected: readonly (readonly DetectedSpan[])[] = [],
    speaker?: Speaker,
  ): string[] {
    try {
      const offsets: number[] = [];
      let joined = '';
      const spans: DetectedSpan[] = [];
      segments.forEach((segment, i) => {
        if (i > 0) joined += '\n';
        offsets.push(joined.length);
        for (const span of detected[i] ?? [])
          spans.push({ ...span, start: span.start + joined.length, end: span.end + joined.length });
        joined += segment;
      });
      const findings = this.findings(joined, spans, speaker).map((f) => ({
        ...f,
        token: this.tokenFor(f.category, f.canonical),
      }));
      return segments.map((segment, i) => {
        const base = offsets[i]!;
        let out = '';
        let at = 0;
        for (const f of findings) {
          const s = Math.max(f.start - base, 0);
          const e = Math.min(f.end - base, segment.length);
          if (e <= 0 || s >= segment.length || e <= s) continue;
          out += segment.slice(at, s) + f.token;
          at = e;
        }
        return out + segment.slice(at);
      });
    } catch {
      this.failures += segments.length;
      return segments.map(() => REDACTION_FAILED);
    }
  }

  redact(text: string, detected: readonly DetectedSpan[] = []): string {
    return this.redactSegments([text], [detected])[0]!;
  }

  /**
   * A transcript's lines, each speaker's consecutive lines read together (a card number said over two
   * prompts is one value). `detected`: an outside detector's spans per line.
   */
  redactLines<T extends { role: string; text: string }>(
    lines: readonly T[],
    detected: readonly (readonly DetectedSpan[])[] = [],
  ): T[] {
    const out: T[] = [];
    let i = 0;
    while (i < lines.length) {
      let j = i + 1;
      while (j < lines.length && lines[j]!.role === lines[i]!.role) j += 1;
      const group = lines.slice(i, j);
      const role = lines[i]!.role;
      const texts = this.redactSegments(
        group.map((l) => l.text),
        detected.slice(i, j),
        role === 'agent' || role === 'user' ? role : undefined,
      );
      group.forEach((line, k) => out.push({ ...line, text: texts[k]! }));
      i = j;
    }
    return out;
  }

  /** A JSON value with every string redacted (keys kept), numbers of 6 digits or more too. */
  redactJson(value: unknown): unknown {
    if (typeof value === 'string') return this.redact(value);
    if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) >= 100_000) {
      const redacted = this.redact(String(value));
      return redacted === String(value) ? value : redacted;
    }
    if (Array.isArray(value)) return value.map((v) => this.redactJson(v));
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.redactJson(v)]));
    return value;
  }
}
