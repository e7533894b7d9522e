/**
 * Operations in the synthesized templates (lib/cloud/alarms.ts, monitoring.ts): every alarm notifies the
 * one topic; errors page on a rate (a metric-math expression over the failures and their total), not on
 * a count; what breaks a conversation is watched (the model's errors, the turn latency, Bedrock's
 * throttles, the relay's client errors, every work queue's backlog); the relay stage lets 10,000
 * concurrent calls' frames through; one dashboard; X-Ray on every function.
 */
import { catalog } from '../../lib/cloud/catalog.js';
import {
  BEDROCK_THROTTLES,
  FUNCTION_ERRORS,
  FUNCTION_THROTTLES,
  MODEL_ERRORS,
  SCHEDULED_FUNCTION_ERRORS,
  TURN_LATENCY_MIN_TURNS,
  TURN_LATENCY_P99_MS,
  queueAgeAlarmSeconds,
} from '../../lib/cloud/alarms.js';
import { DEFAULT_RELAY_THROTTLE } from '../../lib/cloud/constructs/voice-relay-api.js';
import { METRICS, METRICS_NAMESPACE } from '../../functions/platform/metrics.js';
import { QUEUES, queueKeys } from '../../functions/platform/resources.js';
import { DEFAULT_BEDROCK_MODEL } from '../../functions/providers/llm/index.js';
import { asArray, flat, functionId, ofType, props, refId, synth, type Resources } from './cloud-template.js';

interface Dimension {
  Name: string;
  Value: unknown;
}
interface AlarmProperties {
  AlarmName?: string;
  Namespace?: string;
  MetricName?: string;
  Dimensions?: Dimension[];
  ExtendedStatistic?: string;
  Statistic?: string;
  Threshold?: number;
  EvaluationPeriods?: number;
  Metrics?: {
    Id: string;
    Expression?: string;
    ReturnData?: boolean;
    MetricStat?: {
      Metric: { Namespace: string; MetricName: string; Dimensions?: Dimension[] };
      Stat: string;
    };
  }[];
  AlarmActions?: unknown[];
  OKActions?: unknown[];
}

/** One metric an alarm reads: its own, or one of its expression's. */
interface Watched {
  namespace: string;
  metric: string;
  stat?: string;
  dimensions: Dimension[];
}
const watchedBy = (alarm: AlarmProperties): Watched[] =>
  alarm.MetricName
    ? [
        {
          namespace: alarm.Namespace ?? '',
          metric: alarm.MetricName,
          stat: alarm.Statistic ?? alarm.ExtendedStatistic,
          dimensions: alarm.Dimensions ?? [],
        },
      ]
    : (alarm.Metrics ?? []).flatMap((m) =>
        m.MetricStat
          ? [
              {
                namespace: m.MetricStat.Metric.Namespace,
                metric: m.MetricStat.Metric.MetricName,
                stat: m.MetricStat.Stat,
                dimensions: m.MetricStat.Metric.Dimensions ?? [],
              },
            ]
          : [],
      );
const expressionOf = (alarm: AlarmProperties) =>
  alarm.Metrics?.find((m) => m.ReturnData !== false)?.Expression;
const dimension = (watched: Watched, name: string) => watched.dimensions.find((d) => d.Name === name)?.Value;

describe('operations: alarms, the dashboard and tracing, from the catalog', () => {
  const { templates, resources } = synth(catalog);
  const alarmsIn = (res: Resources) =>
    ofType(res, 'AWS::CloudWatch::Alarm').map(([, r]) => props<AlarmProperties>(r));
  const alarms = alarmsIn(resources);
  /** The alarms that read `metric` of `namespace`, with the metric as they read it. */
  const on = (list: AlarmProperties[], namespace: string, metric: string) =>
    list.flatMap((alarm) =>
      watchedBy(alarm)
        .filter((w) => w.namespace === namespace && w.metric === metric)
        .map((watched) => ({ alarm, watched })),
    );
  const topics = ofType(resources, 'AWS::SNS::Topic');

  test('one SNS topic, encrypted with its own rotated key; no subscription without alarmEmail', () => {
    expect(topics).toHaveLength(1);
    const keyId = refId(props(topics[0][1]).KmsMasterKeyId);
    expect(keyId).toBeDefined();
    expect(props(resources[keyId!]).EnableKeyRotation).toBe(true);
    expect(ofType(resources, 'AWS::SNS::Subscription')).toEqual([]);
  });

  test('every alarm notifies that topic when it fires and when it clears', () => {
    expect(alarms.length).toBeGreaterThan(2 * catalog.length);
    for (const alarm of alarms) {
      expect(asArray(alarm.AlarmActions).map(refId)).toEqual([topics[0][0]]);
      expect(asArray(alarm.OKActions).map(refId)).toEqual([topics[0][0]]);
    }
  });

  test('every dead-letter queue has an alarm on a message visible in it', () => {
    const dlqIds = ofType(resources, 'AWS::SQS::Queue')
      .map(([, q]) => props<{ RedrivePolicy?: { deadLetterTargetArn: unknown } }>(q).RedrivePolicy)
      .filter((policy) => policy !== undefined)
      .map((policy) => refId(policy.deadLetterTargetArn));
    expect(dlqIds).toHaveLength(queueKeys.length);
    const visible = on(alarms, 'AWS/SQS', 'ApproximateNumberOfMessagesVisible');
    for (const dlqId of dlqIds) {
      const watching = visible.filter(({ watched }) => refId(dimension(watched, 'QueueName')) === dlqId);
      expect({ dlqId, thresholds: watching.map(({ alarm }) => alarm.Threshold) }).toEqual({
        dlqId,
        thresholds: [1],
      });
    }
  });

  test("every work queue has a backlog alarm on its oldest message's age, allowing for its delays", () => {
    const workQueues = ofType(resources, 'AWS::SQS::Queue').filter(([, q]) => props(q).RedrivePolicy);
    expect(workQueues).toHaveLength(queueKeys.length);
    const age = on(alarms, 'AWS/SQS', 'ApproximateAgeOfOldestMessage');
    for (const key of queueKeys) {
      const [queueId] = workQueues.find(([, q]) =>
        flat(props(q).QueueName).endsWith(`-${QUEUES[key].name}`),
      )!;
      const watching = age.filter(({ watched }) => refId(dimension(watched, 'QueueName')) === queueId);
      expect({ key, thresholds: watching.map(({ alarm }) => alarm.Threshold) }).toEqual({
        key,
        thresholds: [queueAgeAlarmSeconds(key)],
      });
      expect(watching[0].alarm.EvaluationPeriods).toBe(3);
    }
    // A queue whose senders defer messages (up to 15 minutes) allows for the wait; the calls queue does not.
    expect(queueAgeAlarmSeconds('webhookDelivery')).toBe(
      900 + 2 * QUEUES.webhookDelivery.visibilityTimeoutSeconds,
    );
    expect(queueAgeAlarmSeconds('calls')).toBe(2 * QUEUES.calls.visibilityTimeoutSeconds);
  });

  test("every function's errors and throttles page on a rate of its invocations, in its own domain's stack", () => {
    for (const spec of catalog) {
      const fnId = functionId(resources, spec);
      const own = templates.find((t) => fnId in (t.toJSON().Resources as Resources));
      const ownAlarms = alarmsIn(own!.toJSON().Resources as Resources);
      const ofFunction = (metric: string) =>
        on(ownAlarms, 'AWS/Lambda', metric).filter(
          ({ watched }) => refId(dimension(watched, 'FunctionName')) === fnId,
        );
      for (const [metric, threshold] of [
        ['Errors', spec.schedule ? SCHEDULED_FUNCTION_ERRORS : FUNCTION_ERRORS],
        ['Throttles', FUNCTION_THROTTLES],
      ] as const) {
        const watching = ofFunction(metric);
        expect({ id: spec.id, metric, alarms: watching.length }).toEqual({ id: spec.id, metric, alarms: 1 });
        const { alarm } = watching[0];
        // The rate: the failures over the function's invocations, from `min` failures on.
        expect(watchedBy(alarm).map((w) => w.metric)).toEqual([metric, 'Invocations']);
        expect(expressionOf(alarm)).toMatch(
          new RegExp(`^IF\\(failed >= ${threshold.min}, 100 \\* failed / `),
        );
        expect(alarm.Threshold).toBe(threshold.percent);
      }
    }
  });

  test("the relay function's Duration alarm fires before API Gateway's 29 s cut", () => {
    const relay = catalog.filter((s) => s.webSocket);
    expect(relay.length).toBeGreaterThan(0);
    for (const spec of relay) {
      const fnId = functionId(resources, spec);
      const [duration] = on(alarms, 'AWS/Lambda', 'Duration').filter(
        ({ watched }) => refId(dimension(watched, 'FunctionName')) === fnId,
      );
      expect(duration.alarm.Threshold).toBeGreaterThan(20_000);
      expect(duration.alarm.Threshold).toBeLessThan(29_000);
    }
  });

  test("the HTTP API's 5xx rate and p99 latency, the voice relay's integration and client errors, have alarms", () => {
    const apis = ofType(resources, 'AWS::ApiGatewayV2::Api');
    const [httpApiId] = apis.find(([, r]) => props(r).ProtocolType === 'HTTP')!;
    const [relayApiId] = apis.find(([, r]) => props(r).ProtocolType === 'WEBSOCKET')!;
    const ofApi = (metric: string, apiId: string) =>
      on(alarms, 'AWS/ApiGateway', metric).filter(
        ({ watched }) => refId(dimension(watched, 'ApiId')) === apiId,
      );
    const [fiveXx] = ofApi('5xx', httpApiId);
    expect(watchedBy(fiveXx.alarm).map((w) => w.metric)).toEqual(['5xx', 'Count']);
    expect(ofApi('Latency', httpApiId).map(({ alarm }) => alarm.ExtendedStatistic)).toEqual(['p99']);
    for (const metric of ['IntegrationError', 'ClientError']) {
      const relay = ofApi(metric, relayApiId);
      expect({ metric, alarms: relay.length }).toEqual({ metric, alarms: 1 });
      expect(dimension(relay[0].watched, 'Stage')).toBe('live');
      // A rate of the frames.
      expect(watchedBy(relay[0].alarm).map((w) => w.metric)).toEqual([metric, 'MessageCount']);
    }
  });

  test("the conversation's model errors page on a rate of its requests; the phone turns' p99 latency on enough turns", () => {
    const [errors] = on(alarms, METRICS_NAMESPACE, 'ModelErrors');
    expect(watchedBy(errors.alarm).map((w) => [w.metric, w.stat, w.dimensions])).toEqual([
      ['ModelErrors', 'Sum', []],
      ['ModelRequests', 'Sum', []],
    ]);
    expect(expressionOf(errors.alarm)).toMatch(
      new RegExp(`^IF\\(failed >= ${MODEL_ERRORS.min}, 100 \\* failed /`),
    );
    expect(errors.alarm.Threshold).toBe(MODEL_ERRORS.percent);

    const latency = on(alarms, METRICS_NAMESPACE, 'TurnLatency');
    expect(latency.map(({ watched }) => [watched.stat, dimension(watched, 'channel')])).toEqual([
      ['SampleCount', 'phone'],
      ['p99', 'phone'],
    ]);
    expect(expressionOf(latency[0].alarm)).toBe(`IF(turns >= ${TURN_LATENCY_MIN_TURNS}, p99, 0)`);
    expect(latency[0].alarm.Threshold).toBe(TURN_LATENCY_P99_MS);
    expect(latency[0].alarm.EvaluationPeriods).toBe(3);
  });

  test("Bedrock's throttles of the configured model page on a rate of its invocations", () => {
    const [throttles] = on(alarms, 'AWS/Bedrock', 'InvocationThrottles');
    expect(dimension(throttles.watched, 'ModelId')).toBe(DEFAULT_BEDROCK_MODEL);
    expect(watchedBy(throttles.alarm).map((w) => w.metric)).toEqual(['InvocationThrottles', 'Invocations']);
    expect(throttles.alarm.Threshold).toBe(BEDROCK_THROTTLES.percent);
    // With an OpenAI-compatible model there is no Bedrock to watch.
    const openai = synth(catalog, {
      languageModel: { provider: 'openai', model: 'm', baseUrl: 'https://llm.example.com/v1' },
    });
    const openaiAlarms = ofType(openai.resources, 'AWS::CloudWatch::Alarm').map(([, r]) =>
      props<AlarmProperties>(r),
    );
    expect(on(openaiAlarms, 'AWS/Bedrock', 'InvocationThrottles')).toEqual([]);
    expect(on(openaiAlarms, METRICS_NAMESPACE, 'ModelErrors')).toHaveLength(1);
  });

  test('the relay stage lets 10,000 concurrent calls through by default (docs/scale.md), and takes a setting', () => {
    const relayStage = (res: Resources) => {
      const [relayApiId] = ofType(res, 'AWS::ApiGatewayV2::Api').find(
        ([, r]) => props(r).ProtocolType === 'WEBSOCKET',
      )!;
      const [[, stage]] = ofType(res, 'AWS::ApiGatewayV2::Stage').filter(
        ([, r]) => refId(props(r).ApiId) === relayApiId,
      );
      return props<{ DefaultRouteSettings: { ThrottlingRateLimit: number; ThrottlingBurstLimit: number } }>(
        stage,
      ).DefaultRouteSettings;
    };
    // docs/scale.md: a 3-minute call sends 13 frames in and receives 34.
    const framesInAt10000 = (10_000 * 13) / 180;
    const framesBothWaysAt10000 = (10_000 * (13 + 34)) / 180;
    const settings = relayStage(resources);
    expect(settings.ThrottlingRateLimit).toBe(DEFAULT_RELAY_THROTTLE.rateLimit);
    expect(settings.ThrottlingRateLimit).toBeGreaterThan(
      Math.max(1000, framesInAt10000, framesBothWaysAt10000),
    );
    expect(settings.ThrottlingBurstLimit).toBeGreaterThanOrEqual(settings.ThrottlingRateLimit);
    const tuned = synth(catalog, { relayThrottle: { rateLimit: 8000, burstLimit: 5000 } });
    expect(relayStage(tuned.resources)).toEqual({ ThrottlingRateLimit: 8000, ThrottlingBurstLimit: 5000 });
  });

  test("one CloudWatch dashboard: the service's metrics, the APIs, the queues, every function's errors", () => {
    const dashboards = ofType(resources, 'AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    const body = flat(props(dashboards[0][1]).DashboardBody);
    for (const name of [METRICS_NAMESPACE, ...Object.keys(METRICS)]) expect(body).toContain(name);
    for (const metric of [
      'ApproximateAgeOfOldestMessage',
      '5xx',
      'IntegrationError',
      'ClientError',
      'Throttles',
    ])
      expect(body).toContain(metric);
    for (const spec of catalog) expect(body).toContain(`<${functionId(resources, spec)}>`);
  });

  test('active X-Ray tracing on every function', () => {
    for (const spec of catalog) {
      const fn = resources[functionId(resources, spec)];
      expect({ id: spec.id, tracing: props(fn).TracingConfig }).toEqual({
        id: spec.id,
        tracing: { Mode: 'Active' },
      });
    }
  });

  test("every function, CDK's own too, logs to a log group of ours with a retention", () => {
    const functions = ofType(resources, 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(catalog.length);
    for (const [id, fn] of functions) {
      const groupId = refId(props<{ LoggingConfig?: { LogGroup?: unknown } }>(fn).LoggingConfig?.LogGroup);
      expect({ id, group: groupId && resources[groupId]?.Type }).toEqual({
        id,
        group: 'AWS::Logs::LogGroup',
      });
      expect(props(resources[groupId!]).RetentionInDays).toBeGreaterThan(0);
    }
    for (const [, group] of ofType(resources, 'AWS::Logs::LogGroup'))
      expect(props(group).RetentionInDays).toBeGreaterThan(0);
  });

  test('both API stages write access logs', () => {
    const stages = ofType(resources, 'AWS::ApiGatewayV2::Stage');
    expect(stages).toHaveLength(2);
    for (const [, stage] of stages) {
      const settings = props<{ AccessLogSettings?: { DestinationArn: unknown } }>(stage).AccessLogSettings;
      expect(resources[refId(settings?.DestinationArn)!].Type).toBe('AWS::Logs::LogGroup');
    }
  });

  test('alarmEmail subscribes that address to the topic', () => {
    const own = synth([catalog.find((spec) => !spec.functionUrl)!], {
      alarmEmail: 'ops@example.com',
    }).resources;
    const subscriptions = ofType(own, 'AWS::SNS::Subscription').map(([, r]) => props(r));
    expect(subscriptions).toHaveLength(1);
    expect(subscriptions[0]).toMatchObject({ Protocol: 'email', Endpoint: 'ops@example.com' });
    expect(refId(subscriptions[0].TopicArn)).toBe(ofType(own, 'AWS::SNS::Topic')[0][0]);
  });
});
