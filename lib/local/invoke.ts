import { randomUUID } from 'node:crypto';
import { noteInvocation } from './metrics.js';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { runWithGrants } from '../../functions/platform/grants.js';
import { functionTimeoutSeconds, type FunctionSpec } from '../cloud/catalog-types.js';
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

/**
 * A function ran past its timeout (Lambda: "Task timed out after N seconds"): the invocation failed.
 * In Lambda the sandbox stops there; locally the handler's promise cannot be stopped, so its work may
 * go on in the background, but its answer is dropped and the trigger sees the failure, as in the cloud.
 */
export class FunctionTimeout extends Error {
  constructor(
    readonly functionId: string,
    readonly timeoutSeconds: number,
  ) {
    super(`${functionId}: Task timed out after ${timeoutSeconds} seconds`);
    this.name = 'FunctionTimeout';
  }
}

/** A Lambda context as the runtime would pass it, named after the catalog entry, with its deadline. */
export function lambdaContext(
  fn: FunctionSpec,
  region: string,
  awsRequestId: string = randomUUID(),
): Context {
  const timeoutMs = functionTimeoutSeconds(fn) * 1000;
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
 * Invokes a catalog function's handler with an event, as the Lambda runtime would: with the grants
 * its catalog entry declares (functions/platform/grants.ts: the table, queues, bucket, secrets and
 * SES refuse anything else, as IAM would), and within its timeout (the catalog's, as Lambda's: a
 * handler that overruns fails with FunctionTimeout, so the gateway answers 500, a queue message is
 * retried, a relay frame fails, as in the cloud). Every local trigger (gateway routes and function
 * URLs, queue pollers, the relay gateway, the scheduler) invokes through here. Work the handler leaves
 * running (not awaited) keeps the same grants.
 */
export async function invokeFunction(fn: FunctionSpec, event: unknown, region: string, requestId?: string) {
  const handler = await loadHandler(fn.entry);
  const started = performance.now();
  const timeoutSeconds = functionTimeoutSeconds(fn);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FunctionTimeout(fn.id, timeoutSeconds)), timeoutSeconds * 1000);
  });
  try {
    return await Promise.race([
      runWithGrants(fn.id, fn.access, () => handler(event, lambdaContext(fn, region, requestId))),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
    noteInvocation(fn.id, performance.now() - started);
  }
}
