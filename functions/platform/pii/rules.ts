import { toE164InCountry } from '../phone.js';
import type { PiiCategory } from './categories.js';
import { isAbaRouting, isBsb, isCardNumber, isIban, isMedicare, isSsn, isTfn } from './checks.js';
import { originalSpan, type SpokenView } from './spoken.js';

/**
 * The structured categories by rules, on a text's spoken view (spoken.ts): e-mails, digit runs
 * (cards by Luhn, Australian and US government ids by their checks and formats, bank details, phone
 * numbers by libphonenumber in the call's regions), IBANs, dates of birth, street addresses and
 * names introduced as such. Each finding is a span of the original text with its canonical value
 * (what makes two mentions the same value: an e-mail in lower case, a number's digits, a phone in
 * E.164).
 */
export interface Finding {
  start: number;
  end: number;
  category: PiiCategory;
  canonical: string;
  /** Higher wins an overlap (known values 3, rules 2, an outside detector 1). */
  priority: number;
}

export interface RuleOptions {
  /** Regions (ISO 3166) whose national formats a phone number may be written in: the call's. */
  regions: string[];
  /** The year now: a full date at least 12 years back is a date of birth without being called one. */
  year: number;
}

const TLDS =
  'com|net|org|edu|gov|mil|int|io|co|au|uk|us|nz|ca|de|fr|es|it|nl|ie|in|sg|info|biz|me|app|dev|ai|email|online|xyz';
const EMAIL = new RegExp(
  String.raw`(?<![a-z0-9])(?:(?:[a-z0-9] ){2,40}[a-z0-9]|[a-z0-9][a-z0-9+%]*(?: ?[._-] ?[a-z0-9+%]+)*) ?@ ?[a-z0-9][a-z0-9-]*(?: ?\. ?[a-z0-9-]+)*? ?\. ?(?:${TLDS})(?![a-z0-9])`,
  'gi',
);

/** Digits with the separators people and speech-to-text put between groups (a newline: the next line of the same speaker). */
const DIGIT_RUN = /\+?\(?\d(?:(?:[ .\-()\n]{1,3}|, )?\d)*/g;

/** An IBAN whole, or printed in groups of four. */
const IBAN =
  /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[A-Za-z0-9]{11,30}|(?: [A-Za-z0-9]{4}){2,7}(?: [A-Za-z0-9]{1,4})?)(?![A-Za-z0-9])/g;

/** Words before a number that make it not personal: prices, listings, orders, references, times. */
const LOOK_ALIKE_BEFORE =
  /(?:\$|€|£|aud|usd|price|priced|offer|listing|lot|order|invoice|ref|reference|ticket|booking|confirmation|tracking|item|sku|job|case|quote|policy number|unit|apartment|suite|level|floor|room|flight|model|version|year|years|postcode|zip)\s*(?:number|no\.?|num|id|#|is|was|of|:|-)*\s*(?:is|was|:)?\s*#?\s*$/i;
const LOOK_ALIKE_AFTER =
  /^\s*(?:dollars|bucks|grand|k\b|thousand|million|%|percent|am\b|pm\b|a\.m|p\.m|o'?clock|hours|minutes|seconds|square|sqm|m2|bed|bath|km|kilomet|metres|meters|cents|units|people|items)/i;

const CONTEXT = {
  card: /(?:card|visa|mastercard|amex|american express|credit|debit)/i,
  tfn: /(?:tax file|tfn)/i,
  medicare: /medicare/i,
  ssn: /(?:social security|ssn|social)/i,
  passport: /passport/i,
  licence: /(?:licen[cs]e|dl number)/i,
  bsb: /\bbsb\b/i,
  account: /(?:account|acct|routing|sort code)/i,
  phone: /(?:phone|mobile|cell|number|call me|reach me|landline|contact)/i,
  dob: /(?:born|birth|dob|d\.o\.b|birthday)/i,
};

function emails(view: SpokenView): Finding[] {
  const out: Finding[] = [];
  for (const m of view.text.matchAll(EMAIL)) {
    const [start, end] = originalSpan(view, m.index, m.index + m[0].length);
    out.push({
      start,
      end,
      category: 'email',
      canonical: m[0].replace(/\s+/g, '').toLowerCase(),
      priority: 2,
    });
  }
  return out;
}

/** What a digit run is, given what was said just before it; undefined: nothing personal. */
function classifyDigits(
  raw: string,
  before: string,
  after: string,
  options: RuleOptions,
): { category: PiiCategory; canonical: string } | undefined {
  const digits = raw.replace(/\D/g, '');
  const near = before.slice(-48);
  const said = (key: keyof typeof CONTEXT) => CONTEXT[key].test(near);
  if (LOOK_ALIKE_BEFORE.test(before.slice(-32)) || LOOK_ALIKE_AFTER.test(after)) return undefined;
  const gov = { category: 'government_id' as const, canonical: digits };
  const bank = { category: 'bank_account' as const, canonical: digits };
  // What the caller said it is decides first, when its check agrees.
  if (said('card') && isCardNumber(digits)) return { category: 'credit_card', canonical: digits };
  if (said('tfn') && (isTfn(digits) || /^\d{8,9}$/.test(digits))) return gov;
  if (said('medicare') && /^\d{10,11}$/.test(digits)) return gov;
  if (said('ssn') && /^\d{9}$/.test(digits)) return gov;
  if ((said('passport') || said('licence')) && /^\d{6,10}$/.test(digits)) return gov;
  if (said('bsb') && /^\d{6}(?:\d{4,10})?$/.test(digits)) return bank;
  if (said('account') && (/^\d{6,12}$/.test(digits) || isAbaRouting(digits))) return bank;
  if (/^\+/.test(raw.trim()) || said('phone')) {
    const phone = phoneOf(raw, options.regions);
    if (phone) return { category: 'phone_number', canonical: phone };
  }
  // Then by the value alone.
  if (isCardNumber(digits)) return { category: 'credit_card', canonical: digits };
  if (/^\d{3}[ -]\d{2}[ -]\d{4}$/.test(raw.trim()) && isSsn(digits)) return gov;
  if (/^\d{3}-\d{3}$/.test(raw.trim()) && isBsb(digits)) return bank;
  const phone = phoneOf(raw, options.regions);
  if (phone) return { category: 'phone_number', canonical: phone };
  if (isMedicare(digits) && digits.length >= 10) return gov;
  if (digits.length === 9 && isTfn(digits)) return gov;
  return undefined;
}

function phoneOf(raw: string, regions: string[]): string | undefined {
  const text = raw.replace(/\n/g, ' ').trim();
  const digits = text.replace(/\D/g, '');
  if (digits.length < 8 || digits.length > 15) return undefined;
  if (text.startsWith('+')) return toE164InCountry(text, regions[0] ?? 'AU');
  for (const region of regions) {
    const e164 = toE164InCountry(digits, region);
    if (e164) return e164;
  }
  return undefined;
}

function digitRuns(view: SpokenView, options: RuleOptions): Finding[] {
  const out: Finding[] = [];
  const text = view.text;
  for (const m of text.matchAll(DIGIT_RUN)) {
    const run = m[0].replace(/[ .\-(\n,]+$/, '');
    const digitCount = run.replace(/\D/g, '').length;
    if (digitCount < 6) continue;
    out.push(...classifyRun(view, m.index, run, options));
  }
  return out;
}

/**
 * A run whole, else its parts: split where a comma or a new line is, then the longest window of
 * its groups that is a value (`0412 345 678 4111 1111 1111 1111` said without a pause is two).
 */
function classifyRun(view: SpokenView, at: number, run: string, options: RuleOptions): Finding[] {
  const text = view.text;
  const found = (start: number, value: string): Finding | undefined => {
    const kind = classifyDigits(
      value,
      text.slice(Math.max(0, start - 64), start),
      text.slice(start + value.length, start + value.length + 16),
      options,
    );
    if (!kind) return undefined;
    const [s, e] = originalSpan(view, start, start + value.length);
    return { start: s, end: e, ...kind, priority: 2 };
  };
  const whole = found(at, run);
  if (whole) return [whole];
  const groups = [...run.matchAll(/\+?\(?\d+\)?/g)].map((g) => ({
    start: at + g.index,
    end: at + g.index + g[0].length,
  }));
  if (groups.length < 2 || groups.length > 24) return [];
  const out: Finding[] = [];
  let i = 0;
  while (i < groups.length) {
    let hit: Finding | undefined;
    for (let j = Math.min(groups.length - 1, i + 10); j >= i && !hit; j -= 1) {
      const value = text.slice(groups[i]!.start, groups[j]!.end);
      if (value.replace(/\D/g, '').length < 6) break;
      hit = found(groups[i]!.start, value);
      if (hit) {
        out.push(hit);
        i = j + 1;
      }
    }
    if (!hit) i += 1;
  }
  return out;
}

function ibans(view: SpokenView): Finding[] {
  const out: Finding[] = [];
  for (const m of view.text.matchAll(IBAN)) {
    const value = m[0].replace(/\s+/g, '').toUpperCase();
    if (!isIban(value)) continue;
    const [start, end] = originalSpan(view, m.index, m.index + m[0].length);
    out.push({ start, end, category: 'bank_account', canonical: value, priority: 2 });
  }
  return out;
}

/** Passports and driver licences: letters and digits after the word that names them. */
const DOCUMENT =
  /(passport|licen[cs]e)(?: number| no\.?| #| id)?(?: is|:)?\s+((?:[a-z](?: ?))?(?:[a-z] ?)?\d(?: ?[a-z\d]){4,11})(?![a-z\d])/gi;

function documents(view: SpokenView): Finding[] {
  const out: Finding[] = [];
  for (const m of view.text.matchAll(DOCUMENT)) {
    const value = m[2]!;
    const canonical = value.replace(/\s+/g, '').toUpperCase();
    if (!/\d{4}/.test(canonical.replace(/[A-Z]/g, ''))) continue;
    const at = m.index + m[0].length - value.length;
    const [start, end] = originalSpan(view, at, at + value.length);
    out.push({ start, end, category: 'government_id', canonical, priority: 2 });
  }
  return out;
}

const MONTHS: Record<string, number> = {
  jan: 1,
  january: 1,
  feb: 2,
  february: 2,
  mar: 3,
  march: 3,
  apr: 4,
  april: 4,
  may: 5,
  jun: 6,
  june: 6,
  jul: 7,
  july: 7,
  aug: 8,
  august: 8,
  sep: 9,
  sept: 9,
  september: 9,
  oct: 10,
  october: 10,
  nov: 11,
  november: 11,
  dec: 12,
  december: 12,
};
const MONTH = Object.keys(MONTHS)
  .sort((a, b) => b.length - a.length)
  .join('|');
const YEAR = String.raw`(?:1[89]|20) ?\d ?\d|\d ?\d ?\d ?\d`;
const DATE_FORMS = [
  // 15/03/1982, 15-03-1982, 15.03.82, 1982-03-15
  new RegExp(String.raw`(?<![\d/.-])(\d{1,2})[/.-](\d{1,2})[/.-](\d{4}|\d{2})(?![\d/.-])`, 'g'),
  new RegExp(String.raw`(?<![\d/.-])(\d{4})-(\d{2})-(\d{2})(?![\d/.-])`, 'g'),
  // 15 March 1982, the 15th of March, 1982, 1 5 march 19 8 2 (words)
  new RegExp(
    String.raw`(?<![\d])(\d ?\d?)(?:st|nd|rd|th)? (?:day )?(?:of )?(${MONTH})\.?,? (?:of )?(${YEAR})(?![\d])`,
    'gi',
  ),
  // March 15, 1982 / March the fifteenth nineteen eighty two
  new RegExp(
    String.raw`(?<![a-z])(${MONTH})\.? (?:the )?(\d ?\d?)(?:st|nd|rd|th)?,? (${YEAR})(?![\d])`,
    'gi',
  ),
];

function dates(view: SpokenView, options: RuleOptions): Finding[] {
  const out: Finding[] = [];
  const text = view.text;
  for (const [index, form] of DATE_FORMS.entries()) {
    for (const m of text.matchAll(form)) {
      let year: string;
      let month: number;
      let day: number;
      const n = (s: string) => Number(s.replace(/\s+/g, ''));
      if (index === 0) [day, month, year] = [n(m[1]!), n(m[2]!), m[3]!];
      else if (index === 1) [year, month, day] = [m[1]!, n(m[2]!), n(m[3]!)];
      else if (index === 2) [day, month, year] = [n(m[1]!), MONTHS[m[2]!.toLowerCase()]!, m[3]!];
      else [month, day, year] = [MONTHS[m[1]!.toLowerCase()]!, n(m[2]!), m[3]!];
      // US order (03/15/1982) when the first cannot be a month's day order.
      if (index === 0 && month > 12 && day <= 12) [day, month] = [month, day];
      let y = n(year);
      if (y < 100) y += y > options.year % 100 ? 1900 : 2000;
      if (!(month >= 1 && month <= 12 && day >= 1 && day <= 31 && y >= 1900 && y <= options.year)) continue;
      const before = text.slice(Math.max(0, m.index - 48), m.index);
      if (!(CONTEXT.dob.test(before) || y <= options.year - 12)) continue;
      const [start, end] = originalSpan(view, m.index, m.index + m[0].length);
      const canonical = `${y}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
      out.push({ start, end, category: 'date_of_birth', canonical, priority: 2 });
    }
  }
  return out;
}

const STREET_TYPES =
  'street|st|road|rd|avenue|ave|drive|dr|lane|ln|court|ct|place|pl|crescent|cres|boulevard|blvd|parade|pde|terrace|tce|highway|hwy|way|close|circuit|cct|grove|square|sq|esplanade|esp|parkway|pkwy';
const ADDRESS = new RegExp(
  String.raw`(?<![\w$])(?:(?:unit|apartment|apt|flat|suite) ?\d+[a-z]?,? |\d+[a-z]?/)?\d{1,5}[a-z]? (?:[A-Z][a-z']+ ){1,3}(?:${STREET_TYPES.split(
    '|',
  )
    .map((t) => `[${t[0]!.toUpperCase()}${t[0]}]${t.slice(1)}`)
    .join(
      '|',
    )})\b\.?(?:,? (?:[A-Z][a-z]+ ){0,3}(?:(?:NSW|VIC|QLD|SA|WA|TAS|NT|ACT|[A-Z]{2})\b)?(?: ?\d ?\d ?\d ?\d(?: ?\d)?)?)?`,
  'g',
);

function addresses(view: SpokenView, keep: string[]): Finding[] {
  const out: Finding[] = [];
  const kept = keep.map((k) => k.toLowerCase().replace(/\s+/g, ' ').trim()).filter((k) => k.length > 3);
  for (const m of view.text.matchAll(ADDRESS)) {
    const value = m[0].replace(/[,. ]+$/, '');
    const canonical = value
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, ' ')
      .trim();
    // The listing's address the agent quotes is the business's, not the caller's.
    if (kept.some((k) => k.includes(canonical) || canonical.startsWith(k.replace(/[^a-z0-9]+/g, ' ').trim())))
      continue;
    const [start, end] = originalSpan(view, m.index, m.index + value.length);
    out.push({ start, end, category: 'address', canonical, priority: 2 });
  }
  return out;
}

/** A name the caller gives as such: `my name is Jane Citizen`, `this is Jane`, `it's Jane Citizen speaking`. */
const NAMED =
  /(?:[Mm]y name is|[Mm]y name's|[Nn]ame is|[Tt]his is|I am|I'm|[Ii]t's|[Ss]peaking with|[Cc]all me|[Ss]urname is|[Ll]ast name is|[Ff]irst name is)\s+((?:[A-Z][a-z'-]+)(?: [A-Z][a-z'-]+){0,2})/g;
const NOT_NAMES = new Set([
  'Sorry',
  'Just',
  'Calling',
  'Looking',
  'Interested',
  'Happy',
  'Good',
  'Fine',
  'Not',
  'The',
  'Here',
  'Great',
  'Okay',
  'Ok',
  'Yes',
  'No',
  'Well',
  'Still',
  'Really',
  'Very',
  'So',
  'Also',
  'From',
  'With',
  'In',
  'On',
  'At',
  'About',
  'Available',
  'Busy',
  'Free',
  'Done',
  'Sure',
  'Thinking',
  'Wondering',
  'After',
  'Ready',
]);

/** How the agent introduces itself ("Hi, this is Ava"): in its own lines, its name, not the caller's. */
const SELF_INTRODUCED =
  /^(?:[Mm]y name is|[Mm]y name's|[Tt]his is|I am|I'm|[Ii]t's|[Ss]peaking with|[Cc]all me)\s+$/;

function introducedNames(view: SpokenView, speaker: 'agent' | 'user' | undefined): Finding[] {
  const out: Finding[] = [];
  for (const m of view.text.matchAll(NAMED)) {
    const words = m[1]!.split(' ');
    if (NOT_NAMES.has(words[0]!)) continue;
    if (speaker === 'agent' && SELF_INTRODUCED.test(m[0].slice(0, m[0].length - m[1]!.length))) continue;
    const value = m[1]!;
    const at = m.index + m[0].length - value.length;
    const [start, end] = originalSpan(view, at, at + value.length);
    out.push({ start, end, category: 'person_name', canonical: value.toLowerCase(), priority: 2 });
  }
  return out;
}

/** Every finding of the rules in the view (overlaps are settled by the redactor). */
export function ruleFindings(
  view: SpokenView,
  options: RuleOptions & { keep: string[]; speaker?: 'agent' | 'user' },
): Finding[] {
  return [
    ...emails(view),
    ...ibans(view),
    ...documents(view),
    ...dates(view, options),
    ...digitRuns(view, options),
    ...addresses(view, options.keep),
    ...introducedNames(view, options.speaker),
  ];
}
