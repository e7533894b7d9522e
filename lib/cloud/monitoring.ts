/**
 * What tells an operator about trouble: one SNS topic every alarm notifies (e-mailed to `alarmEmail` when
 * set), an alarm on every dead-letter queue, on the HTTP API's 5xx and latency and on the voice relay's
 * integration errors (in the root stack, beside what they watch), an Errors and a Throttles alarm on every
 * function (in the function's own domain stack, so the root template does not grow with the catalog), and
 * one CloudWatch dashboard. Plain CDK (cloudwatch.Alarm on the resources' metrics), not
 * cdk-monitoring-constructs: the library creates every alarm in its facade's scope, which would put all
 * the functions' alarms in one template; docs/operations.md says what each alarm means and what to do.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { ServiceFunction } from './constructs/service-function.js';
import { RELAY_INTEGRATION_TIMEOUT } from './constructs/voice-relay-api.js';
import type { VoiceAgentStack } from './stack.js';
import { METRICS_NAMESPACE, type MetricName } from '../../functions/platform/metrics.js';
import { QUEUES, queueKeys } from '../../functions/platform/resources.js';

/** Five minutes: the period of every alarm but the dead-letter queues' (one minute). */
const PERIOD = Duration.minutes(5);

/** The relay function's Duration alarm: a turn this long is near API Gateway's 29 s cut. */
export const RELAY_DURATION_ALARM_MS = RELAY_INTEGRATION_TIMEOUT.toMilliseconds() - 4000;

/** HTTP API: 5xx responses in five minutes before the alarm. */
export const HTTP_5XX_THRESHOLD = 5;
/** HTTP API: p99 latency (ms) for three five-minute periods running before the alarm. */
export const HTTP_P99_LATENCY_MS = 5000;
/** Voice relay: integration errors (the relay function failed or timed out) in five minutes. */
export const RELAY_INTEGRATION_ERRORS_THRESHOLD = 5;

/**
 * The topic every alarm notifies (alarm and back to OK). Encrypted with its own key, which CloudWatch may
 * use to publish; e-mailed to `email` when given (the subscriber confirms from the first message).
 */
export function addAlarmTopic(stack: Stack, email: string | undefined): sns.Topic {
  const key = new kms.Key(stack, 'AlarmTopicKey', {
    description: `${stack.stackName}: encrypts the alarm topic`,
    enableKeyRotation: true,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  key.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
  const topic = new sns.Topic(stack, 'AlarmTopic', {
    displayName: `${stack.stackName} alarms`,
    masterKey: key,
    enforceSSL: true,
  });
  if (email) topic.addSubscription(new EmailSubscription(email));
  return topic;
}

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
 * Errors and Throttles of one function (and, for the voice relay's function, its Duration near the 29 s
 * integration cut), created in the function's own stack. `prefix` is the root stack's name.
 */
export function addFunctionAlarms(prefix: string, fn: ServiceFunction, topic: sns.ITopic): void {
  const scope = Stack.of(fn);
  const { id } = fn.spec;
  alarm(scope, `${id}ErrorsAlarm`, topic, {
    alarmName: `${prefix}-${id}-errors`,
    alarmDescription: `${id} failed (an uncaught error or a timeout). docs/operations.md#function-errors`,
    metric: fn.metricErrors({ period: PERIOD, statistic: cloudwatch.Stats.SUM }),
    threshold: 1,
    evaluationPeriods: 1,
  });
  alarm(scope, `${id}ThrottlesAlarm`, topic, {
    alarmName: `${prefix}-${id}-throttles`,
    alarmDescription: `${id} was throttled (the account's concurrency is exhausted). docs/operations.md#function-throttles`,
    metric: fn.metricThrottles({ period: PERIOD, statistic: cloudwatch.Stats.SUM }),
    threshold: 1,
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

/** The root stack's alarms: every dead-letter queue, the HTTP API and the voice relay's WebSocket API. */
export function addServiceAlarms(stack: VoiceAgentStack, topic: sns.ITopic): cloudwatch.Alarm[] {
  const prefix = stack.stackName;
  const alarms: cloudwatch.Alarm[] = [];
  for (const key of queueKeys) {
    const { deadLetterQueue } = stack.queues[key];
    alarms.push(
      alarm(stack, `${stack.queues[key].node.id}DeadLetterAlarm`, topic, {
        alarmName: `${prefix}-${QUEUES[key].name}-dead-letters`,
        alarmDescription: `A message of the ${QUEUES[key].name} queue failed every receive and waits in its dead-letter queue. docs/operations.md#dead-letters`,
        metric: deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(1),
          statistic: cloudwatch.Stats.MAXIMUM,
        }),
        threshold: 1,
        evaluationPeriods: 1,
      }),
    );
  }
  alarms.push(
    alarm(stack, 'HttpApi5xxAlarm', topic, {
      alarmName: `${prefix}-http-api-5xx`,
      alarmDescription: `The HTTP API answered ${HTTP_5XX_THRESHOLD} or more 5xx in five minutes. docs/operations.md#http-api-5xx`,
      metric: stack.httpApi.metricServerError({ period: PERIOD, statistic: cloudwatch.Stats.SUM }),
      threshold: HTTP_5XX_THRESHOLD,
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
      alarmDescription: `The voice relay's function failed or timed out ${RELAY_INTEGRATION_ERRORS_THRESHOLD} or more times in five minutes. docs/operations.md#relay-integration-errors`,
      metric: stack.voiceRelay.stage.metric('IntegrationError', {
        period: PERIOD,
        statistic: cloudwatch.Stats.SUM,
      }),
      threshold: RELAY_INTEGRATION_ERRORS_THRESHOLD,
      evaluationPeriods: 1,
    }),
  );
  return alarms;
}

/** One of the service's own metrics (functions/platform/metrics.ts), without dimensions. */
const serviceMetric = (name: MetricName, statistic: string, label?: string): cloudwatch.Metric =>
  new cloudwatch.Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    statistic,
    period: PERIOD,
    label: label ?? `${name} ${statistic}`,
  });

/** One line per channel of a service metric (those emitted with the `channel` dimension). */
const byChannel = (name: MetricName, statistic: string): cloudwatch.MathExpression =>
  new cloudwatch.MathExpression({
    expression: `SEARCH('{${METRICS_NAMESPACE},channel} MetricName="${name}"', '${statistic}', ${PERIOD.toSeconds()})`,
    usingMetrics: {},
    label: `${name} ${statistic}`,
    period: PERIOD,
  });

const WIDE = 12;
const HEIGHT = 6;

/**
 * The operations dashboard: the conversation's latencies (the service's own metrics), the APIs, the
 * queues and their dead letters, the functions' errors and throttles, and the root stack's alarms.
 */
export function addOperationsDashboard(
  stack: VoiceAgentStack,
  alarms: cloudwatch.IAlarm[],
): cloudwatch.Dashboard {
  const functions = Object.values(stack.functions);
  const graph = (
    title: string,
    left: cloudwatch.IMetric[],
    extra: Partial<cloudwatch.GraphWidgetProps> = {},
  ) => new cloudwatch.GraphWidget({ title, left, width: WIDE, height: HEIGHT, ...extra });
  const relayFunctions = functions.filter((fn) => fn.spec.webSocket);
  const relayStage = stack.voiceRelay.stage;
  const sum = { period: PERIOD, statistic: cloudwatch.Stats.SUM };

  const dashboard = new cloudwatch.Dashboard(stack, 'OperationsDashboard', {
    dashboardName: `${stack.stackName}-operations`,
    defaultInterval: Duration.hours(3),
  });
  dashboard.addWidgets(
    new cloudwatch.AlarmStatusWidget({
      title: 'Alarms: dead letters and APIs (each function has its own Errors and Throttles alarms)',
      alarms,
      width: 24,
      height: 3,
    }),
  );
  dashboard.addWidgets(
    graph('Conversation turn latency (ms): p50 and p99', [
      serviceMetric('TurnLatency', 'p50'),
      serviceMetric('TurnLatency', 'p99'),
      serviceMetric('ModelFirstToken', 'p50'),
      serviceMetric('ModelFirstToken', 'p99'),
      serviceMetric('ServicePart', 'p50'),
      serviceMetric('ServicePart', 'p99'),
    ]),
    graph(
      'Tool duration (ms), interruptions and model errors',
      [serviceMetric('ToolDuration', 'p50'), serviceMetric('ToolDuration', 'p99')],
      {
        right: [
          serviceMetric('Interruptions', cloudwatch.Stats.SUM, 'Interruptions'),
          serviceMetric('ModelErrors', cloudwatch.Stats.SUM, 'ModelErrors'),
        ],
      },
    ),
  );
  dashboard.addWidgets(
    graph('Turn latency p99 by channel (ms)', [
      byChannel('TurnLatency', 'p99'),
      byChannel('ModelFirstToken', 'p99'),
    ]),
    graph(
      'Voice relay: connections, frames and errors',
      [relayStage.metric('ConnectCount', { ...sum, label: 'Connects' })],
      {
        right: [
          relayStage.metric('IntegrationError', { ...sum, label: 'IntegrationError' }),
          relayStage.metric('ExecutionError', { ...sum, label: 'ExecutionError' }),
          relayStage.metric('ClientError', { ...sum, label: 'ClientError' }),
          relayStage.metric('MessageCount', { ...sum, label: 'Messages' }),
        ],
      },
    ),
  );
  dashboard.addWidgets(
    graph(
      'Voice relay function duration (ms)',
      relayFunctions.flatMap((fn) => [
        fn.metricDuration({ period: PERIOD, statistic: 'p99', label: `${fn.spec.id} p99` }),
        fn.metricDuration({
          period: PERIOD,
          statistic: cloudwatch.Stats.MAXIMUM,
          label: `${fn.spec.id} max`,
        }),
      ]),
      {
        leftAnnotations: [
          { value: RELAY_INTEGRATION_TIMEOUT.toMilliseconds(), label: 'API Gateway integration timeout' },
        ],
      },
    ),
    graph('HTTP API: requests and errors', [stack.httpApi.metricCount({ ...sum, label: 'Requests' })], {
      right: [
        stack.httpApi.metricClientError({ ...sum, label: '4xx' }),
        stack.httpApi.metricServerError({ ...sum, label: '5xx' }),
      ],
    }),
  );
  dashboard.addWidgets(
    graph('HTTP API latency (ms)', [
      stack.httpApi.metricLatency({ period: PERIOD, statistic: 'p50', label: 'p50' }),
      stack.httpApi.metricLatency({ period: PERIOD, statistic: 'p99', label: 'p99' }),
      stack.httpApi.metricIntegrationLatency({ period: PERIOD, statistic: 'p99', label: 'integration p99' }),
    ]),
    graph(
      'Dead-letter queues: messages waiting',
      queueKeys.map((key) =>
        stack.queues[key].deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(1),
          statistic: cloudwatch.Stats.MAXIMUM,
          label: QUEUES[key].name,
        }),
      ),
    ),
  );
  dashboard.addWidgets(
    graph(
      'Queues: messages waiting',
      queueKeys.map((key) =>
        stack.queues[key].queue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(1),
          statistic: cloudwatch.Stats.MAXIMUM,
          label: QUEUES[key].name,
        }),
      ),
    ),
    graph(
      'Queues: age of the oldest message (s)',
      queueKeys.map((key) =>
        stack.queues[key].queue.metricApproximateAgeOfOldestMessage({
          period: Duration.minutes(1),
          statistic: cloudwatch.Stats.MAXIMUM,
          label: QUEUES[key].name,
        }),
      ),
    ),
  );
  dashboard.addWidgets(
    graph(
      'Function errors',
      functions.map((fn) => fn.metricErrors({ ...sum, label: fn.spec.id })),
    ),
    graph(
      'Function throttles',
      functions.map((fn) => fn.metricThrottles({ ...sum, label: fn.spec.id })),
    ),
  );
  return dashboard;
}
