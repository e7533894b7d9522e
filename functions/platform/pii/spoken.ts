/**
 * A text as speech-to-text writes it, seen the way a person would read the values in it: number
 * words become digits (`oh four one two` → `0 4 1 2`, `double four` → `4 4`, `twenty three` →
 * `2 3`, `nineteen eighty two` → `19 8 2`, ordinals `fifth` → `5`), `at` / `dot` / `underscore` /
 * `dash` become `@ . _ -`. Every character of the view knows the span of the original it came from,
 * so a value found in the view is cut from the original.
 */

const UNITS: Record<string, string> = {
  zero: '0',
  nought: '0',
  nil: '0',
  one: '1',
  two: '2',
  three: '3',
  four: '4',
  five: '5',
  six: '6',
  seven: '7',
  eight: '8',
  nine: '9',
};
const TEENS: Record<string, string> = {
  ten: '10',
  eleven: '11',
  twelve: '12',
  thirteen: '13',
  fourteen: '14',
  fifteen: '15',
  sixteen: '16',
  seventeen: '17',
  eighteen: '18',
  nineteen: '19',
};
const TENS: Record<string, string> = {
  twenty: '2',
  thirty: '3',
  forty: '4',
  fifty: '5',
  sixty: '6',
  seventy: '7',
  eighty: '8',
  ninety: '9',
};
const ORDINALS: Record<string, string> = {
  first: '1',
  second: '2',
  third: '3',
  fourth: '4',
  fifth: '5',
  sixth: '6',
  seventh: '7',
  eighth: '8',
  ninth: '9',
  tenth: '10',
  eleventh: '11',
  twelfth: '12',
  thirteenth: '13',
  fourteenth: '14',
  fifteenth: '15',
  sixteenth: '16',
  seventeenth: '17',
  eighteenth: '18',
  nineteenth: '19',
  twentieth: '20',
  thirtieth: '30',
};
const SYMBOLS: Record<string, string> = {
  at: '@',
  dot: '.',
  underscore: '_',
  dash: '-',
  hyphen: '-',
};
/** Letters that stand for zero only among digits ("oh four one two"; not "oh, I see"). */
const ZERO_LETTERS = new Set(['oh', 'o']);

export interface SpokenView {
  /** The view's text. */
  text: string;
  /** For each character of the view, the original span [start, end) it came from. */
  from: Int32Array;
  to: Int32Array;
}

interface Token {
  text: string;
  start: number;
  end: number;
}

const TOKEN = /[A-Za-z]+|\d+|\s+|[^A-Za-z\d\s]/g;

const isNumberWord = (word: string) =>
  word in UNITS || word in TEENS || word in TENS || word in ORDINALS || ZERO_LETTERS.has(word);
const isDigitish = (token: Token | undefined) =>
  !!token &&
  (/^\d+$/.test(token.text) ||
    isNumberWord(token.text.toLowerCase()) ||
    /^(?:double|triple)$/i.test(token.text));

/** The view of a text (see the module's comment). Pure; linear in the text's length. */
export function spokenView(original: string): SpokenView {
  const tokens: Token[] = [];
  for (const m of original.matchAll(TOKEN))
    tokens.push({ text: m[0], start: m.index, end: m.index + m[0].length });
  // Only texts with words to read differently need the work: the rest view themselves.
  let out = '';
  const from: number[] = [];
  const to: number[] = [];
  const emit = (value: string, token: Token) => {
    out += value;
    for (let i = 0; i < value.length; i += 1) {
      from.push(token.start);
      to.push(token.end);
    }
  };
  const neighbour = (i: number, step: 1 | -1): Token | undefined => {
    let j = i + step;
    while (tokens[j] && /^[\s,]+$/.test(tokens[j]!.text)) j += step;
    return tokens[j];
  };
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i]!;
    const word = token.text.toLowerCase();
    if (!/^[a-z]+$/.test(word)) {
      if (/^\d+$/.test(token.text) || /^\s+$/.test(token.text) || token.text.length === 1) {
        for (let k = 0; k < token.text.length; k += 1) {
          out += token.text[k];
          from.push(token.start + k);
          to.push(token.start + k + 1);
        }
      } else emit(token.text, token);
      continue;
    }
    if (word in UNITS) emit(UNITS[word]!, token);
    else if (word in TEENS) emit(TEENS[word]!, token);
    else if (word in ORDINALS) emit(ORDINALS[word]!, token);
    else if (word in TENS) {
      // "twenty three" → 2 3; "twenty" alone → 20.
      const next = neighbour(i, 1);
      const joined = next && next.text.toLowerCase() in UNITS && next.start === token.end + 1;
      const ordinalNext = next && next.text.toLowerCase() in ORDINALS && next.start === token.end + 1;
      emit(joined || ordinalNext ? TENS[word]! : `${TENS[word]!}0`, token);
    } else if (ZERO_LETTERS.has(word) && (isDigitish(neighbour(i, 1)) || isDigitish(neighbour(i, -1))))
      emit('0', token);
    else if ((word === 'double' || word === 'triple') && neighbour(i, 1)) {
      const next = neighbour(i, 1)!.text.toLowerCase();
      const digit = UNITS[next] ?? (ZERO_LETTERS.has(next) ? '0' : /^\d$/.test(next) ? next : undefined);
      if (digit) emit(word === 'double' ? digit : `${digit} ${digit}`, token);
      else emit(token.text, token);
    } else if (word in SYMBOLS) emit(SYMBOLS[word]!, token);
    else emit(token.text, token);
  }
  return { text: out, from: Int32Array.from(from), to: Int32Array.from(to) };
}

/** The original span of the view's characters [start, end). */
export const originalSpan = (view: SpokenView, start: number, end: number): [number, number] => [
  view.from[start]!,
  view.to[end - 1]!,
];
