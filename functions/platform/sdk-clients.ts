import { config } from './config.js';
import { traceClient } from './tracing.js';

interface MiddlewareStack {
  remove(name: string): boolean;
}

/**
 * What the kernel's AWS SDK clients (table, queue) leave out of every request, as work nobody uses:
 *  - everywhere, the logger middleware: it builds a filtered copy of each request's input and output
 *    (walking the service schema) for a logger, and none is configured (the SDK's no-op logger);
 *  - locally (STAGE=local), also the user-agent header, rebuilt for every request, and the recursion
 *    detection, which copies Lambda's X-Ray trace id into a header: the local stand-ins read neither,
 *    and the local stack is not Lambda. In the cloud both stay, as AWS expects them.
 * Costs about a sixth of the SDK's CPU per request locally (start-call's hot path, and everything
 * else), and changes nothing that is sent to AWS but the absent log.
 */
export function withoutUnusedMiddleware<C extends { middlewareStack: MiddlewareStack }>(client: C): C {
  client.middlewareStack.remove('loggerMiddleware');
  if (config().STAGE === 'local') {
    client.middlewareStack.remove('getUserAgentMiddleware');
    client.middlewareStack.remove('recursionDetectionMiddleware');
  }
  return client;
}

/**
 * A kernel AWS SDK client as every function uses it: the unused middleware left out (above) and, in
 * Lambda, its requests traced with X-Ray (platform/tracing.ts).
 */
export function sdkClient<C extends { middlewareStack: MiddlewareStack }>(client: C): C {
  return traceClient(withoutUnusedMiddleware(client));
}
