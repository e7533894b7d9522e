import { AsyncLocalStorage } from 'node:async_hooks';
import { recordUsage } from './usage.js';
import type { Access, SecretKey } from './http/route.js';
import { QUEUES, queueUrlEnv, type QueueKey } from './resources.js';

/**
 * The function's grants, enforced where the SDK clients are built. In the cloud IAM refuses what a
 * function's role was not granted; locally every handler runs in one process with shared clients, so
 * the local stack runs each invocation inside `runWithGrants` with the function's declared access,
 * and a middleware on every client refuses, with AWS's error, any call that access does not cover.
 * Outside a grant context (the cloud, unit tests) nothing is checked.
 *
 * Operations map to IAM actions as CDK's grants do (lib/stack.ts grants exactly the declared access):
 * table read = grantReadData, readwrite = grantReadWriteData; bucket read = grantRead, readwrite =
 * grantReadWrite; sendsTo = grantSendMessages on each queue; secrets = grantRead on each secret;
 * email = ses:SendEmail.
 */

export type GrantedService = 'dynamodb' | 'sqs' | 's3' | 'secretsmanager' | 'ses' | 'execute-api';

interface GrantContext {
  fnId: string;
  access: Access;
}

const grants = new AsyncLocalStorage<GrantContext>();

/** Runs `work` (a handler invocation) as function `fnId` with exactly `access`. */
export function runWithGrants<T>(fnId: string, access: Access, work: () => T): T {
  return grants.run({ fnId, access }, work);
}

/** The grant context of the running invocation, if any (locally, inside runWithGrants). */
export const currentGrants = (): Readonly<GrantContext> | undefined => grants.getStore();

const ACCOUNT = '000000000000';
const region = () => process.env.AWS_REGION || 'us-east-1';

/** What an IAM denial carries, and what the declaration lacks (for the log line). */
export interface DeniedGrant {
  fnId: string;
  /** IAM action, e.g. `dynamodb:PutItem`. */
  action: string;
  resource: string;
  /** The declaration that would allow it, e.g. `table: 'readwrite'`; absent when no grant can. */
  missing?: string;
}

/**
 * AWS's refusal of an action the role has no policy for (locally: the access was not declared). The
 * SDK throws a service exception of this name; a handler that does not catch it answers 500.
 */
export class AccessDeniedException extends Error {
  override readonly name = 'AccessDeniedException';
  readonly $fault = 'client';
  readonly $metadata: { httpStatusCode: number };
  readonly denied: DeniedGrant;

  constructor(denied: DeniedGrant) {
    super(
      `User: arn:aws:sts::${ACCOUNT}:assumed-role/${denied.fnId}Role/${denied.fnId} is not authorized to ` +
        `perform: ${denied.action} on resource: ${denied.resource} because no identity-based policy ` +
        `allows the ${denied.action} action`,
    );
    this.$metadata = { httpStatusCode: denied.action.startsWith('s3:') ? 403 : 400 };
    this.denied = denied;
  }
}

/**
 * The access denial behind `error` (also when wrapped, e.g. by ElectroDB), summed up for the log: the
 * function, the action and, when refused locally, what to declare. Undefined when it is not one.
 */
export function accessDenial(error: unknown): { summary: string; denied?: DeniedGrant } | undefined {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth += 1) {
    if (current instanceof AccessDeniedException) {
      const { fnId, action, resource, missing } = current.denied;
      const fix = missing
        ? `declare { ${missing} } in the route's access (functions/<domain>/routes.ts) or the function's catalog entry (lib/catalog.ts)`
        : 'no access declaration grants this action';
      return { summary: `${fnId} is not granted ${action} on ${resource}: ${fix}`, denied: current.denied };
    }
    const { name, message, cause } = current as { name?: string; message?: string; cause?: unknown };
    if (name === 'AccessDeniedException' || name === 'AccessDenied') return { summary: String(message) };
    current = cause;
  }
  return undefined;
}

type Input = Record<string, unknown>;
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** One IAM action the call needs, on one resource, and the declaration that allows it. */
interface Need {
  action: string;
  resource: string;
  /** Whether `access` allows it. */
  allowed: (access: Access) => boolean;
  /** What to declare; undefined when no declaration grants this action. */
  missing?: string;
}

const never = () => false;

// ── DynamoDB (grantReadData / grantReadWriteData) ────────────────────────────────────────────────
const TABLE_READ = new Set([
  'GetItem',
  'BatchGetItem',
  'Query',
  'Scan',
  'ConditionCheckItem',
  'DescribeTable',
]);
const TABLE_WRITE = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);

function tableNeed(action: string, tableName: string | undefined, index?: string): Need {
  const configured = process.env.TABLE_NAME;
  const name = tableName ?? configured ?? '*';
  const resource = `arn:aws:dynamodb:${region()}:${ACCOUNT}:table/${name}${index ? `/index/${index}` : ''}`;
  const thisTable = !configured || name === configured;
  if (TABLE_READ.has(action)) {
    return {
      action: `dynamodb:${action}`,
      resource,
      allowed: (a) => thisTable && a.table !== undefined,
      missing: "table: 'read'",
    };
  }
  if (TABLE_WRITE.has(action)) {
    return {
      action: `dynamodb:${action}`,
      resource,
      allowed: (a) => thisTable && a.table === 'readwrite',
      missing: "table: 'readwrite'",
    };
  }
  return { action: `dynamodb:${action}`, resource, allowed: never };
}

/** Transactions are authorised item by item: TransactGetItems as GetItem, writes as their action. */
const TRANSACT_ACTIONS: Record<string, string> = {
  Get: 'GetItem',
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
};

function dynamoNeeds(operation: string, input: Input): Need[] {
  if (operation === 'TransactGetItems' || operation === 'TransactWriteItems') {
    const items = Array.isArray(input.TransactItems) ? (input.TransactItems as Input[]) : [];
    return items.flatMap((item) =>
      Object.entries(item).flatMap(([kind, request]) => {
        const action = TRANSACT_ACTIONS[kind];
        return action ? [tableNeed(action, str((request as Input | undefined)?.TableName))] : [];
      }),
    );
  }
  if (operation === 'BatchGetItem' || operation === 'BatchWriteItem') {
    const tables = Object.keys((input.RequestItems as Input | undefined) ?? {});
    return (tables.length > 0 ? tables : [undefined]).map((table) => tableNeed(operation, table));
  }
  return [tableNeed(operation, str(input.TableName), str(input.IndexName))];
}

// ── SQS (grantSendMessages on each queue in sendsTo) ────────────────────────────────────────────
const SQS_SEND = new Set(['SendMessage', 'SendMessageBatch', 'GetQueueAttributes', 'GetQueueUrl']);

/** The queue a URL or name designates: by the function's QUEUE_URL_* or by the queue's name. */
function queueKeyOf(urlOrName: string): QueueKey | undefined {
  const name = urlOrName.split('/').pop();
  return (Object.keys(QUEUES) as QueueKey[]).find(
    (key) => process.env[queueUrlEnv(key)] === urlOrName || QUEUES[key].name === name,
  );
}

function sqsNeeds(operation: string, input: Input): Need[] {
  const urlOrName = str(input.QueueUrl) ?? str(input.QueueName) ?? '*';
  const key = queueKeyOf(urlOrName);
  const action = `sqs:${operation === 'SendMessageBatch' ? 'SendMessage' : operation}`;
  const resource = `arn:aws:sqs:${region()}:${ACCOUNT}:${urlOrName.split('/').pop()}`;
  if (!SQS_SEND.has(operation) || !key) return [{ action, resource, allowed: never }];
  return [
    { action, resource, allowed: (a) => a.sendsTo?.includes(key) ?? false, missing: `sendsTo: ['${key}']` },
  ];
}

// ── S3 (grantRead / grantReadWrite on the bucket) ───────────────────────────────────────────────
/** Commands whose IAM action is not their own name. */
const S3_ACTIONS: Record<string, string> = {
  HeadObject: 'GetObject',
  HeadBucket: 'ListBucket',
  ListObjects: 'ListBucket',
  ListObjectsV2: 'ListBucket',
  ListObjectVersions: 'ListBucketVersions',
  ListMultipartUploads: 'ListBucketMultipartUploads',
  ListParts: 'ListMultipartUploadParts',
  CreateMultipartUpload: 'PutObject',
  UploadPart: 'PutObject',
  UploadPartCopy: 'PutObject',
  CompleteMultipartUpload: 'PutObject',
  CopyObject: 'PutObject',
  DeleteObjects: 'DeleteObject',
};
/** CDK's BUCKET_READ_ACTIONS, and what grantReadWrite adds (BUCKET_PUT_ACTIONS, BUCKET_DELETE_ACTIONS). */
const S3_READ = /^(GetObject.*|GetBucket.*|List.*)$/;
const S3_WRITE =
  /^(PutObject|PutObjectLegalHold|PutObjectRetention|PutObjectTagging|PutObjectVersionTagging|Abort.*|DeleteObject.*)$/;

function bucketNeed(action: string, bucket: string | undefined, key?: string): Need {
  const configured = process.env.BUCKET_NAME;
  const name = bucket ?? configured ?? '*';
  const thisBucket = !configured || name === configured;
  const resource = `arn:aws:s3:::${name}${key !== undefined ? `/${key}` : ''}`;
  if (S3_READ.test(action)) {
    return {
      action: `s3:${action}`,
      resource,
      allowed: (a) => thisBucket && a.bucket !== undefined,
      missing: "bucket: 'read'",
    };
  }
  if (S3_WRITE.test(action)) {
    return {
      action: `s3:${action}`,
      resource,
      allowed: (a) => thisBucket && a.bucket === 'readwrite',
      missing: "bucket: 'readwrite'",
    };
  }
  return { action: `s3:${action}`, resource, allowed: never };
}

function s3Needs(operation: string, input: Input): Need[] {
  const action = S3_ACTIONS[operation] ?? operation;
  const objectKey = action.includes('Object') ? str(input.Key) : undefined;
  const needs = [bucketNeed(action, str(input.Bucket), objectKey)];
  const source = str(input.CopySource);
  if (source) {
    const [bucket, ...key] = decodeURIComponent(source.replace(/^\//, '').split('?')[0]).split('/');
    needs.push(bucketNeed('GetObject', bucket, key.join('/')));
  }
  return needs;
}

// ── Secrets Manager (grantRead on each secret) ─────────────────────────────────────────────────
/** Same rule as secrets.ts's secretArnEnv (the stack puts each granted secret's ARN there). */
const secretArnVariable = (name: string) => `SECRET_ARN_${name.replace(/-/g, '_').toUpperCase()}`;

/** The declared secret a SecretId names: its ARN as given to the function, or its (service-prefixed) name. */
function secretKeyOf(secretId: string): SecretKey | undefined {
  const name = secretId.startsWith('arn:')
    ? secretId.replace(/^.*:secret:/, '').replace(/-[A-Za-z0-9]{6}$/, '')
    : secretId;
  const keys: SecretKey[] = [
    'telephony',
    'payments',
    'identity-webhook',
    'crm',
    'cursor-key',
    'tool-headers-key',
    'twilio-api-key',
  ];
  return keys.find(
    (key) => process.env[secretArnVariable(key)] === secretId || name === key || name.endsWith(`/${key}`),
  );
}

function secretsNeeds(operation: string, input: Input): Need[] {
  const secretId = str(input.SecretId) ?? '*';
  const action = `secretsmanager:${operation}`;
  const resource = secretId.startsWith('arn:')
    ? secretId
    : `arn:aws:secretsmanager:${region()}:${ACCOUNT}:secret:${secretId}`;
  const key = secretKeyOf(secretId);
  if ((operation !== 'GetSecretValue' && operation !== 'DescribeSecret') || !key)
    return [{ action, resource, allowed: never }];
  return [
    { action, resource, allowed: (a) => a.secrets?.includes(key) ?? false, missing: `secrets: ['${key}']` },
  ];
}

// ── SES (ses:SendEmail on the sender identity) ──────────────────────────────────────────────────
function sesNeeds(operation: string, input: Input): Need[] {
  const from = str(input.FromEmailAddress) ?? process.env.EMAIL_FROM ?? '';
  const domain = from.replace(/^.*<|>$/g, '').split('@')[1] ?? '*';
  const resource = `arn:aws:ses:${region()}:${ACCOUNT}:identity/${domain}`;
  const action = `ses:${operation}`;
  if (operation !== 'SendEmail') return [{ action, resource, allowed: never }];
  return [{ action, resource, allowed: (a) => a.email === true, missing: 'email: true' }];
}

// ── API Gateway Management API (execute-api:ManageConnections on the voice relay's API) ──────────
function connectionsNeeds(operation: string, input: Input): Need[] {
  const method = operation === 'DeleteConnection' ? 'DELETE' : operation === 'GetConnection' ? 'GET' : 'POST';
  const resource = `arn:aws:execute-api:${region()}:${ACCOUNT}:relay/*/${method}/@connections/${str(input.ConnectionId) ?? '*'}`;
  return [
    {
      action: 'execute-api:ManageConnections',
      resource,
      allowed: (a) => a.manageConnections === true,
      missing: 'manageConnections: true',
    },
  ];
}

const NEEDS: Record<GrantedService, (operation: string, input: Input) => Need[]> = {
  'execute-api': connectionsNeeds,
  dynamodb: dynamoNeeds,
  sqs: sqsNeeds,
  s3: s3Needs,
  secretsmanager: secretsNeeds,
  ses: sesNeeds,
};

/**
 * Throws AccessDeniedException when a grant context is active and its access does not cover
 * `operation` (the SDK command's name without `Command`, e.g. `PutItem`) with this `input` (the
 * command's input: TableName, QueueUrl, Bucket/Key, SecretId, FromEmailAddress). No context: no check.
 */
export function assertGranted(service: GrantedService, operation: string, input: object = {}): void {
  const context = grants.getStore();
  if (!context) return;
  for (const need of NEEDS[service](operation.replace(/Command$/, ''), input as Input)) {
    if (!need.allowed(context.access)) {
      throw new AccessDeniedException({
        fnId: context.fnId,
        action: need.action,
        resource: need.resource,
        missing: need.missing,
      });
    }
  }
  recordUsage(`${service}:${operation.replace(/Command$/, '')}`);
}

/**
 * The SDK middleware that enforces the grants on one client (step `initialize`, before anything is
 * sent, and also when a presigned URL is made). Usage:
 * `client.middlewareStack.add(grantsMiddleware('dynamodb'), { step: 'initialize', name: 'enforceGrants' })`.
 */
export function grantsMiddleware(service: GrantedService) {
  return <I extends object, O>(
      next: (args: { input: I }) => Promise<O>,
      context: { commandName?: string },
    ): ((args: { input: I }) => Promise<O>) =>
    async (args) => {
      assertGranted(service, context.commandName ?? 'Unknown', args.input);
      return next(args);
    };
}
