import type { ZodType } from 'zod';
import type { ApiKeyScope } from '../auth/principal.js';
import type { QueueKey } from '../resources.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * `none`: public; `user`: a dashboard user's JWT only (an API key is 403); `api_key`: an API key only
 * (a user's JWT is 403); `user_or_api_key`: either credential.
 */
export type RouteAuth = 'none' | 'user' | 'api_key' | 'user_or_api_key';

/**
 * Secrets Manager secrets a function may read: cloud adapters' credentials, `cursor-key`, which
 * seals list cursors (platform/pagination.ts; granted to every function with a list route), and
 * `tool-headers-key`, which seals agents' tool header values (agents/tool-secrets.ts), and
 * `twilio-api-key`, which signs browser voice calls' Twilio Access Tokens.
 */
export type SecretKey =
  | 'telephony'
  | 'payments'
  | 'identity-webhook'
  | 'crm'
  | 'cursor-key'
  | 'tool-headers-key'
  /** The Twilio API key's secret that browser voice calls' Access Tokens are signed with (providers/telephony/web-client.ts). */
  | 'twilio-api-key';

/**
 * What code may touch: the table, the bucket, queues to send to, secrets, SES. A route declares what
 * it needs; its domain function is granted the union of its routes' access, in the cloud (IAM) and
 * locally (the local stack refuses anything else, as AWS would).
 */
export interface Access {
  table?: 'read' | 'readwrite';
  bucket?: 'read' | 'readwrite';
  sendsTo?: QueueKey[];
  secrets?: SecretKey[];
  /** Sends email through SES (granted ses:SendEmail on the sender identity; EMAIL_FROM set). */
  email?: boolean;
  /** Posts to and closes the voice relay's WebSocket connections (execute-api:ManageConnections on that API). */
  manageConnections?: boolean;
  /** Asks the language model (Bedrock: bedrock:InvokeModel and InvokeModelWithResponseStream on the configured model). */
  languageModel?: boolean;
}

/**
 * One HTTP route, declared once: the OpenAPI document, the local gateway, the CDK stack and the
 * runtime middleware all read this object. `path` uses API Gateway's `{param}` syntax.
 */
export interface Route<B = unknown, Q = unknown, A extends RouteAuth = RouteAuth> {
  method: HttpMethod;
  path: string;
  /** A short title: what the operation does (`Create a workflow`). */
  summary: string;
  /** The detail: who may, rules, limits, what it answers when (the reference shows it under the title). */
  description?: string;
  auth: A;
  /** Scope an API key must carry for this route. */
  scope?: ApiKeyScope;
  body?: ZodType<B>;
  query?: ZodType<Q>;
  /** Success response schema (documentation). */
  response?: ZodType;
  /** Documented success status; 201 for POST and 200 otherwise when absent. */
  successStatus?: number;
  /**
   * Content type of a success body that is not JSON (the handler returns `raw`: an HTML page, a
   * script). Documentation only; absent for the JSON routes.
   */
  contentType?: string;
  /**
   * `kernel` (default): writes honour an `Idempotency-Key` header in the kernel. `route`: the route
   * keeps its own (start-call completes its key in the transaction that creates the call).
   */
  idempotency?: 'kernel' | 'route';
  /**
   * Content types (lower case, without parameters) whose body the route takes as is instead of JSON:
   * the handler reads `request.raw` (bytes and content type) and the body schema is not applied.
   * Any other content type is parsed as JSON and validated as usual.
   */
  rawBody?: readonly string[];
  /**
   * Statuses the route answers beyond those its declaration implies (credential 401/403, a path id
   * 404, a body or query 422, an Idempotency-Key 409, 500): plan gates (402), conflicts (409), sizes
   * (413), rates (429 with Retry-After), each with when. The OpenAPI document lists them all.
   */
  errors?: RouteErrors;
  access: Access;
}

/** A status a route may answer and when; `body` when it carries more than `{ error }`. */
export interface RouteError {
  when: string;
  body?: ZodType;
}
export type RouteErrors = Partial<Record<400 | 402 | 404 | 409 | 413 | 429 | 503, string | RouteError>>;

/** Declares a route; the body and query types flow from its zod schemas to the handler. */
export const defineRoute = <B = undefined, Q = undefined, A extends RouteAuth = RouteAuth>(
  route: Route<B, Q, A> & { auth: A },
): Route<B, Q, A> => route;

/** A domain's routes by name (the name is the OpenAPI operationId). */
export type RouteTable = Record<string, Route<unknown, unknown>>;

/** `POST /api/v1/agents/{agent_id}`: API Gateway's route key, what it puts in the event's routeKey. */
export const routeKey = (route: Pick<Route, 'method' | 'path'>): string => `${route.method} ${route.path}`;

const ORDER: Record<NonNullable<Access['table']>, number> = { read: 1, readwrite: 2 };
const wider = <T extends 'read' | 'readwrite'>(a: T | undefined, b: T | undefined): T | undefined =>
  a === undefined ? b : b === undefined ? a : ORDER[a] >= ORDER[b] ? a : b;

/** The least access that covers all of `accesses`: a domain function's grants. */
export function unionAccess(accesses: Access[]): Access {
  const union: Access = {};
  const sendsTo = new Set<QueueKey>();
  const secrets = new Set<SecretKey>();
  for (const access of accesses) {
    union.table = wider(union.table, access.table);
    union.bucket = wider(union.bucket, access.bucket);
    for (const queue of access.sendsTo ?? []) sendsTo.add(queue);
    for (const secret of access.secrets ?? []) secrets.add(secret);
    if (access.email) union.email = true;
    if (access.manageConnections) union.manageConnections = true;
    if (access.languageModel) union.languageModel = true;
  }
  if (!union.table) delete union.table;
  if (!union.bucket) delete union.bucket;
  if (sendsTo.size > 0) union.sendsTo = [...sendsTo].sort();
  if (secrets.size > 0) union.secrets = [...secrets].sort();
  return union;
}
