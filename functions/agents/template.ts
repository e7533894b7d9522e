/**
 * `{{name}}` references in an agent's texts: its prompt and greeting (filled from a call's
 * `parameters`) and its post-call SMS templates (call parameters, agent_name, summary, caller, …).
 * A name is letters, digits, `_`, `.` and `-`. A reference without a value becomes empty text (the
 * agent never says "{{name}}" out loud), and only the values' own properties are values: a
 * `{{constructor}}`, `{{toString}}` or `{{__proto__}}` is no way into the object's prototype.
 */
const REFERENCE = /\{\{\s*([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*\}\}/g;

export function renderTemplate(text: string, values: Readonly<Record<string, string | undefined>>): string {
  return (
    text
      .replace(REFERENCE, (_, name: string) => (Object.hasOwn(values, name) ? (values[name] ?? '') : ''))
      // What an empty reference leaves behind: a double space, a space before punctuation.
      .replace(/[ \t]{2,}/g, ' ')
      .replace(/ ([,.!?])/g, '$1')
  );
}

/** The parameter names a prompt or greeting refers to. */
export function referencedParameters(text: string): string[] {
  return [...new Set([...text.matchAll(REFERENCE)].map((m) => m[1]))];
}
