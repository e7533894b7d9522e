import type { FunctionSpec } from '../cloud/catalog-types.js';
import type { QueueKey } from '../../functions/platform/resources.js';
import type { QueuePoller } from './pollers.js';
import type { LocalQueue } from './resources-setup.js';
import type { Scheduler } from './scheduler.js';
import type { LocalService, LocalServiceActivity } from './services.js';

/**
 * The local stack's quiescence signal: whether everything it runs has finished what it was given, so
 * nothing more will happen until something new arrives (a request, a scheduled tick). Tests wait for
 * it (test/helpers/wait.ts waitForQuiescence) instead of sleeping before they assert that something
 * happened only once, or not at all.
 *
 * Served by the gateway at `GET /_local/quiescence` (stack.json `urls.quiescence`): local only, no
 * catalog function and no cloud route. The gateway's process asks the two background processes
 * (lib/local/background.ts) for their part — the queues' counts from fauxqs's store, the pollers,
 * scheduler and simulators from the work process — and adds its own requests in progress. The stack
 * is quiescent when
 *   - every queue is empty: no visible, in-flight (received, not yet deleted) or delayed message
 *     (`ApproximateNumberOfMessages*` of GetQueueAttributes). A message that failed and waits out its
 *     visibility timeout is in flight, so a retry still to come keeps the stack busy; a message
 *     that reached a DLQ is done (nothing consumes DLQs): reported as `dead_letters`, not busy;
 *   - no queue poller has a batch in hand (received, handler running, not yet deleted);
 *   - no scheduled run is going on (the next tick is not waited for: schedules run forever);
 *   - the gateway is handling no request (its own /_local/ endpoints aside), nor the provider
 *     webhooks' (the work process's gateway, which the simulators call back);
 *   - every local service that reports activity is idle: the telephony simulator has no call whose
 *     timeline still has callbacks to send, no hang-up still sending its end and no callback on its
 *     way. A call with nothing left to send (the `silent` scenario, up until it is hung up) does not
 *     keep it busy: it is reported as `calls_open`.
 * One read is a snapshot; a caller wanting "settled" reads it twice in a row (waitForQuiescence).
 */
export interface QueueActivity {
  visible: number;
  in_flight: number;
  delayed: number;
  /** Messages in the queue's DLQ (not part of quiescence). */
  dead_letters: number;
}

export interface PollerActivity {
  queue: string;
  /** Batches received and not yet deleted. */
  handling: number;
  /** Since the stack started (a test compares two reads to see its own messages consumed). */
  batches: number;
  received: number;
  deleted: number;
  failed: number;
}

export interface QuiescenceReport {
  quiescent: boolean;
  /** Why not: one line per busy part (empty when quiescent). */
  busy: string[];
  queues: Record<string, QueueActivity>;
  pollers: Record<string, PollerActivity>;
  scheduler: { running: string[] };
  gateway: { in_flight: number };
  services: Record<string, LocalServiceActivity>;
  checked_at: string;
}

/** What the work process runs (lib/local/background.ts): its pollers, scheduler and services. */
export interface WorkSources {
  functions: FunctionSpec[];
  pollers: QueuePoller[];
  scheduler?: Scheduler;
  services: LocalService[];
  /** Requests the provider webhooks' gateway is handling (the simulators' callbacks). */
  webhooksInFlight: () => number;
}

/** One look at the work process: pollers, scheduler, services, and what keeps them busy. */
export interface WorkActivity {
  pollers: Record<string, PollerActivity>;
  running: string[];
  services: Record<string, LocalServiceActivity>;
  webhooksInFlight: number;
  busy: string[];
}

/** A queue's counts: visible, received and not deleted, delayed (fauxqs's own, as GetQueueAttributes). */
export type QueueCounts = (
  queueUrl: string,
) => { visible: number; inFlight: number; delayed: number } | undefined;

/** Read in the work process: pollers, scheduler, services. */
export function workActivity(sources: WorkSources): WorkActivity {
  const busy: string[] = [];
  const pollers: Record<string, PollerActivity> = {};
  for (const poller of sources.pollers) {
    const queue = sources.functions.find((fn) => fn.id === poller.name)?.queue?.name ?? '';
    const { batches, received, deleted, failed, inFlight } = poller.stats;
    pollers[poller.name] = { queue, handling: inFlight, batches, received, deleted, failed };
    if (inFlight > 0) busy.push(`poller ${poller.name}: ${inFlight} batch(es) in hand`);
  }
  const running = sources.scheduler?.running() ?? [];
  if (running.length > 0) busy.push(`scheduler: ${running.join(', ')} running`);
  const services: Record<string, LocalServiceActivity> = {};
  for (const service of sources.services) {
    const activity = service.activity?.();
    if (!activity) continue;
    services[service.name] = activity;
    if (!activity.idle) busy.push(`${service.name}: busy`);
  }
  return { pollers, running, services, webhooksInFlight: sources.webhooksInFlight(), busy };
}

/** Read in the stand-ins' process: every queue's counts and its DLQ's depth. */
export function queueActivity(
  counts: QueueCounts,
  queues: Record<QueueKey, LocalQueue>,
): Record<string, QueueActivity> {
  const out: Record<string, QueueActivity> = {};
  for (const [key, queue] of Object.entries(queues) as [QueueKey, LocalQueue][]) {
    const main = counts(queue.url) ?? { visible: 0, inFlight: 0, delayed: 0 };
    const dlq = counts(queue.dlqUrl) ?? { visible: 0, inFlight: 0, delayed: 0 };
    out[key] = {
      visible: main.visible,
      in_flight: main.inFlight,
      delayed: main.delayed,
      dead_letters: dlq.visible + dlq.inFlight + dlq.delayed,
    };
  }
  return out;
}

/**
 * The whole report, in the gateway's process. The queues are read between two looks at the work
 * process and at the gateway, and anything busy in either look counts: a batch received, handled and
 * deleted while the queues were read shows up as a changed batch count.
 */
export function quiescenceReport(input: {
  before: WorkActivity;
  queues: Record<string, QueueActivity>;
  after: WorkActivity;
  gateway: { before: number; after: number };
}): QuiescenceReport {
  const { before, queues, after, gateway } = input;
  const busy = [...new Set([...before.busy, ...after.busy])];
  // The gateway: the API's and the provider webhooks' (the work process's) requests.
  const inFlight = Math.max(gateway.before + before.webhooksInFlight, gateway.after + after.webhooksInFlight);
  if (inFlight > 0) busy.push(`gateway: ${inFlight} request(s) in flight`);
  for (const [name, poller] of Object.entries(after.pollers)) {
    if (poller.batches !== before.pollers[name]?.batches)
      busy.push(`poller ${name}: received a batch while the queues were read`);
  }
  for (const [key, q] of Object.entries(queues).sort(([a], [b]) => a.localeCompare(b))) {
    if (q.visible + q.in_flight + q.delayed > 0)
      busy.push(`queue ${key}: ${q.visible} visible, ${q.in_flight} in flight, ${q.delayed} delayed`);
  }
  return {
    quiescent: busy.length === 0,
    busy,
    queues,
    pollers: after.pollers,
    scheduler: { running: after.running },
    gateway: { in_flight: gateway.after + after.webhooksInFlight },
    services: after.services,
    checked_at: new Date().toISOString(),
  };
}
