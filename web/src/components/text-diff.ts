/**
 * A word-level diff of two texts (the longest common subsequence of their words and spaces), for
 * showing how a prompt changed between two versions. Texts too long for a word diff are compared
 * line by line.
 */
export interface DiffPart {
  kind: 'same' | 'added' | 'removed';
  text: string;
}

/** Past this many cells (words × words), lines are compared instead of words. */
const MAX_CELLS = 4_000_000;

const tokens = (text: string, byLine: boolean): string[] =>
  byLine ? text.split(/(?<=\n)/) : (text.match(/\s+|[^\s]+/g) ?? []);

export function diffText(before: string, after: string): DiffPart[] {
  let a = tokens(before, false);
  let b = tokens(after, false);
  if (a.length * b.length > MAX_CELLS) {
    a = tokens(before, true);
    b = tokens(after, true);
  }
  if (a.length * b.length > MAX_CELLS)
    return [
      { kind: 'removed', text: before },
      { kind: 'added', text: after },
    ];
  // lcs[i][j]: the common length of a[i..] and b[j..], in one flat array.
  const width = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i -= 1)
    for (let j = b.length - 1; j >= 0; j -= 1)
      lcs[i * width + j] =
        a[i] === b[j]
          ? lcs[(i + 1) * width + j + 1] + 1
          : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
  const parts: DiffPart[] = [];
  const push = (kind: DiffPart['kind'], text: string) => {
    const last = parts.at(-1);
    if (last?.kind === kind) last.text += text;
    else parts.push({ kind, text });
  };
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      push('same', a[i]);
      i += 1;
      j += 1;
    } else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) {
      push('removed', a[i]);
      i += 1;
    } else {
      push('added', b[j]);
      j += 1;
    }
  }
  while (i < a.length) push('removed', a[i++]);
  while (j < b.length) push('added', b[j++]);
  return parts;
}
