/** A problem the developer can fix (missing Java, stack already running): shown as one line, no stack trace. */
export class LocalStackError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LocalStackError';
  }
}
