/**
 * When a webhook attempt is retried, and after how long. Pure rules, no I/O.
 *
 * The schedule is the `WEBHOOK_RETRY_SCHEDULE` setting (docs/api.md): comma-separated seconds between
 * attempts. The default waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: eight attempts spread
 * over 27.6 hours. Each wait is stretched by a random 0–20 % (jitter), never shortened, so the
 * attempts of many deliveries spread out and the whole schedule always spans at least its nominal
 * length.
 */

export const DEFAULT_RETRY_SCHEDULE_SECONDS = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000] as const;

/** Share of a wait added at random, at most. */
export const JITTER_RATIO = 0.2;

/** A `Retry-After` longer than this is capped (the delivery would otherwise stall for days). */
export const MAX_RETRY_AFTER_SECONDS = 24 * 3600;

/** Parses `WEBHOOK_RETRY_SCHEDULE`; an empty or unset value is the default. Invalid values throw. */
export function parseRetrySchedule(value: string | undefined): number[] {
  if (value === undefined || value.trim() === '') return [...DEFAULT_RETRY_SCHEDULE_SECONDS];
  const parts = value.split(',').map((part) => part.trim());
  const seconds = parts.map((part) => Number(part));
  if (parts.some((part) => part === '') || seconds.some((s) => !Number.isFinite(s) || s < 0)) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE must be comma-separated non-negative seconds, got "${value}"`);
  }
  return seconds;
}

/** Attempts the schedule allows: the first one plus one per wait. */
export const maxAttemptsFor = (schedule: readonly number[]): number => schedule.length + 1;

/** Seconds to wait after scheduled attempt `attempt` (1-based) failed, before jitter. */
export function nominalDelaySeconds(schedule: readonly number[], attempt: number): number | undefined {
  return schedule[attempt - 1];
}

/** `seconds` stretched by jitter: `random` in [0, 1) → [seconds, seconds × 1.2). */
export const withJitter = (seconds: number, random: number = Math.random()): number =>
  seconds * (1 + JITTER_RATIO * Math.min(Math.max(random, 0), 0.999_999));

/**
 * A `Retry-After` header in seconds: delta-seconds or an HTTP date (RFC 9110). Unparseable → undefined.
 */
export function parseRetryAfter(header: string | undefined, now: Date): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text), MAX_RETRY_AFTER_SECONDS);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, Math.ceil((at - now.getTime()) / 1000)), MAX_RETRY_AFTER_SECONDS);
}

/** What one attempt came to, as far as retrying is concerned. */
export type AttemptOutcome =
  | { kind: 'succeeded' }
  /** Worth trying again (timeouts, network errors, 3xx, 5xx, 408, 409, 429). */
  | { kind: 'retryable'; retryAfterSeconds?: number }
  /** 410 Gone: the endpoint is disabled and the workspace told. */
  | { kind: 'gone' }
  /** Another 4xx: the receiver refused this payload; trying again would not change that. */
  | { kind: 'rejected' }
  /** Never sent: the address is not allowed (SSRF protection) or the URL is unusable. */
  | { kind: 'refused' };

const RETRYABLE_4XX = new Set([408, 409, 429]);

/** Classifies an HTTP status code (undefined: no response — timeout or network error). */
export function classifyStatus(statusCode: number | undefined, retryAfterSeconds?: number): AttemptOutcome {
  if (statusCode === undefined) return { kind: 'retryable' };
  if (statusCode >= 200 && statusCode < 300) return { kind: 'succeeded' };
  if (statusCode === 410) return { kind: 'gone' };
  if (statusCode >= 400 && statusCode < 500 && !RETRYABLE_4XX.has(statusCode)) return { kind: 'rejected' };
  // 1xx/3xx (redirects are never followed), 408, 409, 429, 5xx.
  return { kind: 'retryable', ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) };
}

export type NextStep =
  | { kind: 'succeeded' }
  | { kind: 'retry'; delaySeconds: number }
  | { kind: 'dead'; reason: 'exhausted' | 'rejected' | 'gone' | 'refused' };

/**
 * After scheduled attempt `attempt` (1-based) with `outcome`: done, retry after how long (the
 * schedule's wait with jitter, or the receiver's `Retry-After` when that is longer), or dead.
 */
export function nextStep(
  outcome: AttemptOutcome,
  attempt: number,
  schedule: readonly number[],
  random: number = Math.random(),
): NextStep {
  switch (outcome.kind) {
    case 'succeeded':
      return { kind: 'succeeded' };
    case 'gone':
    case 'rejected':
    case 'refused':
      return { kind: 'dead', reason: outcome.kind };
    case 'retryable': {
      const nominal = nominalDelaySeconds(schedule, attempt);
      if (nominal === undefined) return { kind: 'dead', reason: 'exhausted' };
      const delay = Math.max(withJitter(nominal, random), outcome.retryAfterSeconds ?? 0);
      return { kind: 'retry', delaySeconds: Math.round(delay * 1000) / 1000 };
    }
  }
}

/** SQS delays a message at most 15 minutes: longer waits are re-enqueued until due. */
export const MAX_SQS_DELAY_SECONDS = 900;

export function sqsDelayFor(dueAt: Date, now: Date): number {
  const seconds = Math.ceil((dueAt.getTime() - now.getTime()) / 1000);
  return Math.min(MAX_SQS_DELAY_SECONDS, Math.max(0, seconds));
}
