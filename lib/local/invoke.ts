import { randomUUID } from 'node:crypto';
import { noteInvocation } from './metrics.js';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { runWithGrants } from '../../functions/platform/grants.js';
import type { FunctionSpec } from '../cloud/catalog-types.js';
import { repoRoot } from './paths.js';

/** What a catalog entry file exports: a Lambda handler (middy or plain async function). */
export type LambdaHandler = (event: unknown, context: Context) => unknown;

const loaded = new Map<string, Promise<LambdaHandler>>();

/** Imports an entry file once (lazily, on first use) and returns its `handler` export. */
export function loadHandler(entry: string): Promise<LambdaHandler> {
  let handler = loaded.get(entry);
  if (!handler) {
    handler = import(pathToFileURL(resolve(repoRoot, entry)).href).then((module: { handler?: unknown }) => {
      if (typeof module.handler !== 'function')
        throw new Error(`${entry} does not export a function 'handler'`);
      return module.handler as LambdaHandler;
    });
    handler.catch(() => loaded.delete(entry)); // a fixed file is picked up on the next call
    loaded.set(entry, handler);
  }
  return handler;
}

const DEFAULT_TIMEOUT_SECONDS = 30;

/** A Lambda context as the runtime would pass it, named after the catalog entry. */
export function lambdaContext(
  fn: FunctionSpec,
  region: string,
  awsRequestId: string = randomUUID(),
): Context {
  const timeoutMs = (fn.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
  const deadline = Date.now() + timeoutMs;
  const functionName = fn.id;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:000000000000:function:${functionName}`,
    memoryLimitInMB: String(fn.memoryMb ?? 1024),
    awsRequestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/${functionName}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * Invokes a catalog function's handler with an event, as the Lambda runtime would, with the grants
 * its catalog entry declares (functions/platform/grants.ts): the table, queues, bucket, secrets and
 * SES refuse anything else, as IAM would. Every local trigger (gateway routes and function URLs,
 * queue pollers, the scheduler) invokes through here. Work the handler leaves running (not awaited)
 * keeps the same grants.
 */
export async function invokeFunction(fn: FunctionSpec, event: unknown, region: string, requestId?: string) {
  const handler = await loadHandler(fn.entry);
  const started = performance.now();
  try {
    return await runWithGrants(fn.id, fn.access, () => handler(event, lambdaContext(fn, region, requestId)));
  } finally {
    noteInvocation(fn.id, performance.now() - started);
  }
}
