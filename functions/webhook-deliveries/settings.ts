import { maxAttemptsFor, parseRetrySchedule } from './retry.js';

/** The webhook retry settings of docs/api.md, parsed once per value (read from the environment at use). */
let scheduleCache: { raw: string; schedule: number[] } | undefined;

export function retrySchedule(): number[] {
  const raw = process.env.WEBHOOK_RETRY_SCHEDULE ?? '';
  if (scheduleCache?.raw !== raw) scheduleCache = { raw, schedule: parseRetrySchedule(raw) };
  return scheduleCache.schedule;
}

export const maxAttempts = (): number => maxAttemptsFor(retrySchedule());
