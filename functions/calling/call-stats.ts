import { WorkspaceEntity } from '../access/entities.js';
import { billedSeconds, callUnits, chargeCallUsage, memoriesUnits } from '../billing/metering.js';
import { logger } from '../platform/logger.js';
import type { EntityItem } from 'electrodb';
import { latencyAdds } from './latency-histogram.js';
import { wasHandedOver } from './handoffs.js';
import {
  CallEntity,
  CallStatsEntity,
  callingService,
  type Call,
  type StatsCounter,
  type StatsStatus,
} from './entities.js';
import { CALL_SHARDS, callKey, callShardOf } from './call-shards.js';
import { queryStoredItems } from '../platform/table.js';

/**
 * The analytics counters of calls, kept on write and exactly once per call (the analytics domain
 * reads them; a range of days is one Query, never a scan of the call log):
 *
 * - a call is counted when it is charged (lifecycle's finishCall), in the ledger's transaction of the
 *   charge — or, a missed call, when it is logged — in the same transaction that marks it counted
 *   (`statsDay`, conditional: not yet set), so a repeated callback, a sweeper pass or a redelivered
 *   message never counts it twice;
 * - its sentiment (and its analysis: `Analysed`, `Successful` when the analysis says `call_successful`)
 *   is counted when the post-call pipeline stores it, in the same transaction that stores it on the
 *   call (conditional: no sentiment yet);
 * - a call whose recorded conversation handed the caller to another agent adds to `Handoffs` once
 *   (countHandoffs: when it has ended and its conversation is in, whichever comes last; conditional
 *   on the call's `handoffsCounted` not yet set), on its own (first) agent's and version's counters;
 * - its turns' latencies are added to the day's latency buckets (latency-histogram.ts) when its
 *   conversation is recorded, in a transaction that marks the call (`latencyDay`, conditional: not yet
 *   set), so a conversation recorded again never counts twice.
 *
 * A call counts on the day it was created in the workspace's time zone (the time zone when the call
 * was created, which the call keeps: changing the time zone later moves no call), and under its final
 * status, `completed` or `failed` (the call log's `created_at` and `status`).
 */

export const dayKey = (day: string): string => `DAY#${day}`;
export const agentDayKey = (day: string, agentId: string): string => `DAY#${day}#AGENT#${agentId}`;
/** An agent version's day (analytics `group_by=agent_version`). */
export const agentVersionDayKey = (day: string, agentId: string, version: number): string =>
  `${agentDayKey(day, agentId)}#VERSION#${version}`;

/** The calendar day (YYYY-MM-DD) of an instant in a time zone. */
export function localDay(at: string | Date, timezone: string): string {
  const instant = typeof at === 'string' ? new Date(at) : at;
  try {
    return new Intl.DateTimeFormat('en-CA', {
      timeZone: timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    }).format(instant);
  } catch {
    return instant.toISOString().slice(0, 10);
  }
}

export async function workspaceTimezone(workspaceId: string): Promise<string> {
  const { data } = await WorkspaceEntity.get({ workspaceId }).go();
  return data?.timezone ?? 'UTC';
}

const MAX_CONFLICT_RETRIES = 8;

/**
 * Runs a transaction, again while it is cancelled only by conflicts (concurrent calls of a workspace
 * add to the same day's counters: DynamoDB refuses a transaction on an item another one is writing).
 * Returns whether it applied; false when a condition failed.
 */
export async function writeRetryingConflicts(
  write: () => Promise<{ canceled: boolean; data: { code?: string }[] }>,
): Promise<boolean> {
  for (let attempt = 0; ; attempt += 1) {
    const result = await write();
    if (!result.canceled) return true;
    const codes = result.data.map((d) => d.code ?? 'None');
    if (codes.includes('ConditionalCheckFailed')) return false;
    if (!codes.includes('TransactionConflict') || attempt >= MAX_CONFLICT_RETRIES) {
      throw new Error(`transaction cancelled: ${JSON.stringify(codes)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 20 * 2 ** Math.min(attempt, 4)));
  }
}

async function readCall(workspaceId: string, callId: string): Promise<Call | undefined> {
  const { data } = await CallEntity.get(callKey(workspaceId, callId)).go({ consistent: true });
  return data ?? undefined;
}

const statsStatus = (call: Pick<Call, 'status'>): StatsStatus =>
  call.status === 'completed' ? 'completed' : 'failed';

/** What one call adds to its day's and its agent's counters. */
export function callAdds(
  call: Pick<Call, 'status' | 'connectedAt' | 'inprogressAt' | 'durationSeconds'>,
  units: number,
): Partial<Record<StatsCounter, number>> {
  const s = statsStatus(call);
  const answered = call.connectedAt !== undefined || call.inprogressAt !== undefined;
  return {
    [`${s}Calls`]: 1,
    [`${s}Answered`]: answered ? 1 : 0,
    [`${s}Seconds`]: Math.max(0, Math.floor(call.durationSeconds ?? 0)),
    [`${s}Units`]: units,
  };
}

type CountingWrites = Parameters<Parameters<typeof callingService.transaction.write>[0]>[0];

/**
 * The counter updates of a call (its day, its agent's day, and its agent version's day when the call
 * records one) for a transaction.
 */
export function counterUpdates(
  entities: CountingWrites,
  input: { workspaceId: string; callId: string; agentId: string; day: string; agentVersion?: number },
  counts: Partial<Record<StatsCounter, number>> | Record<string, number>,
) {
  // Latency bucket counters are named at run time (latency-histogram.ts); they are the entity's attributes.
  const adds = counts as Partial<Record<StatsCounter, number>>;
  const { callStats } = entities;
  const { agentVersion } = input;
  // The call's shard of the counters: every count of one call goes to the same shard.
  const shard = { workspaceId: input.workspaceId, statsShard: callShardOf(input.callId) };
  return [
    ...(agentVersion !== undefined
      ? [
          callStats
            .update({ ...shard, statKey: agentVersionDayKey(input.day, input.agentId, agentVersion) })
            .add(adds)
            .set({ day: input.day, agentId: input.agentId, agentVersion })
            .commit(),
        ]
      : []),
    callStats
      .update({ ...shard, statKey: dayKey(input.day) })
      .add(adds)
      .set({ day: input.day })
      .commit(),
    callStats
      .update({ ...shard, statKey: agentDayKey(input.day, input.agentId) })
      .add(adds)
      .set({ day: input.day, agentId: input.agentId })
      .commit(),
  ];
}

/**
 * The day a call is counted on: its creation day in the workspace's time zone as the call keeps it
 * from its creation (`statsTimezone`; an older call reads the workspace's).
 */
async function countDay(call: Pick<Call, 'workspaceId' | 'createdAt' | 'statsTimezone'>): Promise<string> {
  return localDay(call.createdAt, call.statsTimezone ?? (await workspaceTimezone(call.workspaceId)));
}

/** The call marked counted (`chargedUnits`, `statsDay`: conditional, not yet set) and its counters. */
const countingWrites = (call: Call, units: number, day: string) => (entities: CountingWrites) => [
  entities.call
    .patch(callKey(call.workspaceId, call.callId))
    .set({ chargedUnits: units, statsDay: day })
    .where((attr, op) => op.notExists(attr.statsDay))
    .commit(),
  ...counterUpdates(entities, { ...call, day }, callAdds(call, units)),
];

/**
 * Charges a finished call and counts it, once, in one transaction: the ledger's (the charge under its
 * cause key, billing/metering.ts) with the call marked counted and its counters (`alsoWrite`). A call
 * with nothing to charge is only counted. Returns the call as it stands after.
 */
export async function chargeAndCountCall(call: Call): Promise<Call> {
  const day = await countDay(call);
  if (call.chargedUnits !== undefined) return countFinishedCall(call, call.chargedUnits, day);
  const seconds = billedSeconds(call.durationSeconds ?? 0);
  const units = callUnits(seconds) + (call.memoriesUsed === true ? memoriesUnits(seconds) : 0);
  if (units === 0) return countFinishedCall(call, 0, day);
  const charged = await chargeCallUsage({
    organisationId: call.organisationId,
    callId: call.callId,
    billableSeconds: call.durationSeconds ?? 0,
    memoriesUsed: call.memoriesUsed === true,
    alsoWrite: callingService.transaction.write(countingWrites(call, units, day)).params().TransactItems,
  });
  if (charged.units !== units)
    logger.error('call charge and count differ', { callId: call.callId, charged: charged.units, units });
  if (charged.call.applied || charged.memories?.applied)
    return { ...call, chargedUnits: units, statsDay: day };
  // Charged already (by another run, with its count; or by an older one without): counted once here.
  return countFinishedCall(call, units, day);
}

/**
 * Records a finished call's charge (`chargedUnits`) and counts it, once: the call's `statsDay` is
 * set under the condition that it was not. Returns the call as it stands after.
 */
export async function countFinishedCall(call: Call, units: number, day?: string): Promise<Call> {
  const countedOn = day ?? (await countDay(call));
  const applied = await writeRetryingConflicts(() =>
    callingService.transaction.write(countingWrites(call, units, countedOn)).go(),
  );
  if (applied) return { ...call, chargedUnits: units, statsDay: countedOn };
  // Counted already: another run got there first.
  return (await readCall(call.workspaceId, call.callId)) ?? call;
}

const sentimentLabel = (sentiment: unknown): 'Positive' | 'Neutral' | 'Negative' | undefined => {
  const label = (sentiment as { label?: unknown } | null)?.label;
  if (label === 'positive') return 'Positive';
  if (label === 'neutral') return 'Neutral';
  if (label === 'negative') return 'Negative';
  return undefined;
};

/**
 * Stores the post-call pipeline's sentiment (and analysis) on the call and counts its label, once (conditional on
 * the call having none yet). A call not counted (made before the counters) only stores it.
 */
export async function storeCallSentiment(
  workspaceId: string,
  callId: string,
  sentiment: unknown,
  analysis?: unknown,
  /** The call as the caller has just read it (consistently): not read again. */
  read?: Call,
): Promise<void> {
  const call = read ?? (await readCall(workspaceId, callId));
  if (!call) return;
  if (call.sentiment !== undefined) return;
  const label = sentimentLabel(sentiment);
  const successful = (analysis as { call_successful?: unknown } | null | undefined)?.call_successful;
  const analysed = typeof successful === 'boolean';
  // Counted only with a sentiment label: the condition (no sentiment yet) is what makes it once.
  if (!call.statsDay || !label) {
    await CallEntity.patch(callKey(workspaceId, callId))
      .set({ sentiment, ...(analysis !== undefined ? { analysis } : {}) })
      .go({ response: 'none' });
    return;
  }
  const day = call.statsDay;
  const applied = await writeRetryingConflicts(() =>
    callingService.transaction
      .write((entities) => [
        entities.call
          .patch(callKey(workspaceId, callId))
          .set({ sentiment, ...(analysis !== undefined ? { analysis } : {}) })
          .where((attr, op) => op.notExists(attr.sentiment))
          .commit(),
        ...counterUpdates(
          entities,
          { workspaceId, callId, agentId: call.agentId, day, agentVersion: call.agentVersion },
          {
            [`${statsStatus(call)}${label}`]: 1,
            ...(analysed
              ? {
                  [`${statsStatus(call)}Analysed`]: 1,
                  [`${statsStatus(call)}Successful`]: successful ? 1 : 0,
                }
              : {}),
          },
        ),
      ])
      .go(),
  );
  if (!applied) logger.info('sentiment already stored and counted', { callId });
}

/**
 * Adds a conversation's turn latencies (milliseconds) to the latency buckets of the call's day (its
 * day, its agent's, its version's), once: the call's `latencyDay` is set under the condition that it
 * was not. The day is the one the call is counted on (its creation day in the workspace's time zone).
 */
export async function countTurnLatencies(
  call: Pick<
    Call,
    'workspaceId' | 'callId' | 'agentId' | 'agentVersion' | 'createdAt' | 'statsDay' | 'statsTimezone'
  >,
  latenciesMs: readonly number[],
): Promise<boolean> {
  if (latenciesMs.length === 0) return false;
  const day = call.statsDay ?? (await countDay(call));
  const applied = await writeRetryingConflicts(() =>
    callingService.transaction
      .write((entities) => [
        entities.call
          .patch(callKey(call.workspaceId, call.callId))
          .set({ latencyDay: day })
          .where((attr, op) => op.notExists(attr.latencyDay))
          .commit(),
        ...counterUpdates(
          entities,
          {
            workspaceId: call.workspaceId,
            callId: call.callId,
            agentId: call.agentId,
            day,
            agentVersion: call.agentVersion,
          },
          latencyAdds(latenciesMs),
        ),
      ])
      .go(),
  );
  if (!applied) logger.info('turn latencies already counted', { callId: call.callId });
  return applied;
}

/**
 * Counts a counted call (`statsDay` set) in its day's `Handoffs` when its recorded conversation has a
 * handoff, once: the call's `handoffsCounted` is set under the condition that it was not. Calls made
 * before the counter are counted when their conversation is recorded again, never twice.
 */
export async function countHandoffs(call: Call): Promise<boolean> {
  if (call.statsDay === undefined || call.handoffsCounted === true || !wasHandedOver(call)) return false;
  const day = call.statsDay;
  const applied = await writeRetryingConflicts(() =>
    callingService.transaction
      .write((entities) => [
        entities.call
          .patch(callKey(call.workspaceId, call.callId))
          .set({ handoffsCounted: true })
          .where((attr, op) => op.notExists(attr.handoffsCounted))
          .commit(),
        ...counterUpdates(
          entities,
          {
            workspaceId: call.workspaceId,
            callId: call.callId,
            agentId: call.agentId,
            day,
            agentVersion: call.agentVersion,
          },
          { [`${statsStatus(call)}Handoffs`]: 1 },
        ),
      ])
      .go(),
  );
  if (!applied) logger.info('handoffs already counted', { callId: call.callId });
  return applied;
}

export type CallStats = EntityItem<typeof CallStatsEntity>;

/**
 * The counter items of a range of days (inclusive): the days' totals and each agent's days, one Query
 * a shard and one of the legacy key, in parallel (pages followed; a page holds ~3,000 items, a 90-day
 * range with 30 agents), each statKey's shards summed into one item as the single key held it.
 */
export async function readCallStats(workspaceId: string, from: string, to: string): Promise<CallStats[]> {
  const shards = await Promise.all([
    ...Array.from({ length: CALL_SHARDS }, async (_, statsShard) => {
      const { data } = await CallStatsEntity.query
        .byWorkspace({ workspaceId, statsShard })
        .between({ statKey: dayKey(from) }, { statKey: `${dayKey(to)}#~` })
        .go({ pages: 'all' });
      return data;
    }),
    readLegacyCallStats(workspaceId, from, to),
  ]);
  const summed = new Map<string, CallStats>();
  for (const item of shards.flat()) {
    const into = summed.get(item.statKey);
    if (!into) summed.set(item.statKey, { ...item, statsShard: 0 });
    else
      for (const [name, value] of Object.entries(item))
        if (typeof value === 'number' && name !== 'agentVersion' && name !== 'statsShard') {
          const sum = into as Record<string, unknown>;
          sum[name] = ((sum[name] as number | undefined) ?? 0) + value;
        }
  }
  return [...summed.values()].sort((a, b) => (a.statKey < b.statKey ? -1 : a.statKey > b.statKey ? 1 : 0));
}

/** The counters written before they were sharded, at `WS#<ws>#CALLSTATS` (days before the change). */
async function readLegacyCallStats(workspaceId: string, from: string, to: string): Promise<CallStats[]> {
  const items: CallStats[] = [];
  let next: Record<string, unknown> | undefined;
  do {
    const page = await queryStoredItems({
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
      ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
      ExpressionAttributeValues: {
        ':pk': `WS#${workspaceId}#CALLSTATS`,
        ':from': dayKey(from),
        ':to': `${dayKey(to)}#~`,
      },
      ...(next ? { ExclusiveStartKey: next } : {}),
    });
    for (const item of page.items) {
      const parsed = CallStatsEntity.parse({ Item: { ...item, statsShard: 0 } }).data as CallStats | null;
      if (parsed) items.push(parsed);
    }
    next = page.next;
  } while (next);
  return items;
}
