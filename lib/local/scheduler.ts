import type { FunctionSpec } from '../cloud/catalog-types.js';
import { scheduledEvent } from './events.js';
import { invokeFunction } from './invoke.js';
import { warn } from './log.js';
import { settleWithin } from './processes.js';

export interface LocalSchedule {
  fn: FunctionSpec;
  everySeconds: number;
  runs: number;
  skipped: number;
}

export interface Scheduler {
  schedules: LocalSchedule[];
  /** Ids of the functions whose scheduled run is going on now (the stack's quiescence signal). */
  running(): string[];
  stop(): Promise<void>;
}

/**
 * Fires each scheduled catalog function every `localEverySeconds` with an EventBridge "Scheduled
 * Event". A run still going when the next is due is not overlapped: that tick is skipped.
 */
export function startScheduler(options: {
  functions: FunctionSpec[];
  region: string;
  /** Test hook: what to invoke (default: the function's handler). */
  invoke?: (fn: FunctionSpec, event: unknown) => Promise<unknown>;
}): Scheduler {
  const invoke = options.invoke ?? ((fn, event) => invokeFunction(fn, event, options.region));
  const running = new Map<string, Promise<void>>();
  const timers: NodeJS.Timeout[] = [];
  const schedules: LocalSchedule[] = [];

  for (const fn of options.functions) {
    if (!fn.schedule) continue;
    const schedule: LocalSchedule = {
      fn,
      everySeconds: Math.max(1, fn.schedule.localEverySeconds),
      runs: 0,
      skipped: 0,
    };
    schedules.push(schedule);
    const tick = () => {
      if (running.has(fn.id)) {
        schedule.skipped += 1;
        return;
      }
      schedule.runs += 1;
      const run = Promise.resolve()
        .then(() => invoke(fn, scheduledEvent(fn.id, options.region)))
        .then(
          () => undefined,
          (error: unknown) => warn(`${fn.id}: scheduled run failed`, error),
        )
        .finally(() => running.delete(fn.id));
      running.set(fn.id, run);
    };
    timers.push(setInterval(tick, schedule.everySeconds * 1000));
  }

  return {
    schedules,
    running: () => [...running.keys()],
    stop: async () => {
      for (const timer of timers) clearInterval(timer);
      await settleWithin(Promise.allSettled(running.values()), 5000);
    },
  };
}
