/**
 * Where the service catches a fault so that a caller never notices it (a tool failing mid-call, the
 * model failing the call analysis), a bug of ours would be caught with it and hidden. A programming
 * error — a TypeError (but fetch's network failure, which carries a `cause`), ReferenceError,
 * SyntaxError or RangeError — is therefore thrown on where it happened when the code runs under the
 * tests (Jest's NODE_ENV, or SURFACE_PROGRAMMING_ERRORS=1 in the local stack the tests start), so a
 * test fails; in service it is logged at error level by the catcher and handled as the fault it looks
 * like.
 */
export function isProgrammingError(error: unknown): boolean {
  if (error instanceof TypeError) return (error as { cause?: unknown }).cause === undefined;
  return error instanceof ReferenceError || error instanceof SyntaxError || error instanceof RangeError;
}

export function surfaceProgrammingErrorInTests(error: unknown): void {
  const underTest = process.env.NODE_ENV === 'test' || process.env.SURFACE_PROGRAMMING_ERRORS === '1';
  if (underTest && isProgrammingError(error)) throw error;
}

/** An error's class, for a log line: never its message, which may quote personal data. */
export const errorName = (error: unknown): string =>
  error instanceof Error ? error.name : typeof error === 'string' ? 'string' : 'unknown';
