import * as z from 'zod';
import { schemaOnFirstUse } from '../platform/first-use.js';

/** Call analytics: counts of calls over a range of days, grouped by day, agent or status. */
export const GROUP_BY = ['day', 'agent', 'status', 'agent_version'] as const;
export type GroupBy = (typeof GROUP_BY)[number];
/** The longest range: a year (a leap year's 366 days). */
export const MAX_RANGE_DAYS = 366;
export const DEFAULT_RANGE_DAYS = 30;

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const isDay = (value: string): boolean => {
  if (!DAY.test(value)) return false;
  const parsed = new Date(`${value}T00:00:00Z`);
  return Number.isFinite(parsed.getTime()) && parsed.toISOString().slice(0, 10) === value;
};
const Day = schemaOnFirstUse(() =>
  z.string().max(10).refine(isDay, { message: 'must be a date, YYYY-MM-DD' }),
);

export const dayNumber = (day: string): number => Date.parse(`${day}T00:00:00Z`) / 86_400_000;

export const CallAnalyticsQuery = schemaOnFirstUse(() =>
  z
    .object({
      /** The first day (in the workspace's time zone), YYYY-MM-DD; default 29 days before `to`. */
      from: Day.optional(),
      /** The last day, included; default today in the workspace's time zone. */
      to: Day.optional(),
      agent_id: z.string().max(64).optional(),
      group_by: z.enum(GROUP_BY).default('day'),
    })
    .superRefine((query, ctx) => {
      if (!query.from || !query.to || !isDay(query.from) || !isDay(query.to)) return;
      const span = dayNumber(query.to) - dayNumber(query.from) + 1;
      if (span < 1) ctx.addIssue({ code: 'custom', path: ['to'], message: 'to must not be before from' });
      else if (span > MAX_RANGE_DAYS)
        ctx.addIssue({
          code: 'custom',
          path: ['to'],
          message: `the range may span at most ${MAX_RANGE_DAYS} days`,
        });
    }),
);
export type CallAnalyticsQuery = z.infer<typeof CallAnalyticsQuery>;

export const CallAnalyticsItem = schemaOnFirstUse(() =>
  z.object({
    /**
     * The day (YYYY-MM-DD), the agent's id, the status (completed, failed), or for `agent_version`
     * the agent's id and the version, `<agent_id>#<version>`.
     */
    key: z.string(),
    /** `group_by=agent_version` only: the agent and the version the calls ran. */
    agent_id: z.string().optional(),
    agent_version: z.number().int().optional(),
    calls: z.number().int(),
    /** Calls that were answered (connected). */
    answered: z.number().int(),
    completed: z.number().int(),
    failed: z.number().int(),
    total_seconds: z.number().int(),
    /** total_seconds over the answered calls (0 when none), to one decimal. */
    average_seconds: z.number(),
    credits: z.number(),
    sentiment: z.object({
      positive: z.number().int(),
      neutral: z.number().int(),
      negative: z.number().int(),
    }),
    /** Calls with a post-call analysis. */
    analysed: z.number().int(),
    /** Calls whose post-call analysis says `call_successful`. */
    successful: z.number().int(),
    /** successful over analysed, 0 to 1 to three decimals; null when no call was analysed. */
    success_rate: z.number().nullable(),
    /** answered over calls, 0 to 1 to three decimals; null when there were no calls. */
    answer_rate: z.number().nullable(),
    /**
     * Calls handed over from the group: whose conversation handed the caller to another agent at least
     * once (a call counts once, on its own agent, however many handoffs it had).
     */
    handoffs: z.number().int(),
    /**
     * The agent's turn latency (the caller's words in → the agent's first words out) over the calls'
     * turns: how many turns, and the median from fixed histogram buckets kept on write (to within a
     * bucket: 100 ms up to 1 s, 200 ms up to 2 s, wider above); null without turns.
     */
    turn_latency: z.object({ turns: z.number().int(), p50_ms: z.number().int().nullable() }),
  }),
);

export const CallAnalyticsResponse = schemaOnFirstUse(() =>
  z.object({
    group_by: z.enum(GROUP_BY),
    from: z.string(),
    to: z.string(),
    /** The workspace's time zone: the days' boundaries. */
    timezone: z.string(),
    items: z.array(CallAnalyticsItem),
    /** The whole range (of the agent when asked), as one item with key `total`. */
    totals: CallAnalyticsItem,
  }),
);
export type CallAnalyticsResponse = z.infer<typeof CallAnalyticsResponse>;
