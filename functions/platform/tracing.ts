import type { Tracer } from '@aws-lambda-powertools/tracer';
import { logger } from './logger.js';
import { errorName } from './programming-errors.js';

/**
 * X-Ray tracing of what a function calls, with the Powertools tracer: every AWS SDK client of the kernel
 * and the providers (DynamoDB, SQS, the relay's Management API, Bedrock) is captured (`traceClient`:
 * `captureAWSv3Client`, a subsegment per request, with its service, operation and retries), and every
 * outbound HTTP request of the process (http, https and `fetch`: the tracer's `captureHTTPsRequests`),
 * which covers the signed requests of platform/aws-http.ts (S3, Secrets Manager, SES) and the calls to
 * customers' tools, MCP servers and webhooks (a subsegment named by the host, with method, path and
 * status; never the query string or a body). Lambda's active tracing makes the invocation's segment.
 *
 * Only in Lambda (AWS_EXECUTION_ENV, as the tracer itself decides) and unless POWERTOOLS_TRACE_ENABLED
 * is `false`: locally, in tests and in the CLI there is no X-Ray daemon, so the tracer is not even
 * loaded (no X-Ray SDK, no "missing context" lines) and clients are left as they are. In Lambda it is
 * loaded while the function initialises (the top-level await below: Lambda waits for it before the
 * first invocation), so the first request of a cold start is traced like the rest; off Lambda the
 * await is of nothing.
 */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return (
    Boolean(env.AWS_EXECUTION_ENV) &&
    !env.AWS_SAM_LOCAL &&
    (env.POWERTOOLS_TRACE_ENABLED ?? '').toLowerCase() !== 'false'
  );
}

async function loadTracer(): Promise<Tracer | undefined> {
  try {
    const { Tracer } = await import('@aws-lambda-powertools/tracer');
    // captureHTTPsRequests (the default) patches http/https and subscribes to fetch's events.
    return new Tracer();
  } catch (error) {
    // Tracing lost is not a function lost: it runs untraced.
    logger.warn('tracer not loaded: the function runs untraced', { error: errorName(error) });
    return undefined;
  }
}

const tracer: Tracer | undefined = tracingWanted() ? await loadTracer() : undefined;

/** Whether this process traces (in Lambda, the tracer loaded). */
export const tracing = (): boolean => tracer !== undefined;

/** Traces the client's requests (each a subsegment of the invocation's trace) where tracing is on. */
export function traceClient<C extends object>(client: C): C {
  return tracer ? tracer.captureAWSv3Client(client) : client;
}
