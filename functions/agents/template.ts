/**
 * `{{name}}` references in an agent's prompt and greeting, filled from a call's `parameters`.
 * A reference without a value becomes empty text (the agent never says "{{name}}" out loud).
 */
const REFERENCE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

export function renderTemplate(text: string, parameters: Record<string, string>): string {
  return text
    .replace(REFERENCE, (_, name: string) =>
      Object.prototype.hasOwnProperty.call(parameters, name) ? parameters[name] : '',
    )
    .replace(/[ \t]{2,}/g, ' ')
    .replace(/ ([,.!?])/g, '$1');
}

/** The parameter names a prompt or greeting refers to. */
export function referencedParameters(text: string): string[] {
  return [...new Set([...text.matchAll(REFERENCE)].map((m) => m[1]))];
}
