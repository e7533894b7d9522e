import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { StackMetrics } from '../../local/metrics.js';
import type { QuiescenceReport } from '../../local/quiescence.js';
import { isProcessAlive, type StackState } from '../../local/state.js';

/**
 * The local stack as `npm start` runs it (`node --import tsx bin/local.ts`: the gateway's process and
 * its background process), started by the bench as a child so that the bench's own load generator
 * never shares the stack's CPU accounting or event loops. In memory, any free port, no scheduler (a
 * periodic sweep is not the cost of a call); its output goes to `logPath`, and its state folder is
 * removed when it stops.
 */
export interface BenchStack {
  state: StackState;
  logPath: string;
  quiescence(): Promise<QuiescenceReport>;
  metrics(): Promise<StackMetrics>;
  /** Waits until the stack is quiescent in two reads in a row. */
  settle(timeoutMs?: number): Promise<QuiescenceReport>;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 120_000;

export async function startBenchStack(options: {
  root: string;
  stateDir: string;
  logPath: string;
  env: Record<string, string>;
}): Promise<BenchStack> {
  mkdirSync(options.stateDir, { recursive: true });
  const statePath = join(options.stateDir, 'stack.json');
  const out = openSync(options.logPath, 'w');
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
    cwd: options.root,
    env: {
      ...process.env,
      PORT: '0',
      LOCAL_IN_MEMORY: '1',
      LOCAL_STATE_DIR: options.stateDir,
      LOCAL_EXIT_WITH_PARENT: String(process.pid),
      LOCAL_SCHEDULER: 'off',
      LOCAL_DEMO: 'off',
      NODE_OPTIONS: '',
      ...options.env,
    },
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  let exit: string | undefined;
  const exited = new Promise<void>((resolveExit) =>
    child.once('exit', (code, signal) => {
      exit = signal ? `signal ${signal}` : `code ${code}`;
      resolveExit();
    }),
  );
  const tail = () => (existsSync(options.logPath) ? readFileSync(options.logPath, 'utf8').slice(-4000) : '');

  const deadline = Date.now() + START_TIMEOUT_MS;
  let state: StackState | undefined;
  while (!state) {
    if (exit) throw new Error(`the local stack exited (${exit}) before it was ready:\n${tail()}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the local stack was not ready within ${START_TIMEOUT_MS / 1000} s:\n${tail()}`);
    }
    if (existsSync(statePath)) {
      const read = JSON.parse(readFileSync(statePath, 'utf8')) as StackState;
      if (isProcessAlive(read.pid)) state = read;
    }
    if (!state) await new Promise((r) => setTimeout(r, 200));
  }
  const ready = state;

  const getJson = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${ready.base_url}${path}`);
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  const quiescence = () => getJson<QuiescenceReport>('/_local/quiescence');

  return {
    state: ready,
    logPath: options.logPath,
    quiescence,
    metrics: () => getJson<StackMetrics>('/_local/metrics'),
    settle: async (timeoutMs = 120_000) => {
      const until = Date.now() + timeoutMs;
      let quiet = 0;
      for (;;) {
        const report = await quiescence();
        quiet = report.quiescent ? quiet + 1 : 0;
        if (quiet >= 2) return report;
        if (Date.now() > until) throw new Error(`the stack did not settle: ${report.busy.join('; ')}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    stop: async () => {
      if (!exit) {
        const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.kill('SIGTERM');
        await exited;
        clearTimeout(killer);
      }
      // In memory: nothing in its state folder outlives the run (its output is in logPath).
      rmSync(options.stateDir, { recursive: true, force: true });
    },
  };
}
