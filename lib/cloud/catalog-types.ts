import type { Access, Route } from '../../functions/platform/http/route.js';
import type { QueueKey } from '../../functions/platform/resources.js';

export type { HttpMethod, Route as HttpRoute, Access } from '../../functions/platform/http/route.js';

/**
 * The nested stack a function is deployed in: one per domain, so every template keeps room to grow,
 * and one for the provider webhooks, whose function URLs every other domain reads (so the nested
 * stacks depend on each other in one direction only).
 */
export type StackGroup =
  | 'public'
  | 'access'
  | 'agents'
  | 'numbers'
  | 'calling'
  | 'billing'
  | 'contacts'
  | 'campaigns'
  | 'knowledge'
  | 'integrations'
  | 'post-call'
  | 'sms'
  | 'webhook-deliveries'
  | 'workflows'
  | 'conversation'
  | 'provider-webhooks';

export interface FunctionSpec {
  /** Unique PascalCase id: the CDK construct id and the local stack's name for the function. */
  id: string;
  /** Handler file relative to the repository root; it exports `handler`. */
  entry: string;
  group: StackGroup;
  /** The routes this function serves (a domain's routes.ts); it dispatches on the event's routeKey. */
  http?: Route<unknown, unknown>[];
  /**
   * A provider webhook served on its own Lambda function URL (locally under this path). `handsOut`:
   * the paths of other webhooks whose URLs its answers give the provider (a warm transfer's `<Dial
   * action>` and `<Number url>`): its environment holds those URLs, and none of them may name it back
   * (a function's environment cannot hold its own URL, nor one that depends on it).
   */
  functionUrl?: { path: string; handsOut?: string[] };
  queue?: { name: QueueKey; batchSize: number };
  /**
   * The voice relay's WebSocket API routes this function serves (`$connect`, `$default`,
   * `$disconnect`); locally the relay gateway (lib/local/relay-gateway.ts) serves them.
   */
  webSocket?: { routes: ('$connect' | '$default' | '$disconnect')[] };
  /** EventBridge schedule expression, and how often the local scheduler fires it. */
  schedule?: { expression: string; localEverySeconds: number };
  /** What the function may touch: for an HTTP function, the union of its routes' declared access. */
  access: Access;
  /** Seconds before Lambda stops it (default: defaultTimeoutSeconds); the local stack enforces it too. */
  timeoutSeconds?: number;
  memoryMb?: number;
  /**
   * Files of npm packages the function reads at runtime (not imported, so esbuild leaves them out):
   * `packageFile` as `require.resolve` names it, copied into the asset as `assetFile`, beside the
   * bundled handler. Locally the code reads them from node_modules.
   */
  bundleFiles?: { packageFile: string; assetFile: string }[];
}

/** Request/response functions (API routes, webhooks) answer fast; queue consumers and jobs get longer. */
export function defaultTimeoutSeconds(spec: Pick<FunctionSpec, 'queue' | 'schedule'>): number {
  return spec.queue || spec.schedule ? 30 : 10;
}

/** A function's timeout: Lambda's in the cloud, lib/local/invoke.ts's locally. */
export const functionTimeoutSeconds = (
  spec: Pick<FunctionSpec, 'timeoutSeconds' | 'queue' | 'schedule'>,
): number => spec.timeoutSeconds ?? defaultTimeoutSeconds(spec);
