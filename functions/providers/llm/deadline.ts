import { LanguageModelError } from './port.js';

export interface DeadlineOptions {
  /** No first piece of the answer within this many milliseconds: `timeout`. */
  firstTokenMs: number;
  /** The whole request, first byte to last: `timeout`. */
  totalMs: number;
}

/**
 * One model request's deadlines and the caller's signal, as one AbortSignal for fetch or the SDK: the
 * first-token timer stops at `started()`, the whole-request timer at `dispose()`. After an abort,
 * `failure()` says why (the caller's signal: `aborted`; a timer: `timeout`).
 */
export class Deadline {
  private readonly controller = new AbortController();
  private cause: LanguageModelError | undefined;
  private firstToken: NodeJS.Timeout | undefined;
  private readonly total: NodeJS.Timeout;
  private readonly onCallerAbort = () =>
    this.stop(new LanguageModelError('The request was aborted', 'aborted'));

  constructor(
    private readonly caller: AbortSignal | undefined,
    options: DeadlineOptions,
  ) {
    this.firstToken = setTimeout(
      () =>
        this.stop(
          new LanguageModelError(`No answer from the model within ${options.firstTokenMs} ms`, 'timeout'),
        ),
      options.firstTokenMs,
    );
    this.total = setTimeout(
      () =>
        this.stop(new LanguageModelError(`The model did not finish within ${options.totalMs} ms`, 'timeout')),
      options.totalMs,
    );
    if (caller?.aborted) this.onCallerAbort();
    else caller?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The first piece of the answer arrived. */
  started(): void {
    clearTimeout(this.firstToken);
    this.firstToken = undefined;
  }

  /** Why the request was stopped, when it was (throw it instead of the transport's own error). */
  failure(): LanguageModelError | undefined {
    return this.cause;
  }

  /** Throws the stop's reason, if stopped. */
  check(): void {
    if (this.cause) throw this.cause;
  }

  dispose(): void {
    clearTimeout(this.firstToken);
    clearTimeout(this.total);
    this.caller?.removeEventListener('abort', this.onCallerAbort);
  }

  private stop(cause: LanguageModelError): void {
    if (this.cause) return;
    this.cause = cause;
    this.dispose();
    this.controller.abort(cause);
  }
}
