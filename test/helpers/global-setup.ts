import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';

/**
 * Jest globalSetup: runs the real local stack (`node --import tsx bin/local.ts`) as a child process,
 * with its own in-memory DynamoDB, fast queues and a fresh state folder, and hands its stack.json to
 * the test workers through LOCAL_STACK_STATE (test/helpers/env.ts copies its env into process.env).
 *
 * The stack's output (handler logs at INFO, one short line each, and stack traces of 500s) is kept in
 * .local/test-stack.log after the run. Set LOCAL_STACK_STATE to the stack.json of a stack you started
 * yourself to run the tests against it instead (it is then left running); LOCAL_TEST_STACK=off starts
 * none (unit and infra tests need none).
 */

export interface TestStackHandle {
  child?: ChildProcess;
  stateDir?: string;
  logPath?: string;
  log?: WriteStream;
  statePath: string;
  external: boolean;
}

declare global {
  var __LOCAL_TEST_STACK__: TestStackHandle | undefined;
}

const START_TIMEOUT_MS = 90_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function runningState(path: string): { pid: number } | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const state = JSON.parse(readFileSync(path, 'utf8')) as { pid: number };
    return alive(state.pid) ? state : undefined;
  } catch {
    return undefined;
  }
}

/** `node --import tsx lib/local/web.ts`: builds web/dist when it is missing or stale (lib/local/web.ts). */
async function buildDashboardIfStale(rootDir: string): Promise<void> {
  const build = spawn(process.execPath, ['--import', 'tsx', 'lib/local/web.ts'], {
    cwd: rootDir,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const code = await new Promise<number | null>((resolve) => build.once('exit', resolve));
  if (code !== 0) throw new Error(`building the dashboard failed (exit ${code})`);
}

export default async function globalSetup(globalConfig: { rootDir: string }): Promise<void> {
  const rootDir = globalConfig.rootDir;
  if (process.env.LOCAL_TEST_STACK === 'off') return;

  const given = process.env.LOCAL_STACK_STATE;
  if (given && runningState(given)) {
    globalThis.__LOCAL_TEST_STACK__ = { statePath: given, external: true };
    return;
  }

  const stateDir = join(rootDir, '.local', `test-${process.pid}-${Date.now().toString(36)}`);
  const statePath = join(stateDir, 'stack.json');
  mkdirSync(stateDir, { recursive: true });
  const logPath = join(stateDir, 'stack.log');
  const log = createWriteStream(logPath);

  // The dashboard the browser tests load, built first when stale: its build is not the stack's start.
  await buildDashboardIfStale(rootDir);

  // The tests expect the model simulator's replies: a model server named in this shell is not used.
  const { LLM_PROVIDER: _p, LLM_BASE_URL: _u, LLM_MODEL: _m, LLM_API_KEY: _k, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
    cwd: rootDir,
    env: {
      ...inherited,
      PORT: '0',
      LOCAL_IN_MEMORY: '1',
      LOCAL_STATE_DIR: stateDir,
      LOCAL_EXIT_WITH_PARENT: String(process.pid),
      LOCAL_DEMO: 'off',
      // A bug caught where faults are caught (a tool, the call analysis) fails the tests (platform/programming-errors.ts).
      SURFACE_PROGRAMMING_ERRORS: '1',
      // INFO, as `npm start` runs: test/e2e/platform/logs.test.ts reads this log for personal data.
      POWERTOOLS_LOG_LEVEL: 'INFO',
      LOCAL_VISIBILITY_TIMEOUT_SECONDS: '1',
      SIMULATOR_TIME_SCALE: '60',
      WEBHOOK_RETRY_SCHEDULE: '1,1,1',
      // Any port on this machine: tests start their own webhook receivers on free ports.
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1:*,localhost:*',
      NODE_OPTIONS: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  globalThis.__LOCAL_TEST_STACK__ = { child, stateDir, statePath, logPath, log, external: false };

  // Keep the pipes drained for the whole run (a full pipe would block the stack).
  let tail = '';
  const keep = (chunk: Buffer) => {
    log.write(chunk);
    tail = (tail + chunk.toString('utf8')).slice(-6000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.unref();
  (child.stdout as unknown as { unref?: () => void } | null)?.unref?.();
  (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();

  let exit: string | undefined;
  child.once('exit', (code, signal) => {
    exit = signal ? `signal ${signal}` : `code ${code}`;
  });

  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!runningState(statePath)) {
    if (exit) {
      throw new Error(`The local stack exited (${exit}) before it was ready. Its output:\n${tail}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `The local stack was not ready within ${START_TIMEOUT_MS / 1000} s. Its output:\n${tail}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  process.env.LOCAL_STACK_STATE = statePath;
}
