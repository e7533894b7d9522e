/**
 * A background process of the local stack (see lib/local/background.ts), by role: `stand-ins` runs
 * fauxqs; `work` runs the local services, the queue pollers and the scheduler, at a lower priority.
 * Driven by the gateway's process over the IPC channel; started by startBackground, never by hand.
 */
import './node-version-warning.js';
import { existsSync, readdirSync } from 'node:fs';
import { constants, setPriority } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type {
  BackgroundCall,
  BackgroundCalls,
  BackgroundReply,
  BackgroundRequest,
  BackgroundRole,
  StartedService,
} from './background.js';
import { applyEnvironment } from './environment.js';
import { startFauxqsLocal, type FauxqsLocal } from './fauxqs.js';
import type { Gateway } from './gateway.js';
import { say, warn } from './log.js';
import { installMetrics, processMetrics } from './metrics.js';
import { repoRoot } from './paths.js';
import { queueActivity, workActivity, type WorkSources } from './quiescence.js';
import type { QueuePoller } from './pollers.js';
import type { Scheduler } from './scheduler.js';
import { registeredLocalServices, type LocalService } from './services.js';

const role = process.argv[2] as BackgroundRole;
if (!process.send || (role !== 'stand-ins' && role !== 'work')) {
  process.stderr.write('lib/local/background-process.ts is started by the local stack (npm start)\n');
  process.exit(1);
}

// Ctrl-C reaches every process of the terminal's group: the gateway's process stops this one in order.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);

/** The work behind the API yields to it when the machine is busy (0 keeps the normal priority). */
const BACKGROUND_NICE = Number(process.env.LOCAL_BACKGROUND_NICE ?? 10);
if (role === 'work' && Number.isFinite(BACKGROUND_NICE) && BACKGROUND_NICE > 0) {
  try {
    setPriority(Math.min(constants.priority.PRIORITY_LOW, Math.round(BACKGROUND_NICE)));
  } catch {
    // not allowed here: run at the normal priority
  }
}

let fauxqs: FauxqsLocal | undefined;
let work: WorkSources | undefined;
const startedServices: LocalService[] = [];
let pollers: QueuePoller[] = [];
let scheduler: Scheduler | undefined;
let stopSqs: (() => void) | undefined;
let webhooks: Gateway | undefined;

/** Imports every module in lib/local/services/ (each calls registerLocalService). */
async function loadServiceModules(): Promise<void> {
  const dir = resolve(repoRoot, 'lib', 'local', 'services');
  if (!existsSync(dir)) return;
  const files = readdirSync(dir)
    .filter((f) => /\.(ts|js|mjs)$/.test(f) && !f.endsWith('.d.ts') && !/\.test\./.test(f))
    .sort();
  for (const file of files) await import(pathToFileURL(join(dir, file)).href);
}

async function stopWork(): Promise<void> {
  const steps: [string, () => Promise<void> | void][] = [
    ['scheduler', () => scheduler?.stop()],
    ['pollers', async () => void (await Promise.all(pollers.map((p) => p.stop())))],
    ['SQS client', () => stopSqs?.()],
    ...[...startedServices]
      .reverse()
      .map((service): [string, () => Promise<void> | void] => [service.name, () => service.stop?.()]),
    ['provider webhooks', () => webhooks?.stop()],
  ];
  scheduler = undefined;
  pollers = [];
  stopSqs = undefined;
  webhooks = undefined;
  startedServices.length = 0;
  for (const [name, stop] of steps) {
    try {
      await stop();
    } catch (error) {
      warn(`stopping ${name} failed`, error);
    }
  }
}

async function stopAll(): Promise<void> {
  await stopWork();
  try {
    await fauxqs?.stop();
  } catch (error) {
    warn('stopping fauxqs failed', error);
  }
  fauxqs = undefined;
}

const handlers: {
  [C in BackgroundCall]: (argument: BackgroundCalls[C][0]) => Promise<BackgroundCalls[C][1]>;
} = {
  async startFauxqs({ region, preferredPort }) {
    fauxqs = await startFauxqsLocal({ region, preferredPort });
    return { endpoint: fauxqs.endpoint, port: fauxqs.port };
  },

  async queueActivity({ queues }) {
    if (!fauxqs) throw new Error('fauxqs is not running in this process');
    return queueActivity(fauxqs.queueCounts, queues);
  },

  async startWebhooks({ env, functionIds, region, accessLog }) {
    // The handlers and services read the stack's environment when their modules load: set it first.
    applyEnvironment(env);
    installMetrics();
    const [{ catalog }, { startGateway }] = await Promise.all([
      import('../cloud/catalog.js'),
      import('./gateway.js'),
    ]);
    webhooks = await startGateway({
      port: 0,
      functions: catalog.filter((fn) => fn.functionUrl && functionIds.includes(fn.id)),
      region,
      accessLog,
    });
    webhooks.setReady();
    return { url: webhooks.url, port: webhooks.port };
  },

  async startServices({ baseUrl, webhooksUrl, env, stateDir, inMemory, region, verbose }) {
    applyEnvironment(env);
    installMetrics();
    await loadServiceModules();
    const started: StartedService[] = [];
    const stackEnv = { ...env };
    for (const service of registeredLocalServices()) {
      const result = await service.start({
        baseUrl,
        webhooksUrl,
        env: { ...stackEnv },
        stateDir,
        inMemory,
        region,
        say: (message) => {
          if (verbose) say(`${service.name}: ${message}`);
        },
      });
      startedServices.push(service);
      if (result?.env) {
        Object.assign(stackEnv, result.env);
        Object.assign(process.env, result.env);
      }
      started.push({
        name: service.name,
        url: result?.url,
        port: result?.port,
        env: result?.env,
        description: result?.description,
        reportsActivity: typeof service.activity === 'function',
      });
    }
    return started;
  },

  async startConsumers(options) {
    applyEnvironment(options.env);
    const [{ SQSClient }, { catalog }, { startPollers }, { startScheduler }, { LOCAL_CREDENTIALS }] =
      await Promise.all([
        import('@aws-sdk/client-sqs'),
        import('../cloud/catalog.js'),
        import('./pollers.js'),
        import('./scheduler.js'),
        import('./resources-setup.js'),
      ]);
    const functions = catalog.filter((fn) => options.functionIds.includes(fn.id));
    const sqs = new SQSClient({
      region: options.region,
      endpoint: options.sqsEndpoint,
      credentials: LOCAL_CREDENTIALS,
    });
    stopSqs = () => sqs.destroy();
    pollers = startPollers({
      functions,
      queues: options.queues,
      sqs,
      region: options.region,
      visibilityTimeoutSeconds: options.visibilityTimeoutSeconds,
      concurrency: options.pollerConcurrency,
    });
    if (options.scheduler) scheduler = startScheduler({ functions, region: options.region });
    work = {
      functions,
      pollers,
      scheduler,
      services: [...startedServices],
      webhooksInFlight: () => webhooks?.inFlight() ?? 0,
    };
    return { pollers: pollers.map((p) => p.name) };
  },

  async activity() {
    if (!work) throw new Error('the work process has not started its consumers');
    return workActivity(work);
  },

  async metrics() {
    return processMetrics();
  },

  async stopWork() {
    await stopWork();
    return null;
  },

  async stop() {
    await stopAll();
    return null;
  },
};

process.on('message', (message: BackgroundRequest) => {
  const handle = handlers[message.call] as (argument: unknown) => Promise<unknown>;
  void Promise.resolve()
    .then(() => handle(message.argument))
    .then(
      (result): BackgroundReply => ({ id: message.id, result }),
      (error: unknown): BackgroundReply => ({
        id: message.id,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      }),
    )
    .then((reply) => {
      process.send?.(reply, () => {
        if (message.call === 'stop') process.exit(0);
      });
    });
});

// The gateway's process is gone (stopped, crashed or killed): stop too, at once.
process.on('disconnect', () => {
  const deadline = setTimeout(() => process.exit(0), 3000);
  deadline.unref();
  void stopAll().finally(() => process.exit(0));
});
