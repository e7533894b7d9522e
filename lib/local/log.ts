/** The local stack's own console output (not the handlers' structured logs). */

const useColour = process.stdout.isTTY === true && !process.env.NO_COLOR;
const paint = (code: number, text: string) => (useColour ? `\u001b[${code}m${text}\u001b[0m` : text);

export const bold = (text: string) => paint(1, text);
export const dim = (text: string) => paint(2, text);
export const green = (text: string) => paint(32, text);

/** One line on stdout, prefixed so it stands apart from JSON logs. */
export function say(message: string): void {
  process.stdout.write(`${dim('[local]')} ${message}\n`);
}

/** One line on stderr, for problems of the local stack itself. */
export function warn(message: string, error?: unknown): void {
  const detail =
    error instanceof Error ? `: ${error.stack ?? error.message}` : error ? `: ${String(error)}` : '';
  process.stderr.write(`[local] ${message}${detail}\n`);
}

/** A name padded to a column, for the start-up listing. */
export const label = (name: string, width = 20) => name.padEnd(width);
