/**
 * The functions, built from the catalog: each domain is a nested stack with its functions, their roles
 * and log groups, its routes and triggers, so no template comes near CloudFormation's 500-resource limit
 * as domains grow. Each function gets exactly the grants, triggers and environment its catalog entry
 * declares, on the resources of the stack that holds what every domain shares.
 */
import { CfnOutput, Duration, NestedStack, Tags } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventTargets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { NagSuppressions } from 'cdk-nag';
import type { FunctionSpec, StackGroup } from './catalog-types.js';
import { ServiceFunction, functionTimeoutSeconds } from './constructs/service-function.js';
import { bedrockInvokeStatements, languageModelEnvironment } from './constructs/language-model.js';
import { addFunctionAlarms } from './alarms.js';
import { pascal } from './names.js';
import { AUTHORISATION_IN_FUNCTIONS, suppressGrantWildcardsFor } from './nag-suppressions.js';
import { secretArnEnv } from './secrets.js';
import type { VoiceAgentStack } from './stack.js';
import { routeKey } from '../../functions/platform/http/route.js';
import {
  QUEUES,
  SERVICE_NAME,
  queueUrlEnv,
  webhookUrlEnv,
  type QueueKey,
} from '../../functions/platform/resources.js';

export interface DomainFunctionsOptions {
  /** Absolute path of the repository root (catalog entries are relative to it). */
  repoRoot: string;
  /** What every function's environment holds, before its own access adds to it. */
  sharedEnvironment: Record<string, string>;
  logRetention: logs.RetentionDays;
  /** Sender of every email; its domain is the SES identity the senders may use. */
  emailFrom: string;
  /** The topic each function's alarms (Errors, Throttles) notify. */
  alarmTopic: sns.ITopic;
}

/** A function per catalog entry, in its domain's nested stack, with its grants and triggers. */
export function addDomainFunctions(
  stack: VoiceAgentStack,
  specs: FunctionSpec[],
  options: DomainFunctionsOptions,
): void {
  const functionUrls: { path: string; url: string }[] = [];
  for (const spec of specs) {
    const fn = new ServiceFunction(domainStack(stack, spec.group), spec.id, {
      spec,
      repoRoot: options.repoRoot,
      environment: { ...options.sharedEnvironment, ...accessEnvironment(stack, spec) },
      logRetention: options.logRetention,
    });
    Tags.of(fn).add(`${SERVICE_NAME}:function`, spec.id);
    stack.functions[spec.id] = fn;
    grantAccess(stack, fn, spec, options.emailFrom);
    addFunctionAlarms(stack.stackName, fn, options.alarmTopic);
    const url = addTriggers(stack, fn, spec);
    if (url) functionUrls.push(url);
  }

  // Every function that is not itself a webhook learns the webhooks' URLs (e.g. the status-callback
  // URL the call dispatcher gives the telephony provider). Webhook functions are left out: a
  // function's environment cannot hold its own URL (a dependency cycle); a webhook learns only the
  // URLs it hands out (`functionUrl.handsOut`, which validateFunctions keeps free of cycles).
  for (const spec of specs) {
    const learns = spec.functionUrl
      ? functionUrls.filter(({ path }) => spec.functionUrl?.handsOut?.includes(path))
      : functionUrls;
    for (const { path, url } of learns) {
      stack.functions[spec.id].addEnvironment(webhookUrlEnv(path), url);
    }
  }
}

/** The nested stack of a domain, made on first use. */
function domainStack(stack: VoiceAgentStack, group: StackGroup): NestedStack {
  let domain = stack.domainStacks.get(group);
  if (!domain) {
    const name = group.split('-').map(pascal).join('');
    domain = new NestedStack(stack, `${name}Domain`, { description: `Voice agent service: ${group} domain` });
    stack.domainStacks.set(group, domain);
  }
  return domain;
}

/** TABLE_NAME, BUCKET_NAME, QUEUE_URL_* and SECRET_ARN_* only for what the entry may touch. */
function accessEnvironment(stack: VoiceAgentStack, spec: FunctionSpec): Record<string, string> {
  const env: Record<string, string> = {};
  const { access } = spec;
  if (access.table) env.TABLE_NAME = stack.table.tableName;
  if (access.bucket) {
    env.BUCKET_NAME = stack.bucket.bucketName;
    env.S3_FORCE_PATH_STYLE = 'false';
  }
  for (const key of access.sendsTo ?? []) env[queueUrlEnv(key)] = stack.queues[key].queue.queueUrl;
  for (const name of access.secrets ?? []) env[secretArnEnv(name)] = stack.secrets[name]!.secretArn;
  if (access.manageConnections) env.VOICE_RELAY_MANAGEMENT_URL = stack.voiceRelay.managementUrl;
  if (access.languageModel) Object.assign(env, languageModelEnvironment(stack.languageModel));
  // The functions that converse and analyse are those that store a call's conversation.
  if (access.languageModel && stack.piiDetector === 'comprehend') env.PII_DETECTOR = 'comprehend';
  return env;
}

/** Least privilege: exactly the grants the catalog entry declares, on this stack's resources only. */
function grantAccess(
  stack: VoiceAgentStack,
  fn: ServiceFunction,
  spec: FunctionSpec,
  emailFrom: string,
): void {
  const { access } = spec;
  if (access.table === 'read') stack.table.grantReadData(fn);
  if (access.table === 'readwrite') stack.table.grantReadWriteData(fn);
  if (access.bucket === 'read') stack.bucket.grantRead(fn);
  if (access.bucket === 'readwrite') stack.bucket.grantReadWrite(fn);
  for (const key of access.sendsTo ?? []) stack.queues[key].queue.grantSendMessages(fn);
  for (const name of access.secrets ?? []) stack.secrets[name]!.grantRead(fn);
  if (access.email) {
    const from = emailFrom;
    const domain = from.replace(/^.*<|>$/g, '').split('@')[1];
    fn.addEnvironment('EMAIL_FROM', from);
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [stack.formatArn({ service: 'ses', resource: 'identity', resourceName: domain })],
      }),
    );
  }
  if (access.manageConnections) stack.voiceRelay.grantManageConnections(fn);
  if (access.languageModel && stack.languageModel.provider === 'bedrock') {
    for (const statement of bedrockInvokeStatements(stack.languageModel.model)) fn.addToRolePolicy(statement);
  }
  if (access.languageModel && stack.piiDetector === 'comprehend') {
    // DetectPiiEntities has no resource to name: IAM takes only `*` for it.
    fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['comprehend:DetectPiiEntities'], resources: ['*'] }),
    );
  }
  suppressGrantWildcardsFor(stack, fn, spec);
}

/** HTTP routes, WebSocket routes, the queue, the schedule and the function URL the entry declares. */
function addTriggers(
  stack: VoiceAgentStack,
  fn: ServiceFunction,
  spec: FunctionSpec,
): { path: string; url: string } | undefined {
  if (spec.http && spec.http.length > 0) {
    // One integration and one invoke permission per domain function, then one route per declared path:
    // API Gateway matches the path (unknown paths are 404 at the edge) and the function dispatches on
    // the routeKey. (HttpLambdaIntegration would add a permission per route, doubling the resources.)
    const scope = fn.stack;
    const integration = new apigwv2.HttpIntegration(scope, `${spec.id}Integration`, {
      httpApi: stack.httpApi,
      integrationType: apigwv2.HttpIntegrationType.AWS_PROXY,
      integrationUri: fn.functionArn,
      payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0,
    });
    fn.addPermission('InvokeFromHttpApi', {
      principal: new iam.ServicePrincipal('apigateway.amazonaws.com'),
      sourceArn: stack.formatArn({
        service: 'execute-api',
        resource: stack.httpApi.apiId,
        resourceName: '*',
      }),
    });
    for (const route of spec.http) {
      const cfnRoute = new apigwv2.CfnRoute(
        scope,
        `${spec.id}Route${route.method}${route.path.replace(/[^A-Za-z0-9]/g, '')}`,
        {
          apiId: stack.httpApi.apiId,
          routeKey: routeKey(route),
          target: `integrations/${integration.integrationId}`,
        },
      );
      NagSuppressions.addResourceSuppressions(cfnRoute, [AUTHORISATION_IN_FUNCTIONS]);
    }
  }
  if (spec.webSocket) stack.voiceRelay.addRoutes(fn, spec.id, spec.webSocket.routes);
  if (spec.queue) {
    // Grants the consume actions on the queue too.
    fn.addEventSource(
      new SqsEventSource(stack.queues[spec.queue.name].queue, {
        batchSize: spec.queue.batchSize,
        // SQS requires a batching window for batches above 10 messages.
        maxBatchingWindow: spec.queue.batchSize > 10 ? Duration.seconds(1) : undefined,
        reportBatchItemFailures: true,
      }),
    );
  }
  if (spec.schedule) {
    new events.Rule(fn.stack, `${spec.id}Schedule`, {
      description: `Runs ${spec.id} (${spec.schedule.expression})`,
      schedule: events.Schedule.expression(spec.schedule.expression),
      targets: [new eventTargets.LambdaFunction(fn, { retryAttempts: 2, maxEventAge: Duration.hours(1) })],
    });
  }
  if (spec.functionUrl) {
    // Public by design: providers (telephony, payments, identity) cannot sign AWS requests. Each
    // webhook handler verifies the provider's signature before it reads anything else.
    const url = fn.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE });
    new CfnOutput(stack, `FunctionUrl${spec.id}`, {
      value: url.url,
      description: `Function URL of ${spec.id} (provider webhook ${spec.functionUrl.path})`,
    });
    return { path: spec.functionUrl.path, url: url.url };
  }
  return undefined;
}

/** Catches catalog mistakes at synth time, before CloudFormation or a provider does. */
export function validateFunctions(specs: FunctionSpec[]): void {
  const ids = new Set<string>();
  const consumers = new Map<QueueKey, string>();
  const webhooks = new Map(specs.flatMap((s) => (s.functionUrl ? [[s.functionUrl.path, s] as const] : [])));
  for (const spec of specs) {
    for (const path of spec.functionUrl?.handsOut ?? []) {
      const other = webhooks.get(path);
      if (!other || other === spec) throw new Error(`Catalog: ${spec.id} hands out unknown webhook ${path}`);
      if (other.functionUrl?.handsOut?.length)
        throw new Error(`Catalog: ${spec.id} hands out ${path}, which hands out webhooks itself (a cycle)`);
    }
  }
  for (const spec of specs) {
    if (ids.has(spec.id)) throw new Error(`Catalog: duplicate function id ${spec.id}`);
    ids.add(spec.id);
    if (!spec.queue) continue;
    const queue = QUEUES[spec.queue.name];
    if (!queue) throw new Error(`Catalog: ${spec.id} consumes unknown queue ${spec.queue.name}`);
    const other = consumers.get(spec.queue.name);
    if (other) throw new Error(`Catalog: queue ${queue.name} has two consumers, ${other} and ${spec.id}`);
    consumers.set(spec.queue.name, spec.id);
    const timeout = functionTimeoutSeconds(spec);
    if (queue.visibilityTimeoutSeconds < 6 * timeout) {
      throw new Error(
        `Catalog: queue ${queue.name} visibility timeout ${queue.visibilityTimeoutSeconds}s is under 6x ` +
          `the ${timeout}s timeout of its consumer ${spec.id}`,
      );
    }
  }
}
