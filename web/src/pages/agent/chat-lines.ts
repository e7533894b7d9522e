/** The test chat's lines as the relay's frames build them (test-chat.tsx). */

/** One line of the test chat: the user's, the agent's (streaming until `done`), or a tool the agent used. */
export type Line =
  | { kind: 'user'; text: string }
  | { kind: 'agent'; text: string; done: boolean }
  | { kind: 'tool'; name: string; args: string; ok: boolean }
  | { kind: 'note'; text: string };

/**
 * A streamed token added to the lines: to the agent line still streaming (a tool the agent used
 * meanwhile, e.g. end_call, comes between its words and their closing `last`), else a new agent line;
 * never an empty line.
 */
export function withToken(current: Line[], token: string, last: boolean): Line[] {
  const index = current.findLastIndex((line) => line.kind === 'agent' && !line.done);
  const streaming = current[index];
  if (streaming?.kind === 'agent') {
    const text = streaming.text + token;
    if (text === '' && last) return current.filter((_, i) => i !== index);
    return current.map((line, i) => (i === index ? { kind: 'agent', text, done: last } : line));
  }
  if (token === '' && last) return current;
  return [...current, { kind: 'agent', text: token, done: last }];
}

/** The conversation is over: no line is still streaming (its closing `last` will not come). */
export const allDone = (current: Line[]): Line[] =>
  current.map((line) => (line.kind === 'agent' && !line.done ? { ...line, done: true } : line));
