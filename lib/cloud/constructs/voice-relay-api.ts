import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AccessLogFormat, CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { NagSuppressions } from 'cdk-nag';
import { Construct } from 'constructs';
import type { FunctionSpec } from '../catalog-types.js';

export type RelayRouteKey = NonNullable<FunctionSpec['webSocket']>['routes'][number];

/** The stage Twilio connects to: the relay URL is `wss://<api>.execute-api.<region>.<suffix>/live`. */
export const VOICE_RELAY_STAGE = 'live';

/**
 * API Gateway cuts a WebSocket integration at 29 s; the relay function answers inside it (its timeout is
 * 28 s and a turn is bounded at 24 s in functions/conversation/engine/turn.ts).
 */
export const RELAY_INTEGRATION_TIMEOUT = Duration.seconds(29);

/**
 * The relay stage's default-route throttle (context `relayThrottleRate`, `relayThrottleBurst`): every
 * frame a caller's side sends is a request against it (`$connect`, `$disconnect` too); the agent's frames
 * go back through the Management API (PostToConnection), outside it. docs/scale.md's call (3 minutes,
 * 13 frames in and 34 out) sends 13 / 180 = 0.072 frames a second, so 10,000 concurrent calls send ~722
 * a second, ~2,611 counting both ways. 3,000 a second is above both (4x the frames that count); the
 * burst is the account's own (5,000 a second per region, shared by every API of the account), above
 * which a higher stage setting changes nothing.
 */
export const DEFAULT_RELAY_THROTTLE = { rateLimit: 3000, burstLimit: 5000 } as const;

export interface VoiceRelayApiProps {
  apiName: string;
  /** Default route throttling of the stage (every frame of every call counts as a request). */
  throttle: { rateLimit: number; burstLimit: number };
  logRetention: logs.RetentionDays;
  /**
   * Set the account's API Gateway CloudWatch role (`AWS::ApiGateway::Account`), which WebSocket (and REST)
   * access logging needs. False when the account already has one that the operator manages.
   */
  setAccountCloudWatchRole: boolean;
}

/**
 * The voice relay: the WebSocket API Twilio ConversationRelay opens for each answered call (`$connect`
 * checks the signature in the function, `$default` carries every frame, `$disconnect`), one auto-deployed
 * stage with throttling and access logs. The API and its stage live in the root stack; each function's
 * integration and routes live in the function's own (nested) stack, as the HTTP API's do. The URLs are
 * built from the API id and the stage name, so a function may hold them without depending on its routes.
 */
export class VoiceRelayApi extends Construct {
  readonly api: apigwv2.WebSocketApi;
  readonly stage: apigwv2.WebSocketStage;
  private readonly routeOwners = new Map<RelayRouteKey, string>();

  constructor(scope: Construct, id: string, props: VoiceRelayApiProps) {
    super(scope, id);
    this.api = new apigwv2.WebSocketApi(this, 'Api', {
      apiName: props.apiName,
      description:
        'Voice relay: Twilio ConversationRelay sessions (routes from lib/catalog.ts webSocket entries)',
      // Twilio's frames carry `type`, not `action`: every frame goes to $default.
      routeSelectionExpression: '$request.body.action',
    });
    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stage = new apigwv2.WebSocketStage(this, 'Stage', {
      webSocketApi: this.api,
      stageName: VOICE_RELAY_STAGE,
      autoDeploy: true,
      throttle: props.throttle,
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(accessLogs),
        // No caller data: the connection id ties a session's frames together; frames are not logged.
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            requestTime: '$context.requestTime',
            ip: '$context.identity.sourceIp',
            eventType: '$context.eventType',
            routeKey: '$context.routeKey',
            connectionId: '$context.connectionId',
            status: '$context.status',
            latencyMs: '$context.integrationLatency',
            integrationError: '$context.integrationErrorMessage',
            error: '$context.error.message',
          }),
        ),
      },
    });
    if (props.setAccountCloudWatchRole) this.setAccountCloudWatchRole();
  }

  /** The relay URL Twilio connects to (the TwiML's `<ConversationRelay url>`, and what it signs). */
  get url(): string {
    return this.stage.url;
  }

  /** The Management API endpoint (`PostToConnection`, `DeleteConnection`) of the stage. */
  get managementUrl(): string {
    return this.stage.callbackUrl;
  }

  /**
   * Routes `routes` to `fn` through one Lambda proxy integration (API Gateway's 29 s timeout), created in
   * the function's own stack. A route key is served by one function only.
   */
  addRoutes(fn: lambda.IFunction, fnId: string, routes: readonly RelayRouteKey[]): void {
    const integration = new WebSocketLambdaIntegration(`${fnId}RelayIntegration`, fn, {
      timeout: RELAY_INTEGRATION_TIMEOUT,
    });
    for (const routeKey of routes) {
      const owner = this.routeOwners.get(routeKey);
      if (owner)
        throw new Error(
          `Catalog: WebSocket route ${routeKey} is served by two functions, ${owner} and ${fnId}`,
        );
      this.routeOwners.set(routeKey, fnId);
      const route = new apigwv2.WebSocketRoute(
        Stack.of(fn),
        `${fnId}Relay${routeKey.replace('$', '')}Route`,
        {
          webSocketApi: this.api,
          routeKey,
          integration,
        },
      );
      NagSuppressions.addResourceSuppressions(route, [RELAY_AUTHORISATION_IN_FUNCTION], true);
    }
    // The first deployment of the auto-deployed stage includes the routes.
    if (Stack.of(fn) !== Stack.of(this)) this.stage.node.addDependency(Stack.of(fn));
  }

  /** `execute-api:ManageConnections` on this API's stage connections only (post a frame, close a socket). */
  grantManageConnections(grantee: iam.IGrantable): iam.Grant {
    return this.stage.grantManagementApiAccess(grantee);
  }

  private setAccountCloudWatchRole(): void {
    const role = new iam.Role(this, 'ApiGatewayCloudWatchRole', {
      assumedBy: new iam.ServicePrincipal('apigateway.amazonaws.com'),
      description: 'API Gateway account role: writes REST and WebSocket API access and execution logs',
      managedPolicies: [
        iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs'),
      ],
    });
    // Account-wide in this region: kept when the stack goes, so other APIs of the account keep logging.
    role.applyRemovalPolicy(RemovalPolicy.RETAIN);
    const account = new CfnAccount(this, 'ApiGatewayAccount', { cloudWatchRoleArn: role.roleArn });
    account.applyRemovalPolicy(RemovalPolicy.RETAIN);
    this.stage.node.addDependency(account);
    NagSuppressions.addResourceSuppressions(role, [
      {
        id: 'AwsSolutions-IAM4',
        reason:
          'The account-level role API Gateway itself assumes to write access logs of WebSocket and REST APIs ' +
          '(AWS::ApiGateway::Account, one per account and region, shared by every such API there): AWS ' +
          'documents AmazonAPIGatewayPushToCloudWatchLogs for it, and narrowing it to this stack would break ' +
          "the account's other APIs. No function can assume it. Skip it with context apiGatewayCloudWatchRole=false.",
        appliesTo: [
          'Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs',
        ],
      },
    ]);
  }
}

/** $connect, $default and $disconnect of the relay: the function checks the caller, not API Gateway. */
const RELAY_AUTHORISATION_IN_FUNCTION = {
  id: 'AwsSolutions-APIG4',
  reason:
    'The relay is opened by Twilio ConversationRelay, which cannot present an AWS or JWT credential: the ' +
    '$connect handler (functions/conversation/transports/relay.ts) checks X-Twilio-Signature against the configured relay URL ' +
    'with the telephony auth token and refuses the upgrade otherwise; $default and $disconnect only act on a ' +
    'connection that $connect accepted and that setup bound to a live call.',
};
