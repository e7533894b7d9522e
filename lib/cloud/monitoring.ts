/**
 * What tells an operator about trouble: one SNS topic every alarm notifies (e-mailed to `alarmEmail` when
 * set) and one CloudWatch dashboard. The alarms themselves are alarms.ts; docs/operations.md says what
 * each means and what to do.
 */
import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { PERIOD, serviceMetric } from './alarms.js';
import { RELAY_INTEGRATION_TIMEOUT } from './constructs/voice-relay-api.js';
import type { VoiceAgentStack } from './stack.js';
import { METRICS_NAMESPACE, type MetricName } from '../../functions/platform/metrics.js';
import { QUEUES, queueKeys } from '../../functions/platform/resources.js';

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
      title:
        'Alarms: queues, APIs and the conversation (each function has its own errors and throttles alarms)',
      alarms,
      width: 24,
      height: 6,
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
      'Tool duration (ms), interruptions, model requests and errors',
      [serviceMetric('ToolDuration', 'p50'), serviceMetric('ToolDuration', 'p99')],
      {
        right: [
          serviceMetric('Interruptions', cloudwatch.Stats.SUM, { label: 'Interruptions' }),
          serviceMetric('ModelRequests', cloudwatch.Stats.SUM, { label: 'ModelRequests' }),
          serviceMetric('ModelErrors', cloudwatch.Stats.SUM, { label: 'ModelErrors' }),
          serviceMetric('CallWriteConflicts', cloudwatch.Stats.SUM, { label: 'CallWriteConflicts' }),
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
