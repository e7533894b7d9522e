/**
 * The values campaigns take, apart from the entities (routes and schemas import these; nothing here
 * builds an ElectroDB entity).
 */
export const CAMPAIGN_STATUSES = ['draft', 'running', 'paused', 'completed', 'cancelled'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export const BATCH_CONTACT_STATES = [
  'pending',
  'calling',
  'retry_scheduled',
  'completed',
  'failed',
  'skipped_dnc',
  'cancelled',
] as const;
export type BatchContactState = (typeof BATCH_CONTACT_STATES)[number];

/** A call's outcome as a campaign sees it (`retry.on` names the ones tried again). */
export const ATTEMPT_OUTCOMES = ['completed', 'busy', 'no_answer', 'failed', 'voicemail'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];
export const RETRYABLE_OUTCOMES = ['busy', 'no_answer', 'failed'] as const;
export type RetryableOutcome = (typeof RETRYABLE_OUTCOMES)[number];

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface CallingWindow {
  /** `recipient`: the contact's timezone, else its number's region's, else the workspace's. */
  timezone: string;
  days: Weekday[];
  /** `HH:MM`, 24-hour; `end` after `start`. */
  start: string;
  end: string;
  /** Other hours on some of `days` (the default's Saturday closes at 17:00). */
  day_hours?: Partial<Record<Weekday, { start: string; end: string }>>;
}

export interface RetryPolicy {
  max_attempts: number;
  delay_minutes: number;
  on: RetryableOutcome[];
}

/** The ACMA telemarketing hours: weekdays 09:00–20:00 and Saturday 09:00–17:00, the recipient's time. */
export const DEFAULT_CALLING_WINDOW: CallingWindow = {
  timezone: 'recipient',
  days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'],
  start: '09:00',
  end: '20:00',
  day_hours: { sat: { start: '09:00', end: '17:00' } },
};

export const DEFAULT_RETRY: RetryPolicy = {
  max_attempts: 2,
  delay_minutes: 60,
  on: ['busy', 'no_answer', 'failed'],
};

export const DEFAULT_MAX_CONCURRENCY = 5;
export const MAX_CONCURRENCY = 100;
