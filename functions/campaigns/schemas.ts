import * as z from 'zod';
import { labelText } from '../platform/validation.js';
import { isTimeZone } from '../platform/time-zones.js';
import { ImportSummary } from '../contacts/schemas.js';
import { ListQuery, pageOf } from '../platform/pagination.js';
import { isE164 } from '../platform/phone.js';
import {
  ATTEMPT_OUTCOMES,
  BATCH_CONTACT_STATES,
  CAMPAIGN_STATUSES,
  MAX_CONCURRENCY,
  RETRYABLE_OUTCOMES,
  WEEKDAYS,
} from './model.js';
import { schemaOnFirstUse } from '../platform/first-use.js';

/**
 * Request and response shapes of the campaign routes. Bodies are strict (an unknown field is 422).
 * `max_concurrency` above the workspace's `concurrent_call_limit`, and an agent that cannot call
 * (no number, a `from_phone` that is not its), are checked by the service against the records.
 */

const clock = () =>
  z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, { message: 'must be a time of day, HH:MM (24-hour)' });

const Hours = schemaOnFirstUse(() =>
  z
    .strictObject({
      start: clock().meta({ examples: ['09:00'] }),
      end: clock().meta({ examples: ['17:00'] }),
    })
    .refine((h) => h.end > h.start, { message: 'end must be after start', path: ['end'] }),
);

export const CallingWindowBody = schemaOnFirstUse(() =>
  z
    .strictObject({
      timezone: z
        .string()
        .min(1)
        .max(64)
        .refine((value) => value === 'recipient' || isTimeZone(value), {
          message: 'timezone must be "recipient" or an IANA time zone name',
        }),
      days: z
        .array(z.enum(WEEKDAYS))
        .min(1)
        .max(7)
        .refine((days) => new Set(days).size === days.length, { message: 'each day may appear once' }),
      start: clock().meta({ examples: ['09:00'] }),
      end: clock().meta({ examples: ['17:00'] }),
      day_hours: z.partialRecord(z.enum(WEEKDAYS), Hours).optional(),
    })
    .refine((w) => w.end > w.start, { message: 'end must be after start', path: ['end'] }),
);

export const RetryBody = schemaOnFirstUse(() =>
  z.strictObject({
    max_attempts: z.number().int().min(1).max(5).default(2),
    delay_minutes: z.number().int().min(5).max(1440).default(60),
    on: z
      .array(z.enum(RETRYABLE_OUTCOMES))
      .max(3)
      .refine((on) => new Set(on).size === on.length, { message: 'each outcome may appear once' })
      .default(['busy', 'no_answer', 'failed']),
  }),
);

const e164 = z.string().refine(isE164, { message: 'value is not a valid phone number in E.164 format' });
const name = () => labelText().min(1).max(200);

export const CreateCampaignBody = schemaOnFirstUse(() =>
  z.strictObject({
    name: name(),
    agent_id: z.string().min(1).max(64),
    from_phone: e164.nullish(),
    calling_window: CallingWindowBody.optional(),
    retry: RetryBody.optional(),
    max_concurrency: z.number().int().min(1).max(MAX_CONCURRENCY).optional(),
    /** A voicemail (a machine answered) is tried again under `retry`; default false: the contact is done. */
    retry_on_voicemail: z.boolean().optional(),
  }),
);
export type CreateCampaignBody = z.infer<typeof CreateCampaignBody>;

export const UpdateCampaignBody = schemaOnFirstUse(() =>
  z
    .strictObject({
      status: z.enum(['running', 'paused', 'cancelled']).optional(),
      name: name().optional(),
      calling_window: CallingWindowBody.optional(),
      retry: RetryBody.optional(),
      max_concurrency: z.number().int().min(1).max(MAX_CONCURRENCY).optional(),
      retry_on_voicemail: z.boolean().optional(),
    })
    .refine((body) => Object.keys(body).length > 0, { message: 'nothing to change' }),
);
export type UpdateCampaignBody = z.infer<typeof UpdateCampaignBody>;

export const CampaignProgress = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    total: z.number().int(),
    pending: z.number().int(),
    calling: z.number().int(),
    completed: z.number().int(),
    failed: z.number().int(),
    skipped: z.number().int(),
    retry_scheduled: z.number().int(),
    cancelled: z.number().int(),
    /** Attempts that ended on a machine (answering-machine detection: the agent's `voicemail`). */
    voicemail: z.number().int(),
    credits_used: z.number(),
  }),
);

export const CampaignResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    workspace_id: z.string(),
    name: z.string(),
    agent_id: z.string(),
    from_phone: z.string().nullable(),
    calling_window: z.object({
      timezone: z.string(),
      days: z.array(z.enum(WEEKDAYS)),
      start: z.string(),
      end: z.string(),
      day_hours: z.partialRecord(z.enum(WEEKDAYS), z.object({ start: z.string(), end: z.string() })),
    }),
    retry: z.object({
      max_attempts: z.number().int(),
      delay_minutes: z.number().int(),
      on: z.array(z.enum(RETRYABLE_OUTCOMES)),
    }),
    max_concurrency: z.number().int(),
    /** Whether a contact whose attempt reached a machine is dialled again (under `retry`). */
    retry_on_voicemail: z.boolean(),
    status: z.enum(CAMPAIGN_STATUSES),
    /** Why the dialer paused it (credits ran out, the agent lost its number), else null. */
    paused_reason: z.string().nullable(),
    progress: CampaignProgress,
    created_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    /**
     * When the campaign dials its first waiting contact: now when one is due, else when the calling
     * window opens for it or its retry is due; null when it dials no more or is not running.
     */
    next_dial_at: z.string().nullable(),
    /**
     * Why then, or why not: "due now", "due now, once a line is free", "window opens 09:00
     * Australia/Perth" (its weekday when not today there), "retry after no answer", "no contact
     * waiting", "paused (…)", "not started: set status running"; null once it has ended.
     */
    next_dial_reason: z.string().nullable(),
    /**
     * Parameters of the agent's prompt that rows of its uploads lacked: those contacts are called
     * with the parameter empty (as start-call does). Per upload job, newest first: its first 100 rows
     * (numbered from 1 after the header) and how many.
     */
    warnings: z.array(
      z.object({
        job_id: z.string(),
        parameter: z.string(),
        rows: z.array(z.number().int()),
        count: z.number().int(),
      }),
    ),
  }),
);

export const CampaignListQuery = schemaOnFirstUse(() =>
  ListQuery.extend({ status: z.enum(CAMPAIGN_STATUSES).optional() }),
);
export const CampaignList = pageOf(CampaignResponse);

export const BatchContactResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    campaign_id: z.string(),
    contact_id: z.string().nullable(),
    phone: z.string(),
    parameters: z.record(z.string(), z.string()),
    state: z.enum(BATCH_CONTACT_STATES),
    attempts: z.array(
      z.object({ call_id: z.string(), at: z.string(), outcome: z.enum(ATTEMPT_OUTCOMES).nullable() }),
    ),
    next_attempt_at: z.string().nullable(),
    /** Why it was skipped or failed without a call (do-not-call, suppressed, unsubscribed), else null. */
    reason: z.string().nullable(),
  }),
);
export const BatchContactListQuery = schemaOnFirstUse(() =>
  ListQuery.extend({ state: z.enum(BATCH_CONTACT_STATES).optional() }),
);
export const BatchContactList = pageOf(BatchContactResponse);

/** An upload: `{format: csv, file_name?}` for an upload_url, or the CSV itself as a text/csv body. */
export const CreateUploadBody = schemaOnFirstUse(() =>
  z.strictObject({
    format: z.literal('csv').default('csv'),
    file_name: labelText().min(1).max(255).optional(),
  }),
);

const JobCounts = schemaOnFirstUse(() =>
  z.object({
    total: z.number().int(),
    created: z.number().int(),
    merged: z.number().int(),
    rejected: z.number().int(),
  }),
);

export const CampaignJobResponse = schemaOnFirstUse(() =>
  z.object({
    id: z.string(),
    job_id: z.string(),
    campaign_id: z.string(),
    /** `upload`: a CSV became batch contacts; `run`: the campaign's calls (from its start). */
    kind: z.enum(['upload', 'run']),
    file_name: z.string().nullable(),
    status: z.enum(['pending', 'processing', 'completed', 'failed']),
    /** As a contact import's (a run job's: contacts done of the total). */
    progress: ImportSummary.unwrap().shape.progress,
    counts: JobCounts,
    errors: z.array(z.object({ row: z.number().int(), reason: z.string() })).optional(),
    /**
     * An upload's rows that lacked a `{{parameter}}` of the agent's prompt (taken, the parameter left
     * empty): per parameter, the first 100 rows and how many (with `errors`, on the job's own route).
     */
    warnings: z
      .array(z.object({ parameter: z.string(), rows: z.array(z.number().int()), count: z.number().int() }))
      .optional(),
    failure_reason: z.string().nullable(),
    created_at: z.string(),
    completed_at: z.string().nullable(),
  }),
);
export const CreatedUploadResponse = schemaOnFirstUse(() =>
  CampaignJobResponse.unwrap().extend({ upload_url: z.string().optional() }),
);
export const CampaignJobList = schemaOnFirstUse(() =>
  z.object({ items: z.array(CampaignJobResponse), next_cursor: z.null() }),
);
