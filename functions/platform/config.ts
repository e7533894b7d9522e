import * as z from 'zod';
import { queueKeys, queueUrlEnv, type QueueKey } from './resources.js';

/**
 * Configuration comes from the environment only, parsed once per container (lazily, so tests and the
 * local stack can set the environment before the first use).
 */
const ConfigSchema = z.object({
  STAGE: z.enum(['local', 'cloud']).default('local'),
  AWS_REGION: z.string().default('ap-southeast-2'),
  /** Absent for functions that were granted no table access. */
  TABLE_NAME: z.string().min(3).optional(),
  BUCKET_NAME: z.string().min(3).optional(),
  S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).default('false'),
  /** The identity provider: issuer, JWKS and the app client id access tokens must carry. */
  JWT_ISSUER: z.string().optional(),
  JWT_JWKS_URI: z.string().optional(),
  JWT_CLIENT_ID: z.string().optional(),
  /** Public base URL of the API and of the provider webhooks (status callbacks point here). */
  PUBLIC_BASE_URL: z.string().default('http://127.0.0.1:3000'),
  /**
   * The dashboard's address, where it is served: an invitation email then links to its
   * `/invitations/{id}` page; without it, to the API's own page (`/i/{id}`).
   */
  DASHBOARD_URL: z.string().optional(),
  WEBHOOKS_BASE_URL: z.string().optional(),
  TELEPHONY_PROVIDER: z.enum(['simulator', 'twilio']).default('simulator'),
  SIMULATOR_TIME_SCALE: z.coerce.number().positive().default(20),
  WEBHOOK_ALLOWED_HOSTS: z.string().default(''),
  WEBHOOK_RETRY_SCHEDULE: z.string().optional(),
  /**
   * The sweeper asks the provider about a call it has not heard of for this long (no callback, no
   * earlier check): callbacks can be lost (Twilio retries one at most). Locally a few seconds.
   */
  CALL_RECONCILE_AFTER_SECONDS: z.coerce.number().positive().default(300),
  /**
   * The workflow sweeper puts a `running` run back on its queue after this long without a write (its
   * advance message was lost or dead-lettered). Locally a few seconds.
   */
  WORKFLOW_RUN_STALL_SECONDS: z.coerce.number().positive().default(300),
  /**
   * The evaluation sweeper sends the scenario messages of a run charged this long ago whose messages
   * were never recorded as sent (the request stopped between the charge and the send). Locally a few seconds.
   */
  EVALUATION_DISPATCH_STALL_SECONDS: z.coerce.number().positive().default(60),
  /**
   * The evaluation sweeper sends a running run's scenario messages again after this long without a
   * scenario judged (lost or dead-lettered messages). Locally half a minute.
   */
  EVALUATION_STALL_SECONDS: z.coerce.number().positive().default(900),
});

export type Config = z.infer<typeof ConfigSchema> & { queueUrls: Partial<Record<QueueKey, string>> };

let cached: { fingerprint: string; config: Config } | undefined;

const relevantNames = () => [...Object.keys(ConfigSchema.shape), ...queueKeys.map(queueUrlEnv)];

/**
 * Parsed once per container. The parse is redone only when one of its variables changed, which
 * happens only in a process that sets up the environment after importing code (the local stack).
 */
export function config(): Config {
  const fingerprint = relevantNames()
    .map((name) => process.env[name] ?? '')
    .join('\u0000');
  if (cached?.fingerprint !== fingerprint) {
    const parsed = ConfigSchema.parse(process.env);
    const queueUrls: Partial<Record<QueueKey, string>> = {};
    for (const key of queueKeys) {
      const url = process.env[queueUrlEnv(key)];
      if (url) queueUrls[key] = url;
    }
    cached = { fingerprint, config: { ...parsed, queueUrls } };
  }
  return cached.config;
}

/** Forget the parsed configuration (tests that change the environment). */
export function resetConfig(): void {
  cached = undefined;
}
