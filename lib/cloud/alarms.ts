/**
 * The alarms: what breaks, each notifying the one topic (monitoring.ts), docs/operations.md says what
 * each means and what to do. Errors page on a rate, not on a count: a threshold of "1 in 5 minutes"
 * pages at 10,000 calls for what is noise, and a fixed count misses a quiet function failing every
 * time. A rate alarm is a metric-math expression, `IF(errors >= min, 100 * errors / total, 0)`, against
 * a percentage: `min` keeps a lone failure at a quiet hour from paging, the percentage scales with the
 * traffic. Per function (in the function's own domain stack, so the root template does not grow with
 * the catalog): its error rate, throttle rate and, for the voice relay, its duration near the 29 s cut.
 * In the root stack, beside what they watch: every dead-letter queue (any message), every work queue's
 * oldest message (a backlog), the HTTP API's 5xx rate and p99 latency, the voice relay's integration
 * errors and client errors (throttled or refused frames), and the conversation's own metrics
 * (functions/platform/metrics.ts): the model's error rate, the turn latency's p99, Bedrock's throttles.
 * Plain CDK (cloudwatch.Alarm), not cdk-monitoring-constructs: see docs/operations.md.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { ServiceFunction } from './constructs/service-function.js';
import { RELAY_INTEGRATION_TIMEOUT } from './constructs/voice-relay-api.js';
import type { VoiceAgentStack } from './stack.js';
import { METRICS_NAMESPACE, type MetricName } from '../../functions/platform/metrics.js';
import { QUEUES, delaysMessages, queueKeys, type QueueKey } from '../../functions/platform/resources.js';

/** Five minutes: the period of every alarm but the queues' (one minute). */
export const PERIOD = Duration.minutes(5);

/** A rate alarm: `percent` % or more of `total` failed in five minutes, and at least `min` of them. */
export interface RateThreshold {
  percent: number;
  min: number;
}

/** A function's errors (uncaught or timed out) against its invocations. */
export const FUNCTION_ERRORS: RateThreshold = { percent: 5, min: 3 };
/** A scheduled function runs a few times in five minutes at most: each failed run counts. */
export const SCHEDULED_FUNCTION_ERRORS: RateThreshold = { percent: 5, min: 1 };
/** A function's throttled invocations against all it was asked for (invoked + throttled). */
export const FUNCTION_THROTTLES: RateThreshold = { percent: 1, min: 3 };
/** HTTP API: 5xx answers against all requests. */
export const HTTP_5XX: RateThreshold = { percent: 1, min: 5 };
/** HTTP API: p99 latency (ms) for three five-minute periods running before the alarm. */
export const HTTP_P99_LATENCY_MS = 5000;
/** Voice relay: frames whose function failed or timed out, against all frames. */
export const RELAY_INTEGRATION_ERRORS: RateThreshold = { percent: 1, min: 5 };
/** Voice relay: frames API Gateway refused before the function (throttled: 429; malformed, unauthorised). */
export const RELAY_CLIENT_ERRORS: RateThreshold = { percent: 1, min: 10 };
/** The conversation's model: turns whose model failed (ModelErrors) against model requests. */
export const MODEL_ERRORS: RateThreshold = { percent: 5, min: 3 };
/** Bedrock: throttled invocations of the model against all its invocations (each is retried once). */
export const BEDROCK_THROTTLES: RateThreshold = { percent: 2, min: 5 };
/**
 * Phone calls' turn latency (the caller's prompt → the first text frame) p99, in ms, for three
 * five-minute periods running, over at least TURN_LATENCY_MIN_TURNS turns in each.
 */
export const TURN_LATENCY_P99_MS = 4000;
export const TURN_LATENCY_MIN_TURNS = 20;

/** The voice relay function's Duration alarm: a turn this long is near API Gateway's 29 s cut. */
export const RELAY_DURATION_ALARM_MS = RELAY_INTEGRATION_TIMEOUT.toMilliseconds() - 4000;

/** SQS's longest delay of a message (`DelaySeconds`). */
const SQS_MAX_DELAY_SECONDS = 900;

/**
 * How old a work queue's oldest message may grow before the backlog alarm: what one message can take
 * when its consumer keeps up — its delay (up to 15 minutes on a queue whose senders defer messages),
 * then a receive that failed and the next (two visibility timeouts). Older, for three minutes running,
 * is a consumer that is behind, throttled or not consuming at all.
 */
export const queueAgeAlarmSeconds = (key: QueueKey): number =>
  (delaysMessages(key) ? SQS_MAX_DELAY_SECONDS : 0) + 2 * QUEUES[key].visibilityTimeoutSeconds;

/** An alarm that notifies `topic` when it fires and when it is back to OK; missing data is not trouble. */
function alarm(
  scope: Stack,
  id: string,
  topic: sns.ITopic,
  props: Omit<cloudwatch.AlarmProps, 'treatMissingData' | 'comparisonOperator'>,
): cloudwatch.Alarm {
  const created = new cloudwatch.Alarm(scope, id, {
    ...props,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  const action = new SnsAction(topic);
  created.addAlarmAction(action);
  created.addOkAction(action);
  return created;
}

/**
 * The percentage of `total` that `failed` is, in each five minutes with at least `min` failures (0
 * otherwise; no failures: no data, which is OK). `total` may lack a datapoint (FILL 0); the divisor is
 * never below the failures themselves.
 */
function failureRate(
  failed: cloudwatch.IMetric,
  total: cloudwatch.IMetric,
  threshold: RateThreshold,
  label: string,
  totalIncludesFailed = true,
): cloudwatch.MathExpression {
  const divisor = totalIncludesFailed ? 'MAX([FILL(total, 0), failed])' : '(FILL(total, 0) + failed)';
  return new cloudwatch.MathExpression({
    expression: `IF(failed >= ${threshold.min}, 100 * failed / ${divisor}, 0)`,
    usingMetrics: { failed, total },
    period: PERIOD,
    label,
  });
}

const rateDescription = (what: string, threshold: RateThreshold): string =>
  `${what}: ${threshold.percent}% or more in five minutes (and at least ${threshold.min})`;

/**
 * The error rate and throttle rate of one function (and, for the voice relay's function, its Duration
 * near the 29 s integration cut), created in the function's own stack. `prefix` is the root stack's name.
 */
export function addFunctionAlarms(prefix: string, fn: ServiceFunction, topic: sns.ITopic): void {
  const scope = Stack.of(fn);
  const { id } = fn.spec;
  const sum = { period: PERIOD, statistic: cloudwatch.Stats.SUM };
  const errors = fn.spec.schedule ? SCHEDULED_FUNCTION_ERRORS : FUNCTION_ERRORS;
  alarm(scope, `${id}ErrorsAlarm`, topic, {
    alarmName: `${prefix}-${id}-errors`,
    alarmDescription: `${rateDescription(`${id}'s invocations failed (an uncaught error or a timeout)`, errors)}. docs/operations.md#function-errors`,
    metric: failureRate(fn.metricErrors(sum), fn.metricInvocations(sum), errors, `${id} errors (%)`),
    threshold: errors.percent,
    evaluationPeriods: 1,
  });
  alarm(scope, `${id}ThrottlesAlarm`, topic, {
    alarmName: `${prefix}-${id}-throttles`,
    alarmDescription: `${rateDescription(`${id} was throttled (the account's concurrency is exhausted)`, FUNCTION_THROTTLES)}. docs/operations.md#function-throttles`,
    metric: failureRate(
      fn.metricThrottles(sum),
      fn.metricInvocations(sum),
      FUNCTION_THROTTLES,
      `${id} throttles (%)`,
      false,
    ),
    threshold: FUNCTION_THROTTLES.percent,
    evaluationPeriods: 1,
  });
  if (fn.spec.webSocket) {
    alarm(scope, `${id}DurationAlarm`, topic, {
      alarmName: `${prefix}-${id}-duration-near-relay-timeout`,
      alarmDescription:
        `An invocation of ${id} took ${RELAY_DURATION_ALARM_MS / 1000} s or more: API Gateway cuts the relay's ` +
        `integration at ${RELAY_INTEGRATION_TIMEOUT.toSeconds()} s. docs/operations.md#relay-duration`,
      metric: fn.metricDuration({ period: PERIOD, statistic: cloudwatch.Stats.MAXIMUM }),
      threshold: RELAY_DURATION_ALARM_MS,
      evaluationPeriods: 1,
    });
  }
}

/** One of the service's own metrics (functions/platform/metrics.ts), dimension-free unless `channel`. */
export const serviceMetric = (
  name: MetricName,
  statistic: string,
  options: { label?: string; channel?: string } = {},
): cloudwatch.Metric =>
  new cloudwatch.Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    statistic,
    period: PERIOD,
    label: options.label ?? `${name} ${statistic}`,
    ...(options.channel ? { dimensionsMap: { channel: options.channel } } : {}),
  });

/** The dead-letter and backlog alarms of every queue. */
function addQueueAlarms(stack: VoiceAgentStack, topic: sns.ITopic): cloudwatch.Alarm[] {
  const prefix = stack.stackName;
  const minute = { period: Duration.minutes(1), statistic: cloudwatch.Stats.MAXIMUM };
  return queueKeys.flatMap((key) => {
    const { queue, deadLetterQueue } = stack.queues[key];
    const { name } = QUEUES[key];
    const ageSeconds = queueAgeAlarmSeconds(key);
    return [
      alarm(stack, `${stack.queues[key].node.id}DeadLetterAlarm`, topic, {
        alarmName: `${prefix}-${name}-dead-letters`,
        alarmDescription: `A message of the ${name} queue failed every receive and waits in its dead-letter queue. docs/operations.md#dead-letters`,
        metric: deadLetterQueue.metricApproximateNumberOfMessagesVisible(minute),
        threshold: 1,
        evaluationPeriods: 1,
      }),
      alarm(stack, `${stack.queues[key].node.id}BacklogAlarm`, topic, {
        alarmName: `${prefix}-${name}-backlog`,
        alarmDescription: `The oldest message of the ${name} queue was ${ageSeconds} s old or more for three minutes: its consumer is behind, throttled or stopped. docs/operations.md#queue-backlog`,
        metric: queue.metricApproximateAgeOfOldestMessage(minute),
        threshold: ageSeconds,
        evaluationPeriods: 3,
      }),
    ];
  });
}

/**
 * The root stack's alarms: every queue (dead letters, backlog), the HTTP API, the voice relay's
 * WebSocket API, and the conversation (the model's errors, the turn's latency, Bedrock's throttles).
 */
export function addServiceAlarms(stack: VoiceAgentStack, topic: sns.ITopic): cloudwatch.Alarm[] {
  const prefix = stack.stackName;
  const sum = { period: PERIOD, statistic: cloudwatch.Stats.SUM };
  const relayStage = stack.voiceRelay.stage;
  const frames = relayStage.metric('MessageCount', sum);
  const alarms = addQueueAlarms(stack, topic);
  alarms.push(
    alarm(stack, 'HttpApi5xxAlarm', topic, {
      alarmName: `${prefix}-http-api-5xx`,
      alarmDescription: `${rateDescription('The HTTP API answered 5xx', HTTP_5XX)}. docs/operations.md#http-api-5xx`,
      metric: failureRate(
        stack.httpApi.metricServerError(sum),
        stack.httpApi.metricCount(sum),
        HTTP_5XX,
        'HTTP API 5xx (%)',
      ),
      threshold: HTTP_5XX.percent,
      evaluationPeriods: 1,
    }),
    alarm(stack, 'HttpApiLatencyAlarm', topic, {
      alarmName: `${prefix}-http-api-p99-latency`,
      alarmDescription: `The HTTP API's p99 latency was ${HTTP_P99_LATENCY_MS} ms or more for 15 minutes. docs/operations.md#http-api-latency`,
      metric: stack.httpApi.metricLatency({ period: PERIOD, statistic: cloudwatch.Stats.p(99) }),
      threshold: HTTP_P99_LATENCY_MS,
      evaluationPeriods: 3,
    }),
    alarm(stack, 'VoiceRelayIntegrationErrorsAlarm', topic, {
      alarmName: `${prefix}-voice-relay-integration-errors`,
      alarmDescription: `${rateDescription("The voice relay's frames whose function failed or timed out", RELAY_INTEGRATION_ERRORS)}. docs/operations.md#relay-integration-errors`,
      metric: failureRate(
        relayStage.metric('IntegrationError', sum),
        frames,
        RELAY_INTEGRATION_ERRORS,
        'Relay integration errors (%)',
      ),
      threshold: RELAY_INTEGRATION_ERRORS.percent,
      evaluationPeriods: 1,
    }),
    alarm(stack, 'VoiceRelayClientErrorsAlarm', topic, {
      alarmName: `${prefix}-voice-relay-client-errors`,
      alarmDescription: `${rateDescription("The voice relay's frames refused by API Gateway (throttled, or malformed)", RELAY_CLIENT_ERRORS)}. docs/operations.md#relay-client-errors`,
      metric: failureRate(
        relayStage.metric('ClientError', sum),
        frames,
        RELAY_CLIENT_ERRORS,
        'Relay client errors (%)',
      ),
      threshold: RELAY_CLIENT_ERRORS.percent,
      evaluationPeriods: 1,
    }),
    ...addConversationAlarms(stack, topic),
  );
  return alarms;
}

/** The model's error rate, the phone turns' p99 latency and Bedrock's throttles. */
function addConversationAlarms(stack: VoiceAgentStack, topic: sns.ITopic): cloudwatch.Alarm[] {
  const prefix = stack.stackName;
  const alarms = [
    alarm(stack, 'ModelErrorsAlarm', topic, {
      alarmName: `${prefix}-model-errors`,
      alarmDescription: `${rateDescription("The conversation's model requests failed (callers heard the apology)", MODEL_ERRORS)}. docs/operations.md#model-errors`,
      metric: failureRate(
        serviceMetric('ModelErrors', cloudwatch.Stats.SUM),
        serviceMetric('ModelRequests', cloudwatch.Stats.SUM),
        MODEL_ERRORS,
        'Model errors (% of requests)',
      ),
      threshold: MODEL_ERRORS.percent,
      evaluationPeriods: 1,
    }),
    alarm(stack, 'TurnLatencyAlarm', topic, {
      alarmName: `${prefix}-turn-latency-p99`,
      alarmDescription: `Phone calls' turn latency p99 (the caller's prompt to the agent's first words) was ${TURN_LATENCY_P99_MS} ms or more for 15 minutes. docs/operations.md#turn-latency`,
      metric: new cloudwatch.MathExpression({
        expression: `IF(turns >= ${TURN_LATENCY_MIN_TURNS}, p99, 0)`,
        usingMetrics: {
          turns: serviceMetric('TurnLatency', cloudwatch.Stats.SAMPLE_COUNT, { channel: 'phone' }),
          p99: serviceMetric('TurnLatency', cloudwatch.Stats.p(99), { channel: 'phone' }),
        },
        period: PERIOD,
        label: 'Turn latency p99 (ms), phone',
      }),
      threshold: TURN_LATENCY_P99_MS,
      evaluationPeriods: 3,
    }),
  ];
  const model = stack.languageModel;
  if (model.provider === 'bedrock') {
    const bedrock = (metricName: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/Bedrock',
        metricName,
        dimensionsMap: { ModelId: model.model },
        statistic: cloudwatch.Stats.SUM,
        period: PERIOD,
      });
    alarms.push(
      alarm(stack, 'BedrockThrottlesAlarm', topic, {
        alarmName: `${prefix}-bedrock-throttles`,
        alarmDescription: `${rateDescription(`Bedrock throttled invocations of ${model.model} (its quota is reached)`, BEDROCK_THROTTLES)}. docs/operations.md#bedrock-throttles`,
        metric: failureRate(
          bedrock('InvocationThrottles'),
          bedrock('Invocations'),
          BEDROCK_THROTTLES,
          'Bedrock throttles (%)',
          false,
        ),
        threshold: BEDROCK_THROTTLES.percent,
        evaluationPeriods: 1,
      }),
    );
  }
  return alarms;
}
