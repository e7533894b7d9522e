import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TestStackHandle } from './global-setup.js';

/** After SIGTERM the stack has this long to stop before SIGKILL (a deadline, not a pause). */
const KILL_AFTER_MS = 5_000;

/** Jest globalTeardown: stops the stack global-setup started (SIGTERM, SIGKILL after 5 s) and removes its state. */
export default async function globalTeardown(): Promise<void> {
  const handle = (globalThis as { __LOCAL_TEST_STACK__?: TestStackHandle }).__LOCAL_TEST_STACK__;
  if (!handle || handle.external) return;
  const { child, stateDir, logPath, log } = handle;
  if (child && child.exitCode === null && child.signalCode === null) {
    await new Promise<void>((resolveExit) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
      child.once('exit', () => {
        clearTimeout(timer);
        resolveExit();
      });
      child.kill('SIGTERM');
    });
  }
  if (log) await new Promise<void>((resolveEnd) => log.end(() => resolveEnd()));
  // Keep the last run's stack output for debugging (.local/test-stack.log).
  if (stateDir && logPath && existsSync(logPath))
    copyFileSync(logPath, join(stateDir, '..', 'test-stack.log'));
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  delete process.env.LOCAL_STACK_STATE;
}
