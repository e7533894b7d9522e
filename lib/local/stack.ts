import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { catalog as fullCatalog } from '../cloud/catalog.js';
import type { FunctionSpec } from '../cloud/catalog-types.js';
import { startBackground, type Background } from './background.js';
import { checkJava, startDynamoDbLocal } from './dynamodb.js';
import { applyEnvironment, stackEnvironment, type EnvironmentDefaults } from './environment.js';
import { LocalStackError } from './errors.js';
import { startGateway } from './gateway.js';
import { dashboardCsp, ensureWebBuild, webSite } from './web.js';
import { LOCAL_CLIENT_ID, startIdentity } from './identity.js';
import { bold, green, label, say, warn } from './log.js';
import { installMetrics, processMetrics, stackMetrics, type StackMetrics } from './metrics.js';
import { cliCommand, defaultStateDir, repoRoot } from './paths.js';
import { quiescenceReport, type QuiescenceReport } from './quiescence.js';
import { startRelayGateway } from './relay-gateway.js';
import { ensureResources } from './resources-setup.js';
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
  /** Functions to serve (entries of lib/catalog.ts). Default: the whole catalog. */
  functions?: FunctionSpec[];
  /** Start the scheduler. Default: true unless $LOCAL_SCHEDULER=off. */
  scheduler?: boolean;
  /** Print what starts. Default: true. */
  verbose?: boolean;
  /** One line per HTTP request. Default: when the log level is DEBUG or INFO. */
  accessLog?: boolean;
  /** Build the dashboard when web/dist is missing or stale, and serve it at `/`. Default: unless $LOCAL_WEB=off. */
  web?: boolean;
}

export interface LocalStack {
  state: StackState;
  statePath: string;
  env: Record<string, string>;
  /** Whether everything has settled (lib/local/quiescence.ts); also GET /_local/quiescence. */
  quiescence(): Promise<QuiescenceReport>;
  /** What the handlers asked of DynamoDB and SQS, and the CPU used (lib/local/metrics.ts); also GET /_local/metrics. */
  metrics(): Promise<StackMetrics>;
  stop(): Promise<void>;
}

/** `npm run bench`'s floor under a turn, served beside the turns (lib/bench/relay-floor-handler.ts). */
async function benchRelayFloor(): Promise<Record<string, FunctionSpec[]>> {
  if (process.env.LOCAL_BENCH_RELAY_FLOOR !== '1') return {};
  const { RELAY_FLOOR_FUNCTION, RELAY_FLOOR_PATH } = await import('../tools/bench/relay-floor-handler.js');
  return { [RELAY_FLOOR_PATH]: [RELAY_FLOOR_FUNCTION] };
}

/** The gateway's local-only endpoint for the quiescence signal (stack.json `urls.quiescence`). */
export const QUIESCENCE_PATH = '/_local/quiescence';
/** The gateway's local-only endpoint for the cost counters (stack.json `urls.metrics`). */
export const METRICS_PATH = '/_local/metrics';

const truthy = (value: string | undefined) => value === '1' || value === 'true' || value === 'yes';
const numberFrom = (value: string | undefined, fallback: number) => {
  const parsed = value === undefined || value === '' ? NaN : Number(value);
  return Number.isFinite(parsed) ? parsed : fallback;
};

/**
 * Starts everything `npm start` runs: DynamoDB Local (java child), fauxqs (SQS + S3), the identity
 * provider, the table/queues/bucket, the gateway, extra local services, queue pollers and the
 * scheduler; then writes `<stateDir>/stack.json`. `stop()` ends all of it. The gateway, the voice
 * relay's WebSocket API, the identity provider and DynamoDB Local run from this process; fauxqs from a process of its own, and the
 * services, the pollers and the scheduler from a work process at a lower priority (both started
 * here, lib/local/background.ts), so that the work behind the API never starves the API.
 *
 * Besides the API (/api/v1) and the provider webhooks (/webhooks), the gateway serves one local-only
 * endpoint, never part of the cloud stack: `GET /_local/quiescence` (stack.json `urls.quiescence`)
 * → `{ quiescent, busy, queues, pollers, scheduler, gateway, services }`, quiescent when every queue is
 * empty with nothing in flight or delayed, no poller has a batch in hand, no scheduled run or request
 * is going on and the simulators have nothing left to send (lib/local/quiescence.ts). Tests wait for
 * it instead of sleeping (test/helpers/wait.ts waitForQuiescence). `GET /_local/metrics` (stack.json
 * `urls.metrics`) → the handlers' DynamoDB requests by command, SQS messages sent and the CPU of both
 * processes since they started (lib/local/metrics.ts; npm run bench reads it).
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

  let stopping: Promise<void> | undefined;
  try {
    const preferred = inMemory ? {} : readPreferredPorts(stateDir);
    print(`starting DynamoDB Local, fauxqs and the identity provider (${inMemory ? 'in memory' : stateDir})`);
    const onUnexpectedExit = (role: string) => (how: string) => {
      if (stopping) return;
      warn(`the local stack's ${role} process ended (${how}): stopping the stack`);
      void (stopping ??= stopAll()).finally(() => process.exit(1));
    };
    const standIns: Background = startBackground({
      role: 'stand-ins',
      onUnexpectedExit: onUnexpectedExit('stand-ins (fauxqs)'),
    });
    const work: Background = startBackground({
      role: 'work',
      onUnexpectedExit: onUnexpectedExit('work (services, pollers, scheduler)'),
    });
    const dynamoDbPromise = startDynamoDbLocal({
      inMemory,
      dataDir: join(stateDir, 'dynamodb'),
      preferredPort: preferred.dynamodb,
      region,
    });
    const fauxqsPromise = standIns.call('startFauxqs', { region, preferredPort: preferred.fauxqs });
    const identityPromise = startIdentity({
      clientId: env.JWT_CLIENT_ID || LOCAL_CLIENT_ID,
      keyFile: inMemory ? undefined : join(stateDir, 'identity-key.json'),
      preferredPort: preferred.identity,
    });
    const webWanted = options.web ?? env.LOCAL_WEB !== 'off';
    const webBuild = webWanted ? ensureWebBuild(print) : Promise.resolve();
    const settled = await Promise.allSettled([dynamoDbPromise, fauxqsPromise, identityPromise, webBuild]);
    const [dynamoDbStarted, , identityStarted] = settled;
    if (dynamoDbStarted.status === 'fulfilled')
      stoppers.push({ name: 'DynamoDB Local', stop: dynamoDbStarted.value.stop });
    if (identityStarted.status === 'fulfilled')
      stoppers.push({ name: 'identity provider', stop: identityStarted.value.stop });
    // Last to go but the two above: fauxqs; before it, the work process (what is left of it).
    stoppers.push({ name: 'fauxqs', stop: () => standIns.stop() });
    stoppers.push({ name: 'work process', stop: () => work.stop() });
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
    const accessLog = () =>
      options.accessLog ?? (logLevel === 'INFO' || logLevel === 'DEBUG' || logLevel === 'TRACE');
    // Read when asked: the relay's URL is known once the services have started.
    let relayUrl = () => '';
    const web = webWanted
      ? webSite({
          config: () => ({
            api_base: '',
            oidc_authority: identity.issuer,
            client_id: identity.clientId,
            relay_url: relayUrl(),
            logout_url: '',
            scope: 'openid email',
          }),
          csp: () =>
            dashboardCsp({
              connect: [
                identity.issuer,
                // Presigned uploads (imports) and recordings.
                fauxqs.endpoint,
                ...(relayUrl() ? [new URL(relayUrl()).origin] : []),
              ],
              media: [fauxqs.endpoint],
            }),
        })
      : undefined;
    let gateway;
    try {
      gateway = await startGateway({ port: gatewayPort, functions, region, accessLog: accessLog(), web });
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
      ...(web ? { dashboardUrl: gateway.url } : {}),
      defaults: options.defaults,
    });
    // The voice relay's WebSocket API, in this process beside the API and at its priority: a live
    // conversation is a front door too, and the work process's queued work must never slow a turn.
    const relay = await startRelayGateway({
      functions: functions.filter((fn) => fn.webSocket),
      region,
      extraApis: await benchRelayFloor(),
    });
    stoppers.push({ name: 'voice relay', stop: relay.stop });
    stackEnv.VOICE_RELAY_URL = relay.url;
    stackEnv.VOICE_RELAY_MANAGEMENT_URL = relay.managementUrl;
    // The provider webhooks' own gateway, in the work process: where the simulators call back.
    stoppers.push({ name: 'background work', stop: async () => void (await work.call('stopWork', {})) });
    const webhooks = await work.call('startWebhooks', {
      env: { ...stackEnv },
      functionIds: functions.map((fn) => fn.id),
      region,
      accessLog: accessLog(),
    });
    stackEnv.WEBHOOKS_BASE_URL = webhooks.url;
    applyEnvironment(stackEnv);
    installMetrics();
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
    print(`${label('provider webhooks')} ${webhooks.url}/webhooks  (the simulators call back here)`);
    print(
      `${label('voice relay')} ${relay.url}  (ConversationRelay WebSocket; Management API on the same port)`,
    );

    // Extra services (demo webhook receiver, simulators…), pollers and the scheduler: the work
    // process's, stopped before the gateway.
    const ports: Record<string, number> = {
      gateway: gateway.port,
      webhooks: webhooks.port,
      relay: relay.port,
      dynamodb: dynamoDb.port,
      fauxqs: fauxqs.port,
      identity: identity.port,
    };
    const services = await work.call('startServices', {
      baseUrl: gateway.url,
      webhooksUrl: webhooks.url,
      env: { ...stackEnv },
      stateDir,
      inMemory,
      region,
      verbose,
    });
    const serviceInfo: StackState['services'] = [];
    for (const started of services) {
      if (started.env) {
        Object.assign(stackEnv, started.env);
        Object.assign(process.env, started.env);
      }
      if (started.port) ports[started.name] = started.port;
      serviceInfo.push({ name: started.name, url: started.url, description: started.description });
      print(
        `${label(started.name)} ${started.url ?? 'started'}${started.description ? `  (${started.description})` : ''}`,
      );
    }

    const voiceRelayUrl = stackEnv.VOICE_RELAY_URL || undefined;
    relayUrl = () => voiceRelayUrl ?? '';

    const schedulerEnabled = options.scheduler ?? env.LOCAL_SCHEDULER !== 'off';
    await work.call('startConsumers', {
      functionIds: functions.map((fn) => fn.id),
      env: { ...stackEnv },
      queues: resources.queues,
      region,
      sqsEndpoint: fauxqs.endpoint,
      visibilityTimeoutSeconds,
      pollerConcurrency,
      scheduler: schedulerEnabled,
    });
    for (const fn of functions.filter((f) => f.queue)) {
      print(`${label('poller')} ${fn.queue!.name} → ${fn.id} (batch ${fn.queue!.batchSize})`);
    }
    const scheduled = functions.filter((f) => f.schedule);
    for (const fn of scheduled) {
      print(
        `${label('schedule')} ${fn.id} every ${fn.schedule!.localEverySeconds} s (cloud: ${fn.schedule!.expression})` +
          (schedulerEnabled ? '' : ' — off (LOCAL_SCHEDULER=off)'),
      );
    }

    const frontDoorsInFlight = () => gateway.inFlight() + relay.activity().invocations_in_flight;
    const quiescence = async () => {
      const gatewayBefore = frontDoorsInFlight();
      const before = await work.call('activity', {});
      const queues = await standIns.call('queueActivity', { queues: resources.queues });
      const after = await work.call('activity', {});
      return quiescenceReport({
        before,
        queues,
        after,
        gateway: { before: gatewayBefore, after: frontDoorsInFlight() },
      });
    };
    const metrics = async () => {
      const [workMetrics, standInsMetrics] = await Promise.all([
        work.call('metrics', {}),
        standIns.call('metrics', {}),
      ]);
      return stackMetrics(
        { gateway: processMetrics(), work: workMetrics, 'stand-ins': standInsMetrics },
        dynamoDb.pid,
      );
    };
    gateway.setLocalRoute(QUIESCENCE_PATH, quiescence);
    gateway.setLocalRoute(METRICS_PATH, metrics);

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
        metrics: `${gateway.url}${METRICS_PATH}`,
      },
      voice_relay_url: relay.url,
      env: stackEnv,
      services: serviceInfo,
      ...(web ? { dashboard_url: `${gateway.url}/` } : {}),
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

    return {
      state,
      statePath,
      env: stackEnv,
      quiescence,
      metrics,
      stop: () => (stopping ??= stopAll()),
    };
  } catch (error) {
    await (stopping ??= stopAll());
    throw error;
  }
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** The ready-to-paste lines printed once the stack is up. */
export function banner(
  state: StackState,
  demoLines: string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): string {
  const lines = [
    '',
    green(bold(`Local stack ready on ${state.base_url}`)),
    '',
    ...(state.dashboard_url ? [`  Dashboard: ${state.dashboard_url}  (sign in with a user's email)`] : []),
    `  curl ${state.base_url}/api/v1/health`,
    `  API reference: ${state.base_url}/api/v1/docs`,
    '',
    ...(demoLines.length > 0 ? [...demoLines, ''] : []),
    '  Get a token for a dashboard user (a Cognito-style access token from the local identity provider):',
    `    ${cliCommand(env)} token --email you@example.com`,
    `  Seed ${demoLines.length > 0 ? 'another' : 'a'} demo organisation, workspace, agent and number:`,
    `    ${cliCommand(env, { silent: true })} seed --json`,
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
