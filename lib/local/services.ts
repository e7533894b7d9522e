/**
 * Extra local services started and stopped with the stack: the demo webhook receiver, provider
 * simulators, outboxes…
 *
 * A module registers one at import time:
 *
 *   import { registerLocalService } from '../services.js';   // from lib/local/services/<name>.ts
 *   registerLocalService({
 *     name: 'webhook-receiver',
 *     async start(ctx) { …listen on 127.0.0.1:0…; return { url, port, env: { DEMO_WEBHOOK_URL: url } }; },
 *     async stop() { … },
 *   });
 *
 * Every module in lib/local/services/ is imported by the stack's work process
 * (lib/local/background-process.ts) before it starts them, so dropping a file there is enough:
 * services run in that process, beside the pollers and the scheduler, not in the gateway's
 * (lib/local/background.ts). Services start after the table, queues, bucket, identity provider and
 * gateway exist (ctx.env holds the whole environment, ctx.baseUrl the gateway, ctx.webhooksUrl where
 * provider callbacks go), before pollers, scheduler and stack.json; the env a service returns is added
 * to the stack's processes' environment and to stack.json. They stop in reverse order, before the
 * gateway and the AWS stand-ins. A service that works on its own (a simulator playing calls) reports
 * it through activity(), which the stack's quiescence signal (lib/local/quiescence.ts) reads.
 */

export interface LocalServiceContext {
  /** The gateway, e.g. http://127.0.0.1:3000 (API under /api/v1, provider webhooks under /webhooks). */
  baseUrl: string;
  /**
   * Where a provider's callbacks go (`<webhooksUrl>/webhooks/…`): the provider webhooks' own gateway,
   * in the services' process, so a simulator's callbacks never queue behind the API (the API's
   * gateway serves /webhooks too).
   */
  webhooksUrl: string;
  /** The environment the handlers see (as written to stack.json). */
  env: Readonly<Record<string, string>>;
  stateDir: string;
  inMemory: boolean;
  region: string;
  /** Print one line in the stack's output. */
  say(message: string): void;
}

export interface StartedLocalService {
  /** Where it listens; printed and written to stack.json `services`. */
  url?: string;
  /** Written to stack.json `ports[<name>]`. */
  port?: number;
  /** Variables for the handlers (process.env) and for other processes (stack.json env). */
  env?: Record<string, string>;
  /** One line shown next to the name. */
  description?: string;
}

/**
 * What a service is doing now, for the stack's quiescence signal (GET /_local/quiescence). Any other
 * fields (counters, details; snake_case) are shown there as they are.
 */
export interface LocalServiceActivity {
  /** Nothing under way that will, by itself, call the gateway or change anything later. */
  idle: boolean;
}

export interface LocalService {
  /** Unique; registering the same name again replaces the earlier one. */
  name: string;
  start(context: LocalServiceContext): Promise<StartedLocalService | void> | StartedLocalService | void;
  stop?(): Promise<void> | void;
  /**
   * Optional: whether the service still has work of its own going (a simulator with callbacks still
   * to send). The stack is quiescent only when every service that reports activity is idle.
   */
  activity?(): LocalServiceActivity | undefined;
}

const registry = new Map<string, LocalService>();

export function registerLocalService(service: LocalService): void {
  if (!service.name) throw new Error('A local service needs a name');
  registry.set(service.name, service);
}

/** Registered services, in registration order. */
export function registeredLocalServices(): LocalService[] {
  return [...registry.values()];
}

/** Test helper: forget every registration. */
export function clearLocalServices(): void {
  registry.clear();
}
