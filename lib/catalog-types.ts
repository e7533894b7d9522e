import type { ZodType } from 'zod';
import type { QueueKey } from './resources.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** An HTTP API route; `path` uses API Gateway's `{param}` syntax. */
export interface HttpRoute {
  method: HttpMethod;
  path: string;
  summary: string;
  /** Who may call it, for the OpenAPI document: none, a user's JWT, or a JWT or API key. */
  auth: 'none' | 'user' | 'user_or_api_key';
  body?: ZodType;
  query?: ZodType;
  /** Success response schema (documentation only). */
  response?: ZodType;
  successStatus?: number;
}

export interface FunctionSpec {
  /** Unique PascalCase id: the CDK construct id and the local stack's name for the function. */
  id: string;
  /** Handler file relative to the repository root; it exports `handler`. */
  entry: string;
  http?: HttpRoute[];
  /** A provider webhook served on its own Lambda function URL (locally under this path). */
  functionUrl?: { path: string };
  queue?: { name: QueueKey; batchSize: number };
  /** EventBridge schedule expression, and how often the local scheduler fires it. */
  schedule?: { expression: string; localEverySeconds: number };
  access: {
    table?: 'read' | 'readwrite';
    bucket?: 'read' | 'readwrite';
    sendsTo?: QueueKey[];
    /** Secrets Manager secrets the function reads (cloud adapters' credentials). */
    secrets?: ('telephony' | 'payments' | 'identity-webhook')[];
    /** Sends email through SES (granted ses:SendEmail on the sender identity; EMAIL_FROM set). */
    email?: boolean;
  };
  timeoutSeconds?: number;
  memoryMb?: number;
}
