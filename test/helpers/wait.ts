import type { QuiescenceReport } from '../../lib/local/quiescence.js';
import type { TelephonyActivity } from '../../lib/local/simulators/telephony/server.js';
import { stackState } from './stack-state.js';

/**
 * Tests wait for a condition, never for a fixed time: `waitFor` polls until something holds (a call
 * reached `completed`, a webhook arrived); `waitForQuiescence` until the local stack has finished
 * everything it was given (every queue drained, nothing in flight, the simulators done), so that an
 * "exactly once" or "nothing happened" assertion made after it has really seen every duplicate and
 * every retry. Assert that the thing happened (waitFor) AND wait for quiescence, then assert it
 * happened once.
 */

export interface WaitOptions {
  /**
   * What is waited for, for the error message ("the call to end"); a function is asked when the
   * wait times out (to show the last state seen).
   */
  what?: string | (() => string);
  /** Default 30 s. */
  timeoutMs?: number;
  /** Pause between two probes. Default 100 ms. */
  intervalMs?: number;
}

type NotYet = undefined | null | false;

const pause = (ms: number) => new Promise<void>((resolvePause) => setTimeout(resolvePause, ms));

/**
 * Polls `probe` until it returns something other than undefined, null or false, and returns that.
 * Throws when `timeoutMs` passes first (an error thrown by the probe ends the wait at once).
 */
export async function waitFor<T>(
  probe: () => T | NotYet | Promise<T | NotYet>,
  options: WaitOptions = {},
): Promise<T> {
  const { what = 'a condition', timeoutMs = 30_000, intervalMs = 100 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) {
      const described = typeof what === 'function' ? what() : what;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${described}`);
    }
    await pause(intervalMs);
  }
}

/** The local stack's quiescence signal now (GET /_local/quiescence, lib/local/quiescence.ts). */
export async function readQuiescence(): Promise<QuiescenceReport> {
  const url = `${stackState().base_url}/_local/quiescence`;
  // A GET: tried again once when a kept-alive socket was closed under it ("other side closed").
  const res = await fetch(url).catch(() => fetch(url));
  if (res.status !== 200) throw new Error(`GET /_local/quiescence: ${res.status} ${await res.text()}`);
  return (await res.json()) as QuiescenceReport;
}

/** The telephony simulator's part of a report (calls playing, callbacks pending or in flight). */
export function telephonyActivity(report: QuiescenceReport): TelephonyActivity {
  const activity = report.services['telephony-simulator'];
  if (!activity) throw new Error('the local stack runs no telephony simulator');
  return activity as TelephonyActivity;
}

/** How long only delayed messages may hold the stack before waitForQuiescence takes it as quiet. */
const LONG_DELAY_MS = 5_000;

/** Busy with nothing but queue messages waiting out a delay (none visible, received or handled). */
const onlyDelayed = (report: QuiescenceReport): boolean =>
  report.busy.length > 0 &&
  report.busy.some((line) => line.startsWith('queue ')) &&
  // The scheduler's periodic sweeps come and go meanwhile; they do not reset the wait.
  report.busy.every(
    (line) => /^queue \S+: 0 visible, 0 in flight, \d+ delayed$/.test(line) || line.startsWith('scheduler: '),
  ) &&
  Object.values(report.pollers).every((poller) => poller.handling === 0) &&
  report.gateway.in_flight === 0;

/**
 * Waits until the local stack is quiescent in two reads in a row (`intervalMs` apart, default 100 ms),
 * and returns the last report; or throws with the last report's busy parts. Global: the shared stack's
 * every queue and call counts, so a test leaves no long call playing behind it.
 */
export async function waitForQuiescence(
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<QuiescenceReport> {
  const { timeoutMs = 30_000, intervalMs = 100 } = options;
  const deadline = Date.now() + timeoutMs;
  let quietReads = 0;
  let onlyDelayedSince: number | undefined;
  for (;;) {
    const report = await readQuiescence();
    quietReads = report.quiescent ? quietReads + 1 : 0;
    if (quietReads >= 2) return report;
    // Nothing is being done, only messages wait out a delay, and none has come due for a while: a
    // message delayed that long (a delivery looking again after another's claim lapses, another
    // suite's) is no work of the present test's (the tests' retries are a second apart).
    onlyDelayedSince = onlyDelayed(report) ? (onlyDelayedSince ?? Date.now()) : undefined;
    if (onlyDelayedSince !== undefined && Date.now() - onlyDelayedSince >= LONG_DELAY_MS) return report;
    if (Date.now() > deadline) {
      throw new Error(
        `the local stack was not quiescent within ${timeoutMs} ms: ${report.busy.join('; ') || 'settling'}\n` +
          JSON.stringify({ queues: report.queues, services: report.services }, null, 2),
      );
    }
    await pause(intervalMs);
  }
}

/**
 * Waits until the consumers named have received at least `counts[name]` more messages than in
 * `before` (a quiescence report taken before the messages were sent), then for quiescence: every one
 * of them has been handled. Returns the last report.
 */
export async function waitForConsumed(
  before: QuiescenceReport,
  counts: Record<string, number>,
  options: { timeoutMs?: number } = {},
): Promise<QuiescenceReport> {
  await waitForReceived(before, counts, options);
  return waitForQuiescence(options);
}

/**
 * Like waitForConsumed, but what it then waits for is that nothing is being handled or waiting to be:
 * every queue's visible and in-flight messages and every poller's batches at 0, twice in a row. A
 * message another suite left delayed (a webhook retry minutes away) does not hold it up, as it holds
 * up the stack's quiescence: for a test whose own work leaves nothing delayed.
 */
export async function waitForHandled(
  before: QuiescenceReport,
  counts: Record<string, number>,
  options: { timeoutMs?: number } = {},
): Promise<QuiescenceReport> {
  await waitForReceived(before, counts, options);
  let idleReads = 0;
  let last: QuiescenceReport | undefined;
  await waitFor(
    async () => {
      last = await readQuiescence();
      const idle =
        Object.values(last.queues).every((queue) => queue.visible === 0 && queue.in_flight === 0) &&
        Object.values(last.pollers).every((poller) => poller.handling === 0) &&
        last.gateway.in_flight === 0;
      idleReads = idle ? idleReads + 1 : 0;
      return idleReads >= 2 ? true : undefined;
    },
    { what: 'no message handled or waiting to be', timeoutMs: options.timeoutMs },
  );
  return last!;
}

/** Waits until the consumers named have received at least `counts[name]` more messages than in `before`. */
async function waitForReceived(
  before: QuiescenceReport,
  counts: Record<string, number>,
  options: { timeoutMs?: number },
): Promise<void> {
  const received = (report: QuiescenceReport, name: string) => {
    const poller = report.pollers[name];
    if (!poller) throw new Error(`no queue poller named ${name}`);
    return poller.received;
  };
  await waitFor(
    async () => {
      const now = await readQuiescence();
      return Object.entries(counts).every(([name, n]) => received(now, name) - received(before, name) >= n);
    },
    { what: `the consumers to receive ${JSON.stringify(counts)}`, timeoutMs: options.timeoutMs },
  );
}
