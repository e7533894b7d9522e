import { displayCredits } from '../billing/credits.js';
import {
  LATENCY_COUNTERS,
  dayKey,
  localDay,
  percentileFromBuckets,
  readCallStats,
  type CallStats,
} from '../calling/service.js';
import { STATS_STATUSES, type StatsStatus } from '../calling/service.js';
import { clock } from '../platform/clock.js';
import { isId } from '../platform/ids.js';
import {
  DEFAULT_RANGE_DAYS,
  dayNumber,
  type CallAnalyticsQuery,
  type CallAnalyticsResponse,
} from './schemas.js';

/**
 * Call analytics from the counters calling keeps on write (calling/call-stats.ts): one Query of the
 * range's day items (`DAY#<from>` … `DAY#<to>#~`, the days' totals and each agent's days), summed as
 * asked. Never a scan of the call log.
 */

type Item = CallAnalyticsResponse['items'][number];

interface Totals {
  calls: number;
  answered: number;
  completed: number;
  failed: number;
  seconds: number;
  units: number;
  positive: number;
  neutral: number;
  negative: number;
  analysed: number;
  successful: number;
  /** Calls handed over to another agent (counted on the call's own, first agent). */
  handoffs: number;
  /** Turns per latency bucket (LATENCY_COUNTERS' order). */
  latency: number[];
}

const zero = (): Totals => ({
  calls: 0,
  answered: 0,
  completed: 0,
  failed: 0,
  seconds: 0,
  units: 0,
  positive: 0,
  neutral: 0,
  negative: 0,
  analysed: 0,
  successful: 0,
  handoffs: 0,
  latency: LATENCY_COUNTERS.map(() => 0),
});

/** Adds one counter item's figures (of one status, or of both) to the totals. */
function add(totals: Totals, stats: CallStats, statuses: readonly StatsStatus[] = STATS_STATUSES): void {
  for (const s of statuses) {
    const n = (measure: string) => Number((stats as Record<string, unknown>)[`${s}${measure}`] ?? 0);
    totals.calls += n('Calls');
    totals[s] += n('Calls');
    totals.answered += n('Answered');
    totals.seconds += n('Seconds');
    totals.units += n('Units');
    totals.positive += n('Positive');
    totals.neutral += n('Neutral');
    totals.negative += n('Negative');
    totals.analysed += n('Analysed');
    totals.successful += n('Successful');
    totals.handoffs += n('Handoffs');
  }
  // Latency buckets are kept per item, not per status: added once, with the item.
  if (statuses.length === STATS_STATUSES.length) {
    LATENCY_COUNTERS.forEach((counter, i) => {
      totals.latency[i] = (totals.latency[i] ?? 0) + Number((stats as Record<string, unknown>)[counter] ?? 0);
    });
  }
}

const rate = (part: number, whole: number): number | null =>
  whole > 0 ? Math.round((part / whole) * 1000) / 1000 : null;

export function toItem(key: string, t: Totals): Item {
  return {
    key,
    calls: t.calls,
    answered: t.answered,
    completed: t.completed,
    failed: t.failed,
    total_seconds: t.seconds,
    average_seconds: t.answered > 0 ? Math.round((t.seconds / t.answered) * 10) / 10 : 0,
    credits: displayCredits(t.units),
    sentiment: { positive: t.positive, neutral: t.neutral, negative: t.negative },
    analysed: t.analysed,
    successful: t.successful,
    success_rate: rate(t.successful, t.analysed),
    answer_rate: rate(t.answered, t.calls),
    handoffs: t.handoffs,
    turn_latency: {
      turns: t.latency.reduce((a, b) => a + b, 0),
      p50_ms: percentileFromBuckets(t.latency, 50),
    },
  };
}

const dayOf = (n: number): string => new Date(n * 86_400_000).toISOString().slice(0, 10);

export async function callAnalytics(
  workspace: { workspaceId: string; timezone?: string },
  query: CallAnalyticsQuery,
): Promise<CallAnalyticsResponse> {
  const timezone = workspace.timezone ?? 'UTC';
  const to =
    query.to ??
    (query.from ? dayOf(dayNumber(query.from) + DEFAULT_RANGE_DAYS - 1) : localDay(clock.now(), timezone));
  const from = query.from ?? dayOf(dayNumber(to) - DEFAULT_RANGE_DAYS + 1);
  const base = { group_by: query.group_by, from, to, timezone };
  if (query.agent_id !== undefined && !isId('agent', query.agent_id)) {
    return {
      ...base,
      items:
        query.group_by === 'agent' || query.group_by === 'agent_version'
          ? []
          : emptyItems(query.group_by, from, to),
      totals: toItem('total', zero()),
    };
  }
  const stats = await readCallStats(workspace.workspaceId, from, to);
  // The days' totals, or one agent's days when asked for one agent; every agent's days for group_by=agent.
  // An agent's days, and apart from them its versions' days (each call is in both).
  const agentItems = stats.filter((s) => s.agentId !== undefined && s.agentVersion === undefined);
  const inRange = (s: CallStats) => s.day !== undefined && s.day >= from && s.day <= to;
  // The range's totals: the days' totals, or the agent's days.
  const totals = zero();
  for (const s of query.agent_id !== undefined
    ? agentItems.filter((s) => s.agentId === query.agent_id)
    : stats.filter((s) => s.statKey === dayKey(s.day ?? ''))) {
    if (inRange(s)) add(totals, s);
  }
  const answer = (items: Item[]): CallAnalyticsResponse => ({
    ...base,
    items,
    totals: toItem('total', totals),
  });
  if (query.group_by === 'agent_version') return answer(byVersion(stats, query.agent_id));
  const relevant =
    query.group_by === 'agent'
      ? agentItems.filter((s) => query.agent_id === undefined || s.agentId === query.agent_id)
      : query.agent_id !== undefined
        ? agentItems.filter((s) => s.agentId === query.agent_id)
        : stats.filter((s) => s.statKey === dayKey(s.day ?? ''));

  if (query.group_by === 'day') {
    const byDay = new Map<string, Totals>();
    for (let n = dayNumber(from); n <= dayNumber(to); n += 1) byDay.set(dayOf(n), zero());
    for (const s of relevant) if (s.day && byDay.has(s.day)) add(byDay.get(s.day) as Totals, s);
    return answer([...byDay].map(([day, t]) => toItem(day, t)));
  }
  if (query.group_by === 'status') {
    return answer(
      STATS_STATUSES.map((status) => {
        const t = zero();
        for (const s of relevant) add(t, s, [status]);
        return toItem(status, t);
      }),
    );
  }
  const byAgent = new Map<string, Totals>();
  for (const s of relevant) {
    const agentId = s.agentId as string;
    if (!byAgent.has(agentId)) byAgent.set(agentId, zero());
    add(byAgent.get(agentId) as Totals, s);
  }
  return answer(
    [...byAgent]
      .map(([agentId, t]) => toItem(agentId, t))
      .sort((a, b) => b.calls - a.calls || a.key.localeCompare(b.key)),
  );
}

/** Every agent version's totals (of one agent when asked), by agent then version. */
function byVersion(stats: CallStats[], agentId: string | undefined): Item[] {
  const totals = new Map<string, { agentId: string; version: number; totals: Totals }>();
  for (const s of stats) {
    if (s.agentId === undefined || s.agentVersion === undefined) continue;
    if (agentId !== undefined && s.agentId !== agentId) continue;
    const key = `${s.agentId}#${s.agentVersion}`;
    let entry = totals.get(key);
    if (!entry) totals.set(key, (entry = { agentId: s.agentId, version: s.agentVersion, totals: zero() }));
    add(entry.totals, s);
  }
  return [...totals]
    .sort(([, a], [, b]) => a.agentId.localeCompare(b.agentId) || a.version - b.version)
    .map(([key, entry]) => ({
      ...toItem(key, entry.totals),
      agent_id: entry.agentId,
      agent_version: entry.version,
    }));
}

function emptyItems(groupBy: 'day' | 'status', from: string, to: string): Item[] {
  if (groupBy === 'status') return STATS_STATUSES.map((s) => toItem(s, zero()));
  const items: Item[] = [];
  for (let n = dayNumber(from); n <= dayNumber(to); n += 1) items.push(toItem(dayOf(n), zero()));
  return items;
}
