import { config } from '../platform/config.js';
import { parseAllowedHosts, type AllowedHost } from './allow-list.js';
import { maxAttemptsFor, parseRetrySchedule } from './retry.js';

/**
 * The webhook settings of docs/api.md, parsed once per value. They are read from the environment at use
 * (not frozen at the first config() call) because the local stack adds its demo receiver to
 * WEBHOOK_ALLOWED_HOSTS when that service starts.
 */
let allowedCache: { raw: string; hosts: AllowedHost[] } | undefined;
let scheduleCache: { raw: string; schedule: number[] } | undefined;

export function allowedHosts(): AllowedHost[] {
  const raw = process.env.WEBHOOK_ALLOWED_HOSTS ?? '';
  if (allowedCache?.raw !== raw) allowedCache = { raw, hosts: parseAllowedHosts(raw) };
  return allowedCache.hosts;
}

export function retrySchedule(): number[] {
  const raw = process.env.WEBHOOK_RETRY_SCHEDULE ?? '';
  if (scheduleCache?.raw !== raw) scheduleCache = { raw, schedule: parseRetrySchedule(raw) };
  return scheduleCache.schedule;
}

export const maxAttempts = (): number => maxAttemptsFor(retrySchedule());

/** Customer webhooks must be https in the cloud (docs/api.md); locally http is fine. */
export const requireHttps = (): boolean => config().STAGE === 'cloud';
