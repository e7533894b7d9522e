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
  /** Caller stopped speaking → first audio of the agent's answer (milliseconds). */
  TurnLatency: 'Milliseconds',
  /** Request to the model → its first token (milliseconds). */
  ModelFirstToken: 'Milliseconds',
  /** The service's own share of a turn: the turn latency less the model and the tools (milliseconds). */
  ServicePart: 'Milliseconds',
  /** One tool call of the agent (milliseconds). */
  ToolDuration: 'Milliseconds',
  /** The caller spoke over the agent (count). */
  Interruptions: 'Count',
  /** A model request that failed (count). */
  ModelErrors: 'Count',
} as const;

export type MetricName = keyof typeof METRICS;
