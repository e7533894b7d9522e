import { logger } from './logger.js';
import { errorName } from './programming-errors.js';

/**
 * The service's own CloudWatch metrics, named once: the functions emit them (Powertools metrics, EMF),
 * the CDK app's operations dashboard (lib/cloud/monitoring.ts) graphs them. Each is emitted without
 * dimensions, or with `channel` only (METRIC_DIMENSIONS): the dashboard graphs the dimension-free series
 * and splits the latencies by channel with a search, so a metric emitted under other dimensions (e.g.
 * Powertools' default `service`) would not show.
 */

/** The namespace of every metric below. */
export const METRICS_NAMESPACE = 'VoiceAgentService';

/** The only dimension a metric may carry besides none at all. */
export const METRIC_DIMENSIONS = ['channel'] as const;

/** Metric names and their units. */
export const METRICS = {
  /**
   * The service's time to answer (milliseconds): the caller's prompt frame received → the first text
   * frame of the agent's answer sent (engine/turn.ts; the apology, when the model failed).
   */
  TurnLatency: 'Milliseconds',
  /** Request to the model → its first token (milliseconds). */
  ModelFirstToken: 'Milliseconds',
  /** The service's own share of a turn: the turn latency less the model and the tools (milliseconds). */
  ServicePart: 'Milliseconds',
  /** One tool call of the agent (milliseconds). */
  ToolDuration: 'Milliseconds',
  /** The caller spoke over the agent (count). */
  Interruptions: 'Count',
  /** A model request of a turn (count): what ModelErrors is a rate of (the model-errors alarm). */
  ModelRequests: 'Count',
  /** A turn whose model request failed (count; a LanguageModelError, the caller hears the apology). */
  ModelErrors: 'Count',
  /**
   * A call's write that met a concurrent one (a callback, the relay's end, the recording) and was
   * tried again (count; functions/calling/lifecycle.ts): a busy call's or workspace's contention.
   */
  CallWriteConflicts: 'Count',
} as const;

export type MetricName = keyof typeof METRICS;

export type MetricChannel = 'phone' | 'web' | 'evaluation';
type MetricListener = (name: MetricName, value: number, channel: MetricChannel | undefined) => void;

const listeners: MetricListener[] = [];

/** Told of every value recorded in this process (the local stack's GET /_local/metrics). */
export function onMetric(listener: MetricListener): void {
  listeners.push(listener);
}

interface EmfMetrics {
  addMetric(name: string, unit: string, value: number): unknown;
  addDimension(name: string, value: string): unknown;
  clearDefaultDimensions(): void;
  publishStoredMetrics(): unknown;
}
let emf: Promise<EmfMetrics> | undefined;

/** Powertools metrics (EMF on stdout), loaded on the first value: only functions that record pay for it. */
function cloudMetrics(): Promise<EmfMetrics> {
  emf ??= import('@aws-lambda-powertools/metrics').then(({ Metrics }) => {
    const metrics = new Metrics({ namespace: METRICS_NAMESPACE });
    // No `service` dimension: the dashboard graphs the dimension-free series (and `channel`).
    metrics.clearDefaultDimensions();
    return metrics as unknown as EmfMetrics;
  });
  return emf;
}

/**
 * Records values of the service's metrics: in the cloud as EMF lines (once without dimensions, once
 * by `channel` when given), locally to the listeners. Never throws: a metric lost is not a turn lost.
 */
export function recordMetrics(values: Partial<Record<MetricName, number>>, channel?: MetricChannel): void {
  const entries = Object.entries(values).filter(
    (entry): entry is [MetricName, number] => typeof entry[1] === 'number' && Number.isFinite(entry[1]),
  );
  if (entries.length === 0) return;
  for (const [name, value] of entries) for (const listener of listeners) listener(name, value, channel);
  if (process.env.STAGE !== 'cloud') return;
  void cloudMetrics()
    .then((metrics) => {
      for (const dimensions of channel ? [undefined, channel] : [undefined]) {
        if (dimensions) metrics.addDimension('channel', dimensions);
        for (const [name, value] of entries) metrics.addMetric(name, METRICS[name], value);
        metrics.publishStoredMetrics();
      }
    })
    .catch((error: unknown) => logger.warn('metrics not published', { error: errorName(error) }));
}
