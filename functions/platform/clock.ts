/** The one source of "now". Tests replace it with `setClock` to make time-dependent rules exact. */
export interface Clock {
  now(): Date;
}

const systemClock: Clock = { now: () => new Date() };
let current: Clock = systemClock;

export const clock: Clock = { now: () => current.now() };

export function setClock(next: Clock | Date): void {
  current = next instanceof Date ? { now: () => new Date(next.getTime()) } : next;
}

export function resetClock(): void {
  current = systemClock;
}

export const nowIso = (): string => clock.now().toISOString();
export const nowEpochSeconds = (): number => Math.floor(clock.now().getTime() / 1000);
