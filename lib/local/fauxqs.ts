import { buildApp } from 'fauxqs';
import { preferredOrFreePort } from './ports.js';

export interface FauxqsLocal {
  /** One endpoint for SQS and S3 (path-style S3). */
  endpoint: string;
  port: number;
  /**
   * A queue's counts, read from fauxqs's own store (what GetQueueAttributes answers, without a
   * request): visible, received and not yet deleted, delayed. Undefined for an unknown queue.
   */
  queueCounts(queueUrl: string): { visible: number; inFlight: number; delayed: number } | undefined;
  stop(): Promise<void>;
}

interface SqsQueueInternals {
  getAttribute(name: string): string | undefined;
}
interface Stores {
  sqsStore: {
    getQueue(url: string): SqsQueueInternals | undefined;
    getQueueByName(name: string): SqsQueueInternals | undefined;
  };
  snsStore: unknown;
  s3Store: unknown;
}
type StoreClass = new () => unknown;

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

/** fauxqs's stores, made here so the stack can read its queues' counts without a request. */
async function newStores(): Promise<Stores> {
  const appUrl = import.meta.resolve('fauxqs');
  const load = async (path: string, name: string): Promise<StoreClass> => {
    const module = (await import(new URL(path, appUrl).href)) as Record<string, unknown>;
    const store = module[name];
    if (typeof store !== 'function')
      throw new Error(`fauxqs internals changed: ${name} not found (pin fauxqs 1.x)`);
    return store as StoreClass;
  };
  const [SqsStore, SnsStore, S3Store] = await Promise.all([
    load('./sqs/sqsStore.js', 'SqsStore'),
    load('./sns/snsStore.js', 'SnsStore'),
    load('./s3/s3Store.js', 'S3Store'),
  ]);
  return { sqsStore: new SqsStore(), snsStore: new SnsStore(), s3Store: new S3Store() } as Stores;
}

type FauxqsApp = ReturnType<typeof buildApp>;

/** A page on this machine (the dashboard): the origins the bucket's CORS rule admits locally. */
const LOOPBACK_ORIGIN = /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/;

/**
 * The bucket's CORS rule, as the cloud bucket has one for the dashboard's origin: the dashboard PUTs
 * import files to presigned URLs and reads recordings from them. fauxqs has no CORS of its own.
 */
function allowBrowserOrigins(app: FauxqsApp): void {
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (typeof origin !== 'string' || !LOOPBACK_ORIGIN.test(origin)) return;
    void reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method']) {
      await reply
        .code(204)
        .header('access-control-allow-methods', 'GET, HEAD, PUT')
        .header('access-control-allow-headers', request.headers['access-control-request-headers'] ?? '')
        .header('access-control-max-age', '600')
        .send();
    }
  });
}

/** fauxqs in library mode, listening on 127.0.0.1 only. */
export async function startFauxqsLocal(options: {
  region: string;
  preferredPort?: number;
}): Promise<FauxqsLocal> {
  await patchQueueUrls();
  const stores = await newStores();
  const app = buildApp({
    logger: false,
    defaultRegion: options.region,
    stores: stores as unknown as NonNullable<Parameters<typeof buildApp>[0]>['stores'],
  });
  allowBrowserOrigins(app);
  const port = await preferredOrFreePort(options.preferredPort);
  await app.listen({ port, host: '127.0.0.1' });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    queueCounts: (queueUrl) => {
      const queue =
        stores.sqsStore.getQueue(queueUrl) ?? stores.sqsStore.getQueueByName(queueUrl.split('/').pop() ?? '');
      if (!queue) return undefined;
      const count = (name: string) => Number(queue.getAttribute(name) ?? 0);
      return {
        visible: count('ApproximateNumberOfMessages'),
        inFlight: count('ApproximateNumberOfMessagesNotVisible'),
        delayed: count('ApproximateNumberOfMessagesDelayed'),
      };
    },
    stop: async () => {
      await app.close();
    },
  };
}
