/**
 * What a 422 may echo of the caller's input: the 422 body repeats each invalid value (`input`), and an
 * input of any size or depth would make the answer as large as the request (near Lambda's 6 MB
 * response cap) or overflow the stack when serialised. Echoes are cut to these bounds and say so.
 */
export const ECHO_LIMITS = { depth: 4, entries: 20, stringLength: 200 } as const;

/** Marks where an echo was cut: a whole container past the depth, or the entries past the limit. */
export const TRUNCATED = '[truncated]';

/** `value` within ECHO_LIMITS; anything cut is replaced by TRUNCATED (strings end with it). */
export function boundedInput(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    return value.length > ECHO_LIMITS.stringLength
      ? `${value.slice(0, ECHO_LIMITS.stringLength)}…${TRUNCATED}`
      : value;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= ECHO_LIMITS.depth) return TRUNCATED;
  if (Array.isArray(value)) {
    const items = value.slice(0, ECHO_LIMITS.entries).map((item) => boundedInput(item, depth + 1));
    return value.length > ECHO_LIMITS.entries ? [...items, TRUNCATED] : items;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [key, item] of entries.slice(0, ECHO_LIMITS.entries)) out[key] = boundedInput(item, depth + 1);
  if (entries.length > ECHO_LIMITS.entries) out[TRUNCATED] = entries.length - ECHO_LIMITS.entries;
  return out;
}

/**
 * Fields whose values are write-only anywhere in the API (an agent tool's `headers`: API keys of the
 * customer's endpoints): a 422 may name their keys, never show their values.
 */
export const WRITE_ONLY_FIELDS: ReadonlySet<string> = new Set(['headers']);
export const HIDDEN = '[hidden]';

const hideValues = (value: unknown): unknown =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.keys(value).map((key) => [key, HIDDEN]))
    : HIDDEN;

/**
 * An issue's echo without write-only values: at a write-only field (`loc` ends with it) its map's
 * values hidden; inside one (`[…, "headers", name]`) the entry's value hidden (its name may show);
 * above one (a whole tool, the whole list) every write-only field within hidden.
 */
export function withoutWriteOnly(value: unknown, loc: readonly (string | number)[]): unknown {
  const at = loc.findIndex((segment) => typeof segment === 'string' && WRITE_ONLY_FIELDS.has(segment));
  if (at >= 0) {
    if (at === loc.length - 1) return hideValues(value);
    return value === loc[at + 1] ? value : HIDDEN;
  }
  return hideWithin(value, 0);
}

function hideWithin(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object' || depth > ECHO_LIMITS.depth) return value;
  if (Array.isArray(value)) return value.map((item) => hideWithin(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, item]) => [
      key,
      WRITE_ONLY_FIELDS.has(key) ? hideValues(item) : hideWithin(item, depth + 1),
    ]),
  );
}

/** Deepest nesting of arrays/objects in a parsed JSON value, counted without recursion. */
export function jsonDepth(value: unknown, stopAt: number): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    deepest = Math.max(deepest, depth);
    if (deepest > stopAt) return deepest;
    for (const child of Object.values(current as Record<string, unknown>)) stack.push([child, depth + 1]);
  }
  return deepest;
}
