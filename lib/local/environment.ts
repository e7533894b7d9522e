import { BUCKET, queueKeys, queueUrlEnv, TABLE } from '../../functions/platform/resources.js';
import type { LocalResources } from './resources-setup.js';

/** Defaults the developer (or the test harness) may override through the environment. */
export interface EnvironmentDefaults {
  POWERTOOLS_LOG_LEVEL: string;
  SIMULATOR_TIME_SCALE: string;
  /**
   * Comma-separated `host:port` entries a customer webhook may target although loopback/private;
   * `host:*` allows any port on that host. Locally: the machine itself.
   */
  WEBHOOK_ALLOWED_HOSTS: string;
  /** The sweeper asks the provider about a call silent this long (cloud default 300 s). */
  CALL_RECONCILE_AFTER_SECONDS: string;
  /** The workflow sweeper re-sends a run silent this long (cloud default 300 s). */
  WORKFLOW_RUN_STALL_SECONDS: string;
  /** The evaluation sweeper sends the scenarios of a run charged this long ago, if never sent (cloud 60 s). */
  EVALUATION_DISPATCH_STALL_SECONDS: string;
  /** … and sends them again when no scenario was judged this long after (cloud 900 s). */
  EVALUATION_STALL_SECONDS: string;
}

export const DEFAULTS: EnvironmentDefaults = {
  POWERTOOLS_LOG_LEVEL: 'INFO',
  SIMULATOR_TIME_SCALE: '20',
  WEBHOOK_ALLOWED_HOSTS: '127.0.0.1:*,localhost:*',
  CALL_RECONCILE_AFTER_SECONDS: '15',
  WORKFLOW_RUN_STALL_SECONDS: '10',
  EVALUATION_DISPATCH_STALL_SECONDS: '5',
  EVALUATION_STALL_SECONDS: '30',
};

/**
 * Seals list cursors locally (functions/platform/pagination.ts); the cloud's is the generated
 * `cursor-key` secret. Set CURSOR_SECRET to use another.
 */
export const LOCAL_CURSOR_SECRET = 'local-cursor-key-0001';

/** Passed through to the handlers (and to stack.json) when set in the stack's environment. */
const PASS_THROUGH = ['WEBHOOK_RETRY_SCHEDULE', 'POWERTOOLS_LOGGER_LOG_EVENT', 'POWERTOOLS_DEV'];

/**
 * The environment the handlers run with locally: the same variables the CDK stack sets in the cloud,
 * pointed at the local stand-ins (the SDK v3 reads AWS_ENDPOINT_URL_<SERVICE>).
 */
export function stackEnvironment(options: {
  region: string;
  dynamoDbEndpoint: string;
  sqsEndpoint: string;
  s3Endpoint: string;
  resources: LocalResources;
  issuer: string;
  jwksUri: string;
  clientId: string;
  gatewayUrl: string;
  /** Where the dashboard is served, when it is (invitation emails link to its page). */
  dashboardUrl?: string;
  defaults?: Partial<EnvironmentDefaults>;
  source?: NodeJS.ProcessEnv;
}): Record<string, string> {
  const source = options.source ?? process.env;
  const defaults = { ...DEFAULTS, ...options.defaults };
  const env: Record<string, string> = {
    STAGE: 'local',
    AWS_REGION: options.region,
    AWS_DEFAULT_REGION: options.region,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: options.dynamoDbEndpoint,
    AWS_ENDPOINT_URL_SQS: options.sqsEndpoint,
    AWS_ENDPOINT_URL_S3: options.s3Endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    TABLE_NAME: options.resources.tableName ?? TABLE.name,
    BUCKET_NAME: options.resources.bucketName ?? BUCKET.name,
    JWT_ISSUER: options.issuer,
    JWT_JWKS_URI: options.jwksUri,
    JWT_CLIENT_ID: options.clientId,
    PUBLIC_BASE_URL: options.gatewayUrl,
    WEBHOOKS_BASE_URL: options.gatewayUrl,
    ...(options.dashboardUrl ? { DASHBOARD_URL: options.dashboardUrl } : {}),
    TELEPHONY_PROVIDER: 'simulator',
    CURSOR_SECRET: source.CURSOR_SECRET || LOCAL_CURSOR_SECRET,
    SIMULATOR_TIME_SCALE: source.SIMULATOR_TIME_SCALE || defaults.SIMULATOR_TIME_SCALE,
    WEBHOOK_ALLOWED_HOSTS: source.WEBHOOK_ALLOWED_HOSTS ?? defaults.WEBHOOK_ALLOWED_HOSTS,
    POWERTOOLS_LOG_LEVEL: source.POWERTOOLS_LOG_LEVEL || defaults.POWERTOOLS_LOG_LEVEL,
    CALL_RECONCILE_AFTER_SECONDS:
      source.CALL_RECONCILE_AFTER_SECONDS || defaults.CALL_RECONCILE_AFTER_SECONDS,
    WORKFLOW_RUN_STALL_SECONDS: source.WORKFLOW_RUN_STALL_SECONDS || defaults.WORKFLOW_RUN_STALL_SECONDS,
    EVALUATION_DISPATCH_STALL_SECONDS:
      source.EVALUATION_DISPATCH_STALL_SECONDS || defaults.EVALUATION_DISPATCH_STALL_SECONDS,
    EVALUATION_STALL_SECONDS: source.EVALUATION_STALL_SECONDS || defaults.EVALUATION_STALL_SECONDS,
    // Lambda runs Node 22+; the SDK's warning about this machine's Node 20 is known (docs/architecture.md).
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED:
      source.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED || 'true',
  };
  for (const key of queueKeys) env[queueUrlEnv(key)] = options.resources.queues[key].url;
  for (const name of PASS_THROUGH) {
    const value = source[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  return env;
}

/** Puts the stack's environment into this process (the handlers run here), dropping real AWS session data. */
export function applyEnvironment(env: Record<string, string>): void {
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
  Object.assign(process.env, env);
}
