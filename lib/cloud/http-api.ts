/** The HTTP API and its one stage, throttled and access-logged. Routes are added per function. */
import { RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as logs from 'aws-cdk-lib/aws-logs';

/** Authorisation happens in the functions (user JWT or API key), not in API Gateway. */
export function addHttpApi(
  stack: Stack,
  options: { logRetention: logs.RetentionDays; throttle: { rateLimit: number; burstLimit: number } },
): apigwv2.HttpApi {
  const httpApi = new apigwv2.HttpApi(stack, 'HttpApi', {
    apiName: `${stack.stackName}-api`,
    description: 'Voice agent service API (routes from lib/catalog.ts)',
    createDefaultStage: false,
  });
  const apiAccessLogs = new logs.LogGroup(stack, 'HttpApiAccessLogs', {
    retention: options.logRetention,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  new apigwv2.HttpStage(stack, 'HttpApiDefaultStage', {
    httpApi,
    stageName: '$default',
    autoDeploy: true,
    throttle: options.throttle,
    accessLogSettings: {
      destination: new apigwv2.LogGroupLogDestination(apiAccessLogs),
      format: AccessLogFormat.custom(
        JSON.stringify({
          requestId: '$context.requestId',
          requestTime: '$context.requestTime',
          ip: '$context.identity.sourceIp',
          userAgent: '$context.identity.userAgent',
          routeKey: '$context.routeKey',
          status: '$context.status',
          protocol: '$context.protocol',
          responseLength: '$context.responseLength',
          latencyMs: '$context.responseLatency',
          integrationLatencyMs: '$context.integrationLatency',
          integrationError: '$context.integrationErrorMessage',
        }),
      ),
    },
  });
  return httpApi;
}
