import { buildApp } from 'fauxqs';
import { preferredOrFreePort } from './ports.js';

export interface FauxqsLocal {
  /** One endpoint for SQS and S3 (path-style S3). */
  endpoint: string;
  port: number;
  stop(): Promise<void>;
}

type BuildQueueUrl = (queueName: string, port: string, requestHost: string, region: string) => string;
let queueUrlsPatched = false;

/**
 * fauxqs names queues `http://sqs.<region>.localhost:<port>/…`, and the AWS SDK sends each request to
 * its QueueUrl's host, which plain DNS does not resolve. Make queue URLs point at 127.0.0.1 instead,
 * so every process (handlers, the CLI, jest workers) reaches them with an unmodified SQS client.
 */
async function patchQueueUrls(): Promise<void> {
  if (queueUrlsPatched) return;
  const appUrl = import.meta.resolve('fauxqs');
  const storeModule = (await import(new URL('./sqs/sqsStore.js', appUrl).href)) as {
    SqsStore?: { prototype: { buildQueueUrl: BuildQueueUrl } };
  };
  const prototype = storeModule.SqsStore?.prototype;
  if (!prototype || typeof prototype.buildQueueUrl !== 'function') {
    throw new Error('fauxqs internals changed: SqsStore.buildQueueUrl not found (pin fauxqs 1.x)');
  }
  const original = prototype.buildQueueUrl;
  prototype.buildQueueUrl = function buildQueueUrl(queueName, port, requestHost, region) {
    const fauxqsUrl = original.call(this, queueName, port, requestHost, region);
    const path = new URL(fauxqsUrl).pathname;
    return `http://${port ? `127.0.0.1:${port}` : requestHost}${path}`;
  };
  queueUrlsPatched = true;
}

/** fauxqs in library mode, listening on 127.0.0.1 only. */
export async function startFauxqsLocal(options: {
  region: string;
  preferredPort?: number;
}): Promise<FauxqsLocal> {
  await patchQueueUrls();
  const app = buildApp({ logger: false, defaultRegion: options.region });
  const port = await preferredOrFreePort(options.preferredPort);
  await app.listen({ port, host: '127.0.0.1' });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    stop: async () => {
      await app.close();
    },
  };
}
