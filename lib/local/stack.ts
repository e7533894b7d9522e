import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SQSClient } from '@aws-sdk/client-sqs';
import { catalog as fullCatalog } from '../catalog.js';
import type { FunctionSpec } from '../catalog-types.js';
import { checkJava, startDynamoDbLocal } from './dynamodb.js';
import { applyEnvironment, stackEnvironment, type EnvironmentDefaults } from './environment.js';
import { LocalStackError } from './errors.js';
import { startFauxqsLocal } from './fauxqs.js';
import { startGateway } from './gateway.js';
import { LOCAL_CLIENT_ID, startIdentity } from './identity.js';
import { bold, green, label, say, warn } from './log.js';
import { defaultStateDir, repoRoot } from './paths.js';
import { startPollers } from './pollers.js';
import { readQuiescence, type QuiescenceReport } from './quiescence.js';
import { ensureResources, LOCAL_CREDENTIALS } from './resources-setup.js';
import { startScheduler, type Scheduler } from './scheduler.js';
import { registeredLocalServices, type LocalService } from './services.js';
import {
  readPreferredPorts,
  readStackState,
  removeStackState,
  stackStatePath,
  writePreferredPorts,
  writeStackState,
  type StackState,
} from './state.js';

export interface LocalStackOptions {
  /** Gateway port; 0 = any free port. Default: $PORT, else 3000. */
  port?: number;
  /** DynamoDB in memory (tests) instead of `<stateDir>/dynamodb`. Default: $LOCAL_IN_MEMORY. */
  inMemory?: boolean;
  /** Default: $LOCAL_STATE_DIR, else `.local` under the repository root. */
  stateDir?: string;
  /** Default: $AWS_REGION, else ap-southeast-2. */
  region?: string;
  /** Queue visibility locally. Default: $LOCAL_VISIBILITY_TIMEOUT_SECONDS, else 5. */
  visibilityTimeoutSeconds?: number;
  /** Receive loops per queue consumer. Default: $LOCAL_POLLER_CONCURRENCY, else 1. */
  pollerConcurrency?: number;
  /** Defaults for variables the environment does not set (e.g. POWERTOOLS_LOG_LEVEL). */
  defaults?: Partial<EnvironmentDefaults>;
  /** Functions to serve. Default: the whole catalog. */
  functions?: FunctionSpec[];
  /** Extra services. Default: those registered with registerLocalService (and lib/local/services/*). */
  services?: LocalService[];
  /** Start the scheduler. Default: true unless $LOCAL_SCHEDULER=off. */
  scheduler?: boolean;
  /** Print what starts. Default: true. */
  verbose?: boolean;
  /** One line per HTTP request. Default: when the log level is DEBUG or INFO. */
  accessLog?: boolean;
}

export interface LocalStack {
  state: StackState;
  statePath: string;
  env: Record<string, string>;
  /** Whether everything has settled (lib/local/quiescence.ts); also GET /_local/quiescence. */
  quiescence(): Promise<QuiescenceReport>;
  stop(): Promise<void>;
}

/** The gateway's local-only endpoint for the quiescence signal (stack.json `urls.quiescence`). */
export const QUIESCENCE_PATH = '/_local/quiescence';

const truthy = (value: string | undefined) => value === '1' || value === 'true' || value === 'yes';
const numberFrom = (value: string | undefined, fallback: number) => {
  const parsed = value === undefined || value === '' ? NaN : Number(value);
  return Number.isFinite(parsed) ? parsed : fallback;
};

/** Imports every module in lib/local/services/ (each calls registerLocalService). */
async function loadServiceModules(): Promise<void> {
  const dir = resolve(repoRoot, 'lib', 'local', 'services');
  if (!existsSync(dir)) return;
  const files = readdirSync(dir)
    .filter((f) => /\.(ts|js|mjs)$/.test(f) && !f.endsWith('.d.ts') && !/\.test\./.test(f))
    .sort();
  for (const file of files) await import(pathToFileURL(join(dir, file)).href);
}

/**
 * Starts everything `npm start` runs, in this process: DynamoDB Local (java child), fauxqs (SQS + S3),
 * the identity provider, the table/queues/bucket, the gateway, extra local services, queue pollers
 * and the scheduler; then writes `<stateDir>/stack.json`. `stop()` ends all of it.
 *
 * Besides the API (/api/v1) and the provider webhooks (/webhooks), the gateway serves one local-only
 * endpoint, never part of the cloud stack: `GET /_local/quiescence` (stack.json `urls.quiescence`)
 * → `{ quiescent, busy, queues, pollers, scheduler, gateway, services }`, quiescent when every queue is
 * empty with nothing in flight or delayed, no poller has a batch in hand, no scheduled run or request
 * is going on and the simulators have nothing left to send (lib/local/quiescence.ts). Tests wait for
 * it instead of sleeping (test/helpers/wait.ts waitForQuiescence).
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const env = process.env;
  const stateDir = options.stateDir ? resolve(options.stateDir) : defaultStateDir();
  const inMemory = options.inMemory ?? truthy(env.LOCAL_IN_MEMORY);
  const region = options.region ?? (env.AWS_REGION || 'ap-southeast-2');
  const gatewayPort = options.port ?? numberFrom(env.PORT, 3000);
  const visibilityTimeoutSeconds =
    options.visibilityTimeoutSeconds ?? numberFrom(env.LOCAL_VISIBILITY_TIMEOUT_SECONDS, 5);
  const pollerConcurrency = options.pollerConcurrency ?? numberFrom(env.LOCAL_POLLER_CONCURRENCY, 1);
  const functions = options.functions ?? fullCatalog;
  const verbose = options.verbose ?? true;
  const print = (line: string) => {
    if (verbose) say(line);
  };
  const statePath = stackStatePath(stateDir);
  checkJava();

  const running = readStackState(statePath);
  if (running && running.pid !== process.pid) {
    throw new LocalStackError(
      `A local stack is already running from ${stateDir} (pid ${running.pid}, ${running.base_url}). ` +
        'Stop it first, or set LOCAL_STATE_DIR to another folder.',
    );
  }

  // Everything started so far, stopped in reverse order (also when start-up fails half-way).
  const stoppers: { name: string; stop: () => Promise<void> | void }[] = [];
  const stopAll = async () => {
    while (stoppers.length > 0) {
      const { name, stop } = stoppers.pop()!;
      try {
        await stop();
      } catch (error) {
        warn(`stopping ${name} failed`, error);
      }
    }
  };

  try {
    const preferred = inMemory ? {} : readPreferredPorts(stateDir);
    print(`starting DynamoDB Local, fauxqs and the identity provider (${inMemory ? 'in memory' : stateDir})`);
    const dynamoDbPromise = startDynamoDbLocal({
      inMemory,
      dataDir: join(stateDir, 'dynamodb'),
      preferredPort: preferred.dynamodb,
      region,
    });
    const fauxqsPromise = startFauxqsLocal({ region, preferredPort: preferred.fauxqs });
    const identityPromise = startIdentity({
      clientId: env.JWT_CLIENT_ID || LOCAL_CLIENT_ID,
      keyFile: inMemory ? undefined : join(stateDir, 'identity-key.json'),
      preferredPort: preferred.identity,
    });
    const settled = await Promise.allSettled([dynamoDbPromise, fauxqsPromise, identityPromise]);
    const names = ['DynamoDB Local', 'fauxqs', 'identity provider'];
    settled.forEach((result, i) => {
      if (result.status === 'fulfilled') stoppers.push({ name: names[i], stop: result.value.stop });
    });
    const failure = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) throw failure.reason;
    const [dynamoDb, fauxqs, identity] = await Promise.all([dynamoDbPromise, fauxqsPromise, identityPromise]);
    print(
      `${label('DynamoDB Local')} ${dynamoDb.endpoint}  ${inMemory ? '(in memory)' : `(data: ${dynamoDb.dataDir})`}`,
    );
    print(`${label('fauxqs (SQS + S3)')} ${fauxqs.endpoint}`);
    print(`${label('identity provider')} ${identity.issuer}  (token: POST ${identity.tokenEndpoint})`);
    if (!inMemory)
      writePreferredPorts(stateDir, {
        dynamodb: dynamoDb.port,
        fauxqs: fauxqs.port,
        identity: identity.port,
      });

    const resources = await ensureResources({
      region,
      dynamoDbEndpoint: dynamoDb.endpoint,
      sqsEndpoint: fauxqs.endpoint,
      s3Endpoint: fauxqs.endpoint,
      visibilityTimeoutSeconds,
    });
    print(
      `${label('resources')} table ${resources.tableName}, bucket ${resources.bucketName}, ` +
        `${Object.keys(resources.queues).length} queues + DLQs (visibility ${visibilityTimeoutSeconds} s)`,
    );

    const logLevel = (
      env.POWERTOOLS_LOG_LEVEL ||
      options.defaults?.POWERTOOLS_LOG_LEVEL ||
      'INFO'
    ).toUpperCase();
    let gateway;
    try {
      gateway = await startGateway({
        port: gatewayPort,
        functions,
        region,
        accessLog: options.accessLog ?? (logLevel === 'INFO' || logLevel === 'DEBUG' || logLevel === 'TRACE'),
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        throw new LocalStackError(
          `Port ${gatewayPort} is in use: set PORT to another port (PORT=0: any free port)`,
        );
      }
      throw error;
    }
    stoppers.push({ name: 'gateway', stop: gateway.stop });

    const stackEnv = stackEnvironment({
      region,
      dynamoDbEndpoint: dynamoDb.endpoint,
      sqsEndpoint: fauxqs.endpoint,
      s3Endpoint: fauxqs.endpoint,
      resources,
      issuer: identity.issuer,
      jwksUri: identity.jwksUri,
      clientId: identity.clientId,
      gatewayUrl: gateway.url,
      defaults: options.defaults,
    });
    applyEnvironment(stackEnv);
    gateway.setReady();
    for (const fn of functions) {
      if (!existsSync(resolve(repoRoot, fn.entry)))
        warn(`${fn.id}: entry file ${fn.entry} does not exist (calls will fail)`);
    }
    const routes = gateway.router.targets;
    const httpCount = routes.filter((t) => t.kind === 'route').length;
    const urlCount = routes.filter((t) => t.kind === 'function-url').length;
    print(
      `${label('gateway')} ${bold(gateway.url)}  ` +
        `(${plural(httpCount, 'route')}, ${plural(urlCount, 'webhook URL')} under /webhooks)`,
    );

    // Extra services (demo webhook receiver, simulators…).
    const ports: Record<string, number> = {
      gateway: gateway.port,
      dynamodb: dynamoDb.port,
      fauxqs: fauxqs.port,
      identity: identity.port,
    };
    const serviceInfo: StackState['services'] = [];
    if (!options.services) await loadServiceModules();
    const services = options.services ?? registeredLocalServices();
    for (const service of services) {
      const started = await service.start({
        baseUrl: gateway.url,
        env: { ...stackEnv },
        stateDir,
        inMemory,
        region,
        say: (message) => print(`${dimName(service.name)} ${message}`),
      });
      if (service.stop) stoppers.push({ name: service.name, stop: () => service.stop?.() });
      if (started?.env) {
        Object.assign(stackEnv, started.env);
        Object.assign(process.env, started.env);
      }
      if (started?.port) ports[service.name] = started.port;
      serviceInfo.push({ name: service.name, url: started?.url, description: started?.description });
      print(
        `${label(service.name)} ${started?.url ?? 'started'}${started?.description ? `  (${started.description})` : ''}`,
      );
    }

    const sqs = new SQSClient({ region, endpoint: fauxqs.endpoint, credentials: LOCAL_CREDENTIALS });
    stoppers.push({ name: 'SQS client', stop: () => sqs.destroy() });
    const pollers = startPollers({
      functions,
      queues: resources.queues,
      sqs,
      region,
      visibilityTimeoutSeconds,
      concurrency: pollerConcurrency,
    });
    stoppers.push({
      name: 'pollers',
      stop: async () => void (await Promise.all(pollers.map((p) => p.stop()))),
    });
    for (const fn of functions.filter((f) => f.queue)) {
      print(`${label('poller')} ${fn.queue!.name} → ${fn.id} (batch ${fn.queue!.batchSize})`);
    }

    const schedulerEnabled = options.scheduler ?? env.LOCAL_SCHEDULER !== 'off';
    const scheduled = functions.filter((f) => f.schedule);
    let scheduler: Scheduler | undefined;
    if (schedulerEnabled) {
      scheduler = startScheduler({ functions, region });
      stoppers.push({ name: 'scheduler', stop: scheduler.stop });
    }
    for (const fn of scheduled) {
      print(
        `${label('schedule')} ${fn.id} every ${fn.schedule!.localEverySeconds} s (cloud: ${fn.schedule!.expression})` +
          (schedulerEnabled ? '' : ' — off (LOCAL_SCHEDULER=off)'),
      );
    }

    const quiescence = () =>
      readQuiescence({
        sqs,
        queues: resources.queues,
        functions,
        pollers,
        scheduler,
        services,
        gatewayInFlight: gateway.inFlight,
      });
    gateway.setLocalRoute(QUIESCENCE_PATH, quiescence);

    const state: StackState = {
      base_url: gateway.url,
      pid: process.pid,
      started_at: new Date().toISOString(),
      state_dir: stateDir,
      in_memory: inMemory,
      ports,
      urls: {
        gateway: gateway.url,
        dynamodb: dynamoDb.endpoint,
        sqs: fauxqs.endpoint,
        s3: fauxqs.endpoint,
        identity_issuer: identity.issuer,
        identity_jwks: identity.jwksUri,
        identity_token: identity.tokenEndpoint,
        quiescence: `${gateway.url}${QUIESCENCE_PATH}`,
      },
      env: stackEnv,
      services: serviceInfo,
      functions: {
        http: httpCount,
        function_urls: urlCount,
        pollers: functions.filter((f) => f.queue).map((f) => f.id),
        schedules: scheduled.map((f) => f.id),
      },
    };
    writeStackState(statePath, state);
    stoppers.push({ name: 'stack.json', stop: () => removeStackState(statePath) });
    print(`${label('state')} ${statePath}`);

    let stopping: Promise<void> | undefined;
    return {
      state,
      statePath,
      env: stackEnv,
      quiescence,
      stop: () => (stopping ??= stopAll()),
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

const dimName = (name: string) => `${name}:`;
const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** The ready-to-paste lines printed once the stack is up. */
export function banner(state: StackState): string {
  const lines = [
    '',
    green(bold(`Local stack ready on ${state.base_url}`)),
    '',
    `  curl ${state.base_url}/api/v1/health`,
    '',
    '  Get a token for a dashboard user (a Cognito-style access token from the local identity provider):',
    '    npm run cli -- token --email you@example.com',
    '  Seed a demo organisation, workspace, agent and number:',
    '    npm run --silent cli -- seed --json > .local/demo.json',
    '',
    `  State: ${join(state.state_dir, 'stack.json')}   Stop: Ctrl-C`,
    '',
  ];
  return lines.join('\n');
}

/** A second signal within this window is the same stop request delivered twice. */
const DUPLICATE_SIGNAL_WINDOW_MS = 2000;

/**
 * Stops the stack on SIGINT/SIGTERM (a later second signal exits at once; java is killed on exit either
 * way) and exits with code 0 once everything has stopped.
 */
export function stopOnSignals(stack: LocalStack, onStopped: () => void = () => undefined): void {
  let firstSignalAt: number | undefined;
  const handle = (signal: NodeJS.Signals) => {
    if (firstSignalAt !== undefined) {
      // Ctrl-C under npm arrives twice (from the terminal and forwarded by npm): only a signal sent
      // well after the first one means "stop now, without cleaning up".
      if (Date.now() - firstSignalAt > DUPLICATE_SIGNAL_WINDOW_MS)
        process.exit(signal === 'SIGINT' ? 130 : 143);
      return;
    }
    firstSignalAt = Date.now();
    // Whatever hangs, be gone within 15 s (java is killed on exit).
    setTimeout(() => process.exit(1), 15_000).unref();
    void stack
      .stop()
      .catch((error: unknown) => warn('stopping failed', error))
      .finally(() => {
        onStopped();
        process.exit(0);
      });
  };
  process.on('SIGINT', handle);
  process.on('SIGTERM', handle);
}
