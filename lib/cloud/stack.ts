import { fileURLToPath } from 'node:url';
import { CfnOutput, Duration, NestedStack, RemovalPolicy, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventTargets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { NagSuppressions } from 'cdk-nag';
import type { Construct } from 'constructs';
import { catalog as defaultCatalog } from './catalog.js';
import type { FunctionSpec, StackGroup } from './catalog-types.js';
import { routeKey } from '../../functions/platform/http/route.js';
import { ServiceFunction, functionTimeoutSeconds } from './constructs/service-function.js';
import { ServiceQueue } from './constructs/service-queue.js';
import { DashboardSite } from './constructs/dashboard-site.js';
import { WEB_DIST } from '../local/web.js';
import {
  DEFAULT_LANGUAGE_MODEL,
  bedrockInvokeStatements,
  crossRegionWildcards,
  languageModelEnvironment,
  type LanguageModelSettings,
} from './constructs/language-model.js';
import { VoiceRelayApi } from './constructs/voice-relay-api.js';
import {
  BUCKET,
  QUEUES,
  SERVICE_NAME,
  TABLE,
  queueKeys,
  queueUrlEnv,
  webhookUrlEnv,
  type QueueKey,
} from '../../functions/platform/resources.js';

/** The repository root: catalog entries and package-lock.json are resolved from here. */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

type SecretName = NonNullable<FunctionSpec['access']['secrets']>[number];

/** Environment variable that carries a secret's ARN into a function (`SECRET_ARN_IDENTITY_WEBHOOK`). */
export const secretArnEnv = (name: SecretName): string =>
  `SECRET_ARN_${name.replace(/-/g, '_').toUpperCase()}`;

/** Physical name of a provider secret; its value is put by the operator, never kept in the repository. */
export const secretName = (name: SecretName): string => `${SERVICE_NAME}/${name}`;

export interface VoiceAgentStackProps extends StackProps {
  /** The functions to deploy; the catalog unless a test passes its own list. */
  functions?: FunctionSpec[];
  /** TELEPHONY_PROVIDER of every function (context `telephonyProvider`). */
  telephonyProvider?: 'simulator' | 'twilio';
  /** WEBHOOK_ALLOWED_HOSTS of every function, when set (context `webhookAllowedHosts`). */
  webhookAllowedHosts?: string;
  /** WEBHOOK_RETRY_SCHEDULE of every function, when set (context `webhookRetrySchedule`). */
  webhookRetrySchedule?: string;
  /** Sender of every email (context `emailFrom`); its domain is the SES identity the senders may use. */
  emailFrom?: string;
  /** Default-stage throttling of the HTTP API. */
  apiThrottle?: { rateLimit: number; burstLimit: number };
  /** Default-route throttling of the voice relay's WebSocket stage (each frame of each call is a request). */
  relayThrottle?: { rateLimit: number; burstLimit: number };
  /**
   * The model of every function with `languageModel` access (context `llmModel`, `llmProvider`,
   * `llmBaseUrl`); Bedrock with DEFAULT_BEDROCK_MODEL when absent.
   */
  languageModel?: LanguageModelSettings;
  /**
   * Whether to set the account's API Gateway CloudWatch role, which the relay stage's access logs need
   * (context `apiGatewayCloudWatchRole`; default true).
   */
  apiGatewayCloudWatchRole?: boolean;
  logRetention?: logs.RetentionDays;
  /** The built dashboard to deploy (default web/dist; `cdk synth` builds it when stale). */
  dashboardAssets?: string;
  /** The Cognito hosted UI's domain prefix (context `authDomainPrefix`; default voice-agent-<account>). */
  authDomainPrefix?: string;
}

const pascal = (key: string): string => key.charAt(0).toUpperCase() + key.slice(1);

/**
 * The service, built from the catalog: this stack holds what every domain shares (the table, the queues
 * with their DLQs, the recordings bucket, the Cognito user pool, the HTTP API and its stage); each
 * domain is a nested stack with its functions, their roles and log groups, its routes and triggers, so
 * no template comes near CloudFormation's 500-resource limit as domains grow. Each function gets exactly
 * the grants, triggers and environment its catalog entry declares.
 */
export class VoiceAgentStack extends Stack {
  readonly table: dynamodb.Table;
  readonly bucket: s3.Bucket;
  readonly accessLogsBucket: s3.Bucket;
  readonly queues: Record<QueueKey, ServiceQueue>;
  readonly userPool: cognito.UserPool;
  readonly userPoolClient: cognito.UserPoolClient;
  readonly httpApi: apigwv2.HttpApi;
  /** The voice relay's WebSocket API and stage (Twilio ConversationRelay connects to `voiceRelay.url`). */
  readonly voiceRelay: VoiceRelayApi;
  readonly languageModel: LanguageModelSettings;
  readonly dashboard: DashboardSite;
  readonly secrets: Partial<Record<SecretName, secretsmanager.Secret>> = {};
  readonly functions: Record<string, ServiceFunction> = {};
  readonly domainStacks = new Map<StackGroup, NestedStack>();
  private readonly functionUrls: { path: string; url: string }[] = [];
  private readonly emailFrom: string;

  constructor(scope: Construct, id: string, props: VoiceAgentStackProps = {}) {
    super(scope, id, props);
    this.emailFrom = props.emailFrom ?? 'Voice Agent <no-reply@example.com>';
    // Server access logs are allowed in by a bucket policy (no ACLs), whatever the app's feature flags.
    this.node.setContext(cxapi.S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);
    Tags.of(this).add('service', SERVICE_NAME);

    const specs = props.functions ?? defaultCatalog;
    validateFunctions(specs);
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;

    // ── Table ────────────────────────────────────────────────────────────────────────────────────
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TABLE.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of TABLE.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
        sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
        projectionType: dynamodb.ProjectionType.ALL,
      });
    }

    // ── Queues, each with its DLQ ──────────────────────────────────────────────────────────────────
    const queues = {} as Record<QueueKey, ServiceQueue>;
    for (const key of queueKeys) {
      queues[key] = new ServiceQueue(this, `${pascal(key)}Queue`, {
        queueKey: key,
        namePrefix: this.stackName,
      });
    }
    this.queues = queues;

    // ── Recordings bucket (and the bucket its server access logs go to) ───────────────────────────
    this.accessLogsBucket = new s3.Bucket(this, 'AccessLogsBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(365) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.bucket = new s3.Bucket(this, 'RecordingsBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // No versioning: a recording past its retention must really be gone, not kept as a noncurrent version.
      versioned: false,
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: 'recordings-bucket/',
      lifecycleRules: [
        {
          id: 'expire-recordings',
          prefix: BUCKET.recordingsPrefix,
          expiration: Duration.days(BUCKET.recordingRetentionDays),
        },
        { id: 'abort-incomplete-multipart-uploads', abortIncompleteMultipartUploadAfter: Duration.days(7) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // ── Identity: the dashboard's user pool ────────────────────────────────────────────────────────
    this.userPool = new cognito.UserPool(this, 'UserPool', {
      signInAliases: { email: true },
      signInCaseSensitive: false,
      selfSignUpEnabled: true,
      autoVerify: { email: true },
      keepOriginal: { email: true },
      userVerification: { emailStyle: cognito.VerificationEmailStyle.CODE },
      standardAttributes: { email: { required: true, mutable: true } },
      passwordPolicy: {
        minLength: 12,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
        tempPasswordValidity: Duration.days(3),
      },
      accountRecovery: cognito.AccountRecovery.EMAIL_ONLY,
      mfa: cognito.Mfa.OPTIONAL,
      mfaSecondFactor: { otp: true, sms: false },
      featurePlan: cognito.FeaturePlan.ESSENTIALS,
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const jwtIssuer = `https://cognito-idp.${this.region}.amazonaws.com/${this.userPool.userPoolId}`;

    // ── HTTP API: authorisation happens in the functions (user JWT or API key), not in API Gateway ──
    this.httpApi = new apigwv2.HttpApi(this, 'HttpApi', {
      apiName: `${this.stackName}-api`,
      description: 'Voice agent service API (routes from lib/catalog.ts)',
      createDefaultStage: false,
    });
    const apiAccessLogs = new logs.LogGroup(this, 'HttpApiAccessLogs', {
      retention: logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const throttle = props.apiThrottle ?? { rateLimit: 200, burstLimit: 400 };
    new apigwv2.HttpStage(this, 'HttpApiDefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle,
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
    const apiUrl = this.httpApi.apiEndpoint;

    // ── Voice relay: the WebSocket API ConversationRelay opens per answered call ───────────────────
    this.voiceRelay = new VoiceRelayApi(this, 'VoiceRelay', {
      apiName: `${this.stackName}-voice-relay`,
      throttle: props.relayThrottle ?? { rateLimit: 500, burstLimit: 1000 },
      logRetention,
      setAccountCloudWatchRole: props.apiGatewayCloudWatchRole ?? true,
    });
    this.languageModel = props.languageModel ?? DEFAULT_LANGUAGE_MODEL;
    // ── Dashboard: S3 + CloudFront, and the user pool's client it signs in with (code + PKCE) ─────
    const authDomainPrefix = props.authDomainPrefix ?? `${SERVICE_NAME}-${this.account}`;
    this.userPool.addDomain('AuthDomain', { cognitoDomain: { domainPrefix: authDomainPrefix } });
    this.dashboard = new DashboardSite(this, 'Dashboard', {
      assets: props.dashboardAssets ?? WEB_DIST,
      accessLogsBucket: this.accessLogsBucket,
      apiUrl,
      authDomain: `${authDomainPrefix}.auth.${this.region}.amazoncognito.com`,
      issuer: jwtIssuer,
      // The test chat opens the voice relay from the page (CSP connect-src, config.json relay_url).
      relayUrl: this.voiceRelay.url,
    });
    this.userPoolClient = this.userPool.addClient('DashboardClient', {
      generateSecret: false,
      authFlows: { userSrp: true },
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: [cognito.OAuthScope.OPENID, cognito.OAuthScope.EMAIL],
        callbackUrls: [`${this.dashboard.url}/auth/callback`],
        logoutUrls: [`${this.dashboard.url}/`],
      },
      supportedIdentityProviders: [cognito.UserPoolClientIdentityProvider.COGNITO],
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      accessTokenValidity: Duration.hours(1),
      idTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.days(30),
    });
    this.dashboard.publish(this.userPoolClient.userPoolClientId);
    // The dashboard uploads imports to presigned URLs and plays recordings from them.
    this.bucket.addCorsRule({
      allowedOrigins: [this.dashboard.url],
      allowedMethods: [s3.HttpMethods.GET, s3.HttpMethods.HEAD, s3.HttpMethods.PUT],
      allowedHeaders: ['*'],
      maxAge: 600,
    });

    // ── Provider secrets: created empty of real values; the operator puts them after deploy ────────
    // Except the key list cursors are sealed with (functions/platform/pagination.ts): ours, generated.
    const secretNames = [...new Set(specs.flatMap((spec) => spec.access.secrets ?? []))].sort();
    for (const name of secretNames) {
      this.secrets[name] = new secretsmanager.Secret(this, `Secret${name.split('-').map(pascal).join('')}`, {
        secretName: secretName(name),
        ...(name === 'cursor-key'
          ? {
              description:
                'Seals list cursors (generated; replacing it only ends the pages clients hold open)',
              generateSecretString: { passwordLength: 64, excludePunctuation: true },
            }
          : {
              description: `Credentials for ${name} (put the real value with aws secretsmanager put-secret-value)`,
            }),
      });
    }

    // ── Functions ──────────────────────────────────────────────────────────────────────────────────
    const sharedEnvironment: Record<string, string> = {
      NODE_OPTIONS: '--enable-source-maps',
      STAGE: 'cloud',
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      POWERTOOLS_LOG_LEVEL: 'INFO',
      JWT_ISSUER: jwtIssuer,
      JWT_JWKS_URI: `${jwtIssuer}/.well-known/jwks.json`,
      JWT_CLIENT_ID: this.userPoolClient.userPoolClientId,
      PUBLIC_BASE_URL: apiUrl,
      // Invitation emails link to the dashboard's invitation page.
      DASHBOARD_URL: this.dashboard.url,
      TELEPHONY_PROVIDER: props.telephonyProvider ?? 'simulator',
      // Not a secret: the TwiML of every answered call names it, and $connect checks signatures against it.
      VOICE_RELAY_URL: this.voiceRelay.url,
      ...(props.webhookAllowedHosts !== undefined
        ? { WEBHOOK_ALLOWED_HOSTS: props.webhookAllowedHosts }
        : {}),
      ...(props.webhookRetrySchedule !== undefined
        ? { WEBHOOK_RETRY_SCHEDULE: props.webhookRetrySchedule }
        : {}),
    };

    for (const spec of specs) {
      const fn = new ServiceFunction(this.domainStack(spec.group), spec.id, {
        spec,
        repoRoot: REPO_ROOT,
        environment: { ...sharedEnvironment, ...this.accessEnvironment(spec) },
        logRetention,
      });
      Tags.of(fn).add(`${SERVICE_NAME}:function`, spec.id);
      this.functions[spec.id] = fn;
      this.grantAccess(fn, spec);
      this.addTriggers(fn, spec);
    }

    // Every function that is not itself a webhook learns the webhooks' URLs (e.g. the status-callback
    // URL the call dispatcher gives the telephony provider). Webhook functions are left out: a
    // function's environment cannot hold its own URL (a dependency cycle).
    for (const spec of specs) {
      if (spec.functionUrl) continue;
      for (const { path, url } of this.functionUrls) {
        this.functions[spec.id].addEnvironment(webhookUrlEnv(path), url);
      }
    }

    // ── Outputs ────────────────────────────────────────────────────────────────────────────────────
    new CfnOutput(this, 'ApiUrl', { value: apiUrl, description: 'Base URL of the HTTP API' });
    new CfnOutput(this, 'UserPoolId', { value: this.userPool.userPoolId });
    new CfnOutput(this, 'UserPoolClientId', { value: this.userPoolClient.userPoolClientId });
    new CfnOutput(this, 'JwtIssuer', { value: jwtIssuer });
    new CfnOutput(this, 'DashboardUrl', { value: this.dashboard.url, description: 'The web console' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName });
    new CfnOutput(this, 'VoiceRelayUrl', {
      value: this.voiceRelay.url,
      description: 'The voice relay (ConversationRelay WebSocket) every answered call is connected to',
    });
    new CfnOutput(this, 'LanguageModel', {
      value: `${this.languageModel.provider}:${this.languageModel.model}`,
      description: 'LLM_PROVIDER:LLM_MODEL of the functions that converse',
    });

    suppressStackFindings(this);
  }

  /** The nested stack of a domain, made on first use. */
  private domainStack(group: StackGroup): NestedStack {
    let stack = this.domainStacks.get(group);
    if (!stack) {
      const name = group.split('-').map(pascal).join('');
      stack = new NestedStack(this, `${name}Domain`, { description: `Voice agent service: ${group} domain` });
      this.domainStacks.set(group, stack);
    }
    return stack;
  }

  /** TABLE_NAME, BUCKET_NAME, QUEUE_URL_* and SECRET_ARN_* only for what the entry may touch. */
  private accessEnvironment(spec: FunctionSpec): Record<string, string> {
    const env: Record<string, string> = {};
    const { access } = spec;
    if (access.table) env.TABLE_NAME = this.table.tableName;
    if (access.bucket) {
      env.BUCKET_NAME = this.bucket.bucketName;
      env.S3_FORCE_PATH_STYLE = 'false';
    }
    for (const key of access.sendsTo ?? []) env[queueUrlEnv(key)] = this.queues[key].queue.queueUrl;
    for (const name of access.secrets ?? []) env[secretArnEnv(name)] = this.secrets[name]!.secretArn;
    if (access.manageConnections) env.VOICE_RELAY_MANAGEMENT_URL = this.voiceRelay.managementUrl;
    if (access.languageModel) Object.assign(env, languageModelEnvironment(this.languageModel));
    return env;
  }

  /** Least privilege: exactly the grants the catalog entry declares, on this stack's resources only. */
  private grantAccess(fn: ServiceFunction, spec: FunctionSpec): void {
    const { access } = spec;
    if (access.table === 'read') this.table.grantReadData(fn);
    if (access.table === 'readwrite') this.table.grantReadWriteData(fn);
    if (access.bucket === 'read') this.bucket.grantRead(fn);
    if (access.bucket === 'readwrite') this.bucket.grantReadWrite(fn);
    for (const key of access.sendsTo ?? []) this.queues[key].queue.grantSendMessages(fn);
    for (const name of access.secrets ?? []) this.secrets[name]!.grantRead(fn);
    if (access.email) {
      const from = this.emailFrom;
      const domain = from.replace(/^.*<|>$/g, '').split('@')[1];
      fn.addEnvironment('EMAIL_FROM', from);
      fn.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['ses:SendEmail'],
          resources: [this.formatArn({ service: 'ses', resource: 'identity', resourceName: domain })],
        }),
      );
    }
    if (access.manageConnections) this.voiceRelay.grantManageConnections(fn);
    if (access.languageModel && this.languageModel.provider === 'bedrock') {
      for (const statement of bedrockInvokeStatements(this.languageModel.model))
        fn.addToRolePolicy(statement);
    }
    suppressGrantWildcardsFor(this, fn, spec);
  }

  private addTriggers(fn: ServiceFunction, spec: FunctionSpec): void {
    if (spec.http && spec.http.length > 0) {
      // One integration and one invoke permission per domain function, then one route per declared path:
      // API Gateway matches the path (unknown paths are 404 at the edge) and the function dispatches on
      // the routeKey. (HttpLambdaIntegration would add a permission per route, doubling the resources.)
      const scope = fn.stack;
      const integration = new apigwv2.HttpIntegration(scope, `${spec.id}Integration`, {
        httpApi: this.httpApi,
        integrationType: apigwv2.HttpIntegrationType.AWS_PROXY,
        integrationUri: fn.functionArn,
        payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0,
      });
      fn.addPermission('InvokeFromHttpApi', {
        principal: new iam.ServicePrincipal('apigateway.amazonaws.com'),
        sourceArn: this.formatArn({
          service: 'execute-api',
          resource: this.httpApi.apiId,
          resourceName: '*',
        }),
      });
      for (const route of spec.http) {
        const cfnRoute = new apigwv2.CfnRoute(
          scope,
          `${spec.id}Route${route.method}${route.path.replace(/[^A-Za-z0-9]/g, '')}`,
          {
            apiId: this.httpApi.apiId,
            routeKey: routeKey(route),
            target: `integrations/${integration.integrationId}`,
          },
        );
        NagSuppressions.addResourceSuppressions(cfnRoute, [AUTHORISATION_IN_FUNCTIONS]);
      }
    }
    if (spec.webSocket) this.voiceRelay.addRoutes(fn, spec.id, spec.webSocket.routes);
    if (spec.queue) {
      // Grants the consume actions on the queue too.
      fn.addEventSource(
        new SqsEventSource(this.queues[spec.queue.name].queue, {
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
      this.functionUrls.push({ path: spec.functionUrl.path, url: url.url });
      new CfnOutput(this, `FunctionUrl${spec.id}`, {
        value: url.url,
        description: `Function URL of ${spec.id} (provider webhook ${spec.functionUrl.path})`,
      });
    }
  }
}

// ── cdk-nag suppressions: each one names what it covers and why it is acceptable here ──────────────

/** Every route of the HTTP API, wherever its domain's nested stack puts it. */
const AUTHORISATION_IN_FUNCTIONS = {
  id: 'AwsSolutions-APIG4',
  reason:
    'Authorisation is done inside each function by the shared http middleware (functions/platform/http/' +
    'authenticate.ts): a route accepts a Cognito JWT, an API key, or neither (health, OpenAPI, public), ' +
    'per route as declared in the catalog. API keys are looked up in the table, which an API Gateway ' +
    'JWT authoriser cannot do, and 401/403 bodies must follow the API contract.',
};

/** The wildcards CDK's table and bucket grants produce, each scoped to this stack's one table or bucket. */
function suppressGrantWildcardsFor(stack: VoiceAgentStack, fn: ServiceFunction, spec: FunctionSpec): void {
  const role = fn.role;
  if (!role) return;
  const tableId = stack.getLogicalId(stack.table.node.defaultChild as dynamodb.CfnTable);
  const bucketId = stack.getLogicalId(stack.bucket.node.defaultChild as s3.CfnBucket);
  if (spec.access.table) {
    NagSuppressions.addResourceSuppressions(
      role,
      [
        {
          id: 'AwsSolutions-IAM5',
          reason:
            'Table grant from the catalog (access.table): `<table>/index/*` covers only the global secondary ' +
            "indexes of this stack's single table (gsi1, gsi2), which every query by a secondary key needs.",
          appliesTo: [`Resource::<${tableId}.Arn>/index/*`],
        },
      ],
      true,
    );
  }
  if (spec.access.bucket) {
    const readWildcards = ['Action::s3:GetObject*', 'Action::s3:GetBucket*', 'Action::s3:List*'];
    const writeWildcards = ['Action::s3:DeleteObject*', 'Action::s3:Abort*'];
    NagSuppressions.addResourceSuppressions(
      role,
      [
        {
          id: 'AwsSolutions-IAM5',
          reason:
            'Bucket grant from the catalog (access.bucket): object keys are generated per recording/upload, so ' +
            "access is to `<recordings bucket>/*` of this one bucket; the action groups are CDK's read " +
            '(GetObject*, GetBucket*, List*) and write (DeleteObject*, Abort* for multipart uploads) sets, ' +
            'limited to that same bucket.',
          appliesTo: [
            `Resource::<${bucketId}.Arn>/*`,
            ...readWildcards,
            ...(spec.access.bucket === 'readwrite' ? writeWildcards : []),
          ],
        },
      ],
      true,
    );
  }
  if (spec.access.manageConnections) {
    const apiId = stack.getLogicalId(stack.voiceRelay.api.node.defaultChild as apigwv2.CfnApi);
    NagSuppressions.addResourceSuppressions(
      role,
      [
        {
          id: 'AwsSolutions-IAM5',
          reason:
            'Relay grant from the catalog (access.manageConnections): execute-api:ManageConnections on ' +
            "`<relay API>/live/*/@connections/*` of this stack's one WebSocket API and stage; connection ids " +
            'are made by API Gateway per call, so they cannot be named in advance.',
          appliesTo: [
            // Region and account appear as tokens or as the values of the stack's env.
            {
              regex: `/^Resource::arn:<AWS::Partition>:execute-api:[^/]+:<${apiId}>\\/live\\/\\*\\/@connections\\/\\*$/`,
            },
          ],
        },
      ],
      true,
    );
  }
  const wildcards = crossRegionWildcards(stack.languageModel.model);
  if (spec.access.languageModel && stack.languageModel.provider === 'bedrock' && wildcards.length > 0) {
    NagSuppressions.addResourceSuppressions(
      role,
      [
        {
          id: 'AwsSolutions-IAM5',
          reason:
            'Model grant from the catalog (access.languageModel) for a cross-region inference profile: the ' +
            "profile routes each request to the same foundation model in one of its geography's regions, " +
            'a set AWS extends, so the region is a wildcard; the statement holds only under the condition ' +
            'bedrock:InferenceProfileArn = this profile, and names this one model.',
          appliesTo: wildcards,
        },
      ],
      true,
    );
  }
}

function suppressStackFindings(stack: VoiceAgentStack): void {
  NagSuppressions.addResourceSuppressions(stack.httpApi, [AUTHORISATION_IN_FUNCTIONS], true);
  NagSuppressions.addResourceSuppressions(stack.userPool, [
    {
      id: 'AwsSolutions-COG2',
      reason:
        'MFA is optional (TOTP, no SMS): dashboard users self-sign-up with email verification and can enrol ' +
        'an authenticator app; requiring MFA at sign-up would block the self sign-up flow of the product.',
    },
    {
      id: 'AwsSolutions-COG8',
      reason:
        'The Essentials feature plan is used: the Plus plan (threat protection) is billed per monthly active ' +
        'user and is an operator decision per deployment; strong password policy, email verification and ' +
        'optional TOTP MFA are enforced.',
    },
  ]);
  for (const secret of Object.values(stack.secrets)) {
    NagSuppressions.addResourceSuppressions(secret, [
      {
        id: 'AwsSolutions-SMG4',
        reason:
          'Provider credentials (telephony, payments, identity webhook signing secret) are issued by the third ' +
          'party and rotated in its console; the operator then puts the new value. No rotation Lambda can ' +
          'create them.',
      },
    ]);
  }
}

/** Catches catalog mistakes at synth time, before CloudFormation or a provider does. */
function validateFunctions(specs: FunctionSpec[]): void {
  const ids = new Set<string>();
  const consumers = new Map<QueueKey, string>();
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
