import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import type { QueueKey } from '../../functions/platform/resources.js';
import type { ProcessMetrics } from './metrics.js';
import { repoRoot } from './paths.js';
import { stopChild, trackChild } from './processes.js';
import type { QueueActivity, WorkActivity } from './quiescence.js';
import type { LocalQueue } from './resources-setup.js';

/**
 * The local stack runs in three Node processes, so that serving the API is never starved by the work
 * going on behind it:
 *  - the gateway's process (lib/local/stack.ts): DynamoDB Local (its java child), the identity
 *    provider, the gateway and the handlers it invokes — the API and the provider webhooks;
 *  - the stand-ins' process (`stand-ins`): fauxqs (SQS + S3), which start-call's SendMessage waits on;
 *  - the work process (`work`): the provider webhooks' own gateway (what the simulators call back,
 *    as a provider calls a function URL), the local services (the telephony and payments simulators,
 *    the demo webhook receiver, …), the queue pollers with the consumers they invoke, and the
 *    scheduler. It
 *    runs at a lower priority (LOCAL_BACKGROUND_NICE, default 10): when the machine is busy, the
 *    pipeline behind the API waits, as it would on its own Lambdas, instead of the API.
 * Both processes that run handlers invoke them with their catalog entry's grants (lib/local/invoke.ts).
 * The gateway's process drives the other two through their IPC channels (the calls below), serves
 * GET /_local/quiescence and /_local/metrics from all three, and stops them. They write to the same
 * terminal; they ignore Ctrl-C (the gateway's process stops them in order) and end when the gateway's
 * process is gone, however it ended.
 */
export type BackgroundRole = 'stand-ins' | 'work';

export interface StartedService {
  name: string;
  url?: string;
  port?: number;
  env?: Record<string, string>;
  description?: string;
  /** Reports activity (part of the quiescence signal). */
  reportsActivity: boolean;
}

/** The calls the background processes answer (each its role's): name → [argument, result]. */
export interface BackgroundCalls {
  /** stand-ins */
  startFauxqs: [{ region: string; preferredPort?: number }, { endpoint: string; port: number }];
  /** stand-ins: every queue's counts (the quiescence signal). */
  queueActivity: [{ queues: Record<QueueKey, LocalQueue> }, Record<string, QueueActivity>];
  /**
   * work: the provider webhooks (every catalog function with a function URL, under /webhooks), served
   * by a gateway of the work process's own: what the simulators call back, as a provider calls a
   * function URL, never queues behind the API.
   */
  startWebhooks: [
    { env: Record<string, string>; functionIds: string[]; region: string; accessLog: boolean },
    { url: string; port: number },
  ];
  /** work */
  startServices: [
    {
      baseUrl: string;
      webhooksUrl: string;
      env: Record<string, string>;
      stateDir: string;
      inMemory: boolean;
      region: string;
      verbose: boolean;
    },
    StartedService[],
  ];
  startConsumers: [
    {
      /** Catalog ids of the functions the stack runs (those with a queue or a schedule start here). */
      functionIds: string[];
      env: Record<string, string>;
      queues: Record<QueueKey, LocalQueue>;
      region: string;
      sqsEndpoint: string;
      visibilityTimeoutSeconds: number;
      pollerConcurrency: number;
      scheduler: boolean;
    },
    { pollers: string[] },
  ];
  /** work: its pollers, scheduler and services (the quiescence signal). */
  activity: [Record<string, never>, WorkActivity];
  metrics: [Record<string, never>, ProcessMetrics];
  /** work: stops the scheduler, the pollers and the services (in that order). */
  stopWork: [Record<string, never>, null];
  /** Stops what is left (fauxqs); the process exits after answering. */
  stop: [Record<string, never>, null];
}

export type BackgroundCall = keyof BackgroundCalls;
export interface BackgroundRequest {
  id: number;
  call: BackgroundCall;
  argument: unknown;
}
export type BackgroundReply = { id: number; result: unknown } | { id: number; error: string };

export interface Background {
  role: BackgroundRole;
  pid: number | undefined;
  call<C extends BackgroundCall>(call: C, argument: BackgroundCalls[C][0]): Promise<BackgroundCalls[C][1]>;
  /** Asks it to stop (stopWork, then stop) and waits for the process to end (killed after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

const ENTRY = resolve(repoRoot, 'lib', 'local', 'background-process.ts');

/** Node flags the background process must not inherit (a debugger port is the parent's). */
const PARENT_ONLY_FLAGS = /^--(inspect|debug)/;

/**
 * Starts a background process of the given role, with this process's Node flags (tsx's loader among
 * them) and environment. `onUnexpectedExit` is told when it ends without being asked to.
 */
export function startBackground(options: {
  role: BackgroundRole;
  onUnexpectedExit: (description: string) => void;
}): Background {
  const execArgv = process.execArgv.filter((flag) => !PARENT_ONLY_FLAGS.test(flag));
  const child: ChildProcess = spawn(process.execPath, [...execArgv, ENTRY, options.role], {
    cwd: repoRoot,
    env: process.env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  trackChild(child);
  let nextId = 1;
  let stopping = false;
  let exited: string | undefined;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  child.on('message', (message: BackgroundReply) => {
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    if ('error' in message) waiting.reject(new Error(message.error));
    else waiting.resolve(message.result);
  });
  child.once('exit', (code, signal) => {
    exited = signal ? `signal ${signal}` : `code ${code}`;
    for (const waiting of pending.values())
      waiting.reject(new Error(`the local stack's ${options.role} process ended (${exited})`));
    pending.clear();
    if (!stopping) options.onUnexpectedExit(exited);
  });
  child.once('error', (error) => {
    exited ??= error.message;
    if (!stopping) options.onUnexpectedExit(error.message);
  });

  const call = <C extends BackgroundCall>(name: C, argument: BackgroundCalls[C][0]) =>
    new Promise<BackgroundCalls[C][1]>((resolveCall, rejectCall) => {
      if (exited || !child.connected) {
        rejectCall(
          new Error(`the local stack's ${options.role} process is not running (${exited ?? 'disconnected'})`),
        );
        return;
      }
      const id = nextId++;
      pending.set(id, { resolve: resolveCall as (value: unknown) => void, reject: rejectCall });
      const request: BackgroundRequest = { id, call: name, argument };
      child.send(request, (error) => {
        if (!error) return;
        pending.delete(id);
        rejectCall(error);
      });
    });

  return {
    role: options.role,
    pid: child.pid,
    call,
    stop: async (graceMs = 8000) => {
      stopping = true;
      if (exited) return;
      const ended = new Promise<void>((resolveEnded) => {
        if (child.exitCode !== null || child.signalCode !== null) resolveEnded();
        else child.once('exit', () => resolveEnded());
      });
      const timer = setTimeout(() => void stopChild(child, 1000), graceMs);
      try {
        if (options.role === 'work')
          await call('stopWork', {}).catch(() => {
            // The child may have exited (or be exiting) already: `ended` and the grace timer still stop it.
          });
        await call('stop', {}).catch(() => {
          // As above: a child gone before it answers is what stopping wants; the timer kills one that hangs.
        });
        await ended;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
