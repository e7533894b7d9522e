import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Children the local stack spawned (DynamoDB Local's java). They are killed when the stack stops and,
 * as a last resort, synchronously when this process exits. A watchdog shell also kills them if this
 * process dies without running any handler (SIGKILL), so no java is ever left behind.
 */
const children = new Set<ChildProcess>();
let exitHookInstalled = false;

function killAllNow(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

export function trackChild(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', killAllNow);
  }
}

/** Kill a child with SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. */
export function stopChild(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolveStopped) => {
    const timer = setTimeout(() => {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }, graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolveStopped();
    });
    try {
      child.kill('SIGTERM');
    } catch {
      clearTimeout(timer);
      resolveStopped();
    }
  });
}

/**
 * A detached `sh` that waits for this process to disappear and then kills `childPid`. Returns a
 * function that ends the watchdog (call it after stopping the child normally).
 */
export function watchOverChild(childPid: number): () => void {
  if (process.platform === 'win32') return () => undefined;
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -9 ${childPid} 2>/dev/null; exit 0`;
  const watchdog = spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' });
  watchdog.on('error', () => undefined);
  watchdog.unref();
  return () => {
    if (watchdog.exitCode !== null || watchdog.pid === undefined) return;
    try {
      // The watchdog leads its own process group: kill the shell and its `sleep` together.
      process.kill(-watchdog.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
}

/** Waits for `work`, at most `ms` (the timer does not keep the process alive, and is cleared). */
export async function settleWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolveLimit) => {
    timer = setTimeout(resolveLimit, ms);
    timer.unref();
  });
  try {
    await Promise.race([
      work.then(
        () => undefined,
        () => undefined,
      ),
      limit,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
