import { fileURLToPath } from 'node:url';
import { NestedStack, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import type * as cognito from 'aws-cdk-lib/aws-cognito';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as cxapi from 'aws-cdk-lib/cx-api';
import type { Construct } from 'constructs';
import { catalog as defaultCatalog } from './catalog.js';
import type { FunctionSpec, StackGroup } from './catalog-types.js';
import type { ServiceFunction } from './constructs/service-function.js';
import type { ServiceQueue } from './constructs/service-queue.js';
import type { DashboardSite } from './constructs/dashboard-site.js';
import { DEFAULT_LANGUAGE_MODEL, type LanguageModelSettings } from './constructs/language-model.js';
import { DEFAULT_RELAY_THROTTLE, VoiceRelayApi } from './constructs/voice-relay-api.js';
import { addDashboard } from './dashboard.js';
import { addDomainFunctions, validateFunctions } from './domain-functions.js';
import { addHttpApi } from './http-api.js';
import { addServiceAlarms } from './alarms.js';
import { addAlarmTopic, addOperationsDashboard } from './monitoring.js';
import { addUserPool, jwtIssuerOf } from './identity.js';
import { suppressStackFindings } from './nag-suppressions.js';
import { addOutputs } from './outputs.js';
import { addSecrets, type SecretName } from './secrets.js';
import { addBuckets, addQueues, addTable } from './storage.js';
import { WEB_DIST } from '../local/web.js';
import { SERVICE_NAME, type QueueKey } from '../../functions/platform/resources.js';

/** The repository root: catalog entries and package-lock.json are resolved from here. */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

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
  /**
   * Default-route throttling of the voice relay's WebSocket stage: each frame a caller's side sends is a
   * request (context `relayThrottleRate`, `relayThrottleBurst`; DEFAULT_RELAY_THROTTLE when absent).
   */
  relayThrottle?: { rateLimit: number; burstLimit: number };
  /**
   * The model of every function with `languageModel` access (context `llmModel`, `llmProvider`,
   * `llmBaseUrl`); Bedrock with DEFAULT_BEDROCK_MODEL when absent.
   */
  languageModel?: LanguageModelSettings;
  /**
   * PII redaction's detector of names and addresses in free text (context `piiDetector`): `comprehend`
   * (Amazon Comprehend DetectPiiEntities, granted to the functions that store conversations), or rules
   * and known values only (`local`, the default).
   */
  piiDetector?: 'local' | 'comprehend';
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
  /** Where the alarm topic e-mails (context `alarmEmail`); no subscription when unset. */
  alarmEmail?: string;
  /**
   * Browser voice calls through Twilio's Voice JavaScript SDK (context `twilioApiKeySid`,
   * `twilioTwimlAppSid`; the key's secret goes in the `twilio-api-key` secret; docs/deploy.md). Absent:
   * web calls use the browser's own speech over the relay's web route.
   */
  twilioWebCall?: { apiKeySid: string; twimlAppSid: string };
}

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
  readonly piiDetector: 'local' | 'comprehend';
  readonly dashboard: DashboardSite;
  readonly secrets: Partial<Record<SecretName, secretsmanager.Secret>>;
  readonly functions: Record<string, ServiceFunction> = {};
  readonly domainStacks = new Map<StackGroup, NestedStack>();
  /** The topic every alarm notifies. */
  readonly alarmTopic: sns.Topic;
  readonly operationsDashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: VoiceAgentStackProps = {}) {
    super(scope, id, props);
    // Server access logs are allowed in by a bucket policy (no ACLs), whatever the app's feature flags.
    this.node.setContext(cxapi.S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);
    Tags.of(this).add('service', SERVICE_NAME);

    const specs = props.functions ?? defaultCatalog;
    validateFunctions(specs);
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;

    // ── Table, queues (each with its DLQ), recordings bucket (and its access logs' bucket) ─────────
    this.table = addTable(this);
    this.queues = addQueues(this);
    const buckets = addBuckets(this);
    this.accessLogsBucket = buckets.accessLogs;
    this.bucket = buckets.recordings;

    // ── Identity: the dashboard's user pool ────────────────────────────────────────────────────────
    this.userPool = addUserPool(this);
    const jwtIssuer = jwtIssuerOf(this, this.userPool);

    // ── HTTP API: authorisation happens in the functions (user JWT or API key), not in API Gateway ──
    this.httpApi = addHttpApi(this, {
      logRetention,
      throttle: props.apiThrottle ?? { rateLimit: 200, burstLimit: 400 },
    });
    const apiUrl = this.httpApi.apiEndpoint;

    // ── Voice relay: the WebSocket API ConversationRelay opens per answered call ───────────────────
    this.voiceRelay = new VoiceRelayApi(this, 'VoiceRelay', {
      apiName: `${this.stackName}-voice-relay`,
      throttle: props.relayThrottle ?? DEFAULT_RELAY_THROTTLE,
      logRetention,
      setAccountCloudWatchRole: props.apiGatewayCloudWatchRole ?? true,
    });
    this.languageModel = props.languageModel ?? DEFAULT_LANGUAGE_MODEL;
    this.piiDetector = props.piiDetector ?? 'local';

    // ── Dashboard: S3 + CloudFront, and the user pool's client it signs in with (code + PKCE) ─────
    const { dashboard, userPoolClient } = addDashboard(this, {
      userPool: this.userPool,
      bucket: this.bucket,
      accessLogsBucket: this.accessLogsBucket,
      assets: props.dashboardAssets ?? WEB_DIST,
      authDomainPrefix: props.authDomainPrefix ?? `${SERVICE_NAME}-${this.account}`,
      apiUrl,
      jwtIssuer,
      relayUrl: this.voiceRelay.url,
      twilioVoiceSdk: props.twilioWebCall !== undefined,
      logRetention,
    });
    this.dashboard = dashboard;
    this.userPoolClient = userPoolClient;

    // ── Provider secrets: created empty of real values; the operator puts them after deploy ────────
    this.secrets = addSecrets(this, specs);

    // ── Alarms notify one topic (e-mailed to alarmEmail when set) ──────────────────────────────────
    this.alarmTopic = addAlarmTopic(this, props.alarmEmail);

    // ── Functions: one nested stack per domain, each function's alarms beside it ──────────────────
    addDomainFunctions(this, specs, {
      repoRoot: REPO_ROOT,
      sharedEnvironment: {
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
        // Not secrets: the Access Tokens of browser voice calls name them (their key's secret is one).
        ...(props.twilioWebCall
          ? {
              TWILIO_API_KEY_SID: props.twilioWebCall.apiKeySid,
              TWILIO_TWIML_APP_SID: props.twilioWebCall.twimlAppSid,
            }
          : {}),
        ...(props.webhookAllowedHosts !== undefined
          ? { WEBHOOK_ALLOWED_HOSTS: props.webhookAllowedHosts }
          : {}),
        ...(props.webhookRetrySchedule !== undefined
          ? { WEBHOOK_RETRY_SCHEDULE: props.webhookRetrySchedule }
          : {}),
      },
      logRetention,
      emailFrom: props.emailFrom ?? 'Voice Agent <no-reply@example.com>',
      alarmTopic: this.alarmTopic,
    });

    // ── Operations: the dead letters' and the APIs' alarms, the CloudWatch dashboard ───────────────
    const serviceAlarms = addServiceAlarms(this, this.alarmTopic);
    this.operationsDashboard = addOperationsDashboard(this, serviceAlarms);

    // ── Outputs ────────────────────────────────────────────────────────────────────────────────────
    addOutputs(this, { apiUrl, jwtIssuer });

    suppressStackFindings(this);
  }
}
