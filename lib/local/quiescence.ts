import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { FunctionSpec } from '../catalog-types.js';
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
 * catalog function and no cloud route. The stack is quiescent when
 *   - every queue is empty: no visible, in-flight (received, not yet deleted) or delayed message
 *     (`ApproximateNumberOfMessages*` of GetQueueAttributes). A message that failed and waits out its
 *     visibility timeout is in flight, so a retry still to come keeps the stack busy; a message
 *     that reached a DLQ is done (nothing consumes DLQs): reported as `dead_letters`, not busy;
 *   - no queue poller has a batch in hand (received, handler running, not yet deleted);
 *   - no scheduled run is going on (the next tick is not waited for: schedules run forever);
 *   - the gateway is handling no request (its own /_local/ endpoints aside);
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

export interface QuiescenceSources {
  sqs: SQSClient;
  queues: Record<QueueKey, LocalQueue>;
  functions: FunctionSpec[];
  pollers: QueuePoller[];
  scheduler?: Scheduler;
  services: LocalService[];
  gatewayInFlight: () => number;
}

const COUNTS = [
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesNotVisible',
  'ApproximateNumberOfMessagesDelayed',
] as const;

async function queueCounts(sqs: SQSClient, url: string): Promise<Record<(typeof COUNTS)[number], number>> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [...COUNTS] }),
  );
  const count = (name: (typeof COUNTS)[number]) => Number(Attributes[name] ?? 0);
  return {
    ApproximateNumberOfMessages: count('ApproximateNumberOfMessages'),
    ApproximateNumberOfMessagesNotVisible: count('ApproximateNumberOfMessagesNotVisible'),
    ApproximateNumberOfMessagesDelayed: count('ApproximateNumberOfMessagesDelayed'),
  };
}

interface InProcess {
  pollers: Record<string, PollerActivity>;
  running: string[];
  gatewayInFlight: number;
  services: Record<string, LocalServiceActivity>;
  busy: string[];
}

/** What this process knows without asking fauxqs: pollers, scheduler, gateway, services. */
function inProcess(sources: QuiescenceSources): InProcess {
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
  const gatewayInFlight = sources.gatewayInFlight();
  if (gatewayInFlight > 0) busy.push(`gateway: ${gatewayInFlight} request(s) in flight`);
  const services: Record<string, LocalServiceActivity> = {};
  for (const service of sources.services) {
    const activity = service.activity?.();
    if (!activity) continue;
    services[service.name] = activity;
    if (!activity.idle) busy.push(`${service.name}: busy`);
  }
  return { pollers, running, gatewayInFlight, services, busy };
}

/** One snapshot of everything the stack runs (see above). */
export async function readQuiescence(sources: QuiescenceSources): Promise<QuiescenceReport> {
  // The queues are read between two looks at this process, and anything busy in either look counts:
  // a batch received, handled and deleted while fauxqs answers shows up as a changed batch count.
  const before = inProcess(sources);
  const queues: Record<string, QueueActivity> = {};
  await Promise.all(
    (Object.entries(sources.queues) as [QueueKey, LocalQueue][]).map(async ([key, queue]) => {
      const [main, dlq] = await Promise.all([
        queueCounts(sources.sqs, queue.url),
        queueCounts(sources.sqs, queue.dlqUrl),
      ]);
      queues[key] = {
        visible: main.ApproximateNumberOfMessages,
        in_flight: main.ApproximateNumberOfMessagesNotVisible,
        delayed: main.ApproximateNumberOfMessagesDelayed,
        dead_letters:
          dlq.ApproximateNumberOfMessages +
          dlq.ApproximateNumberOfMessagesNotVisible +
          dlq.ApproximateNumberOfMessagesDelayed,
      };
    }),
  );
  const after = inProcess(sources);

  const busy = [...new Set([...before.busy, ...after.busy])];
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
    gateway: { in_flight: after.gatewayInFlight },
    services: after.services,
    checked_at: new Date().toISOString(),
  };
}
