import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { defaultStateDir } from './paths.js';

/**
 * `<stateDir>/stack.json`: how other processes (the CLI, jest workers) reach a running local stack.
 * Written once everything answers, removed when the stack stops.
 */
export interface StackState {
  /** The gateway: API under `${base_url}/api/v1`, provider webhooks under `${base_url}/webhooks/…`. */
  base_url: string;
  pid: number;
  started_at: string;
  state_dir: string;
  in_memory: boolean;
  /** gateway, dynamodb, fauxqs (SQS and S3), identity, plus each local service that reported one. */
  ports: Record<string, number>;
  urls: {
    gateway: string;
    dynamodb: string;
    sqs: string;
    s3: string;
    identity_issuer: string;
    identity_jwks: string;
    identity_token: string;
    /** GET: whether the stack has settled (lib/local/quiescence.ts); local only. */
    quiescence: string;
    /** GET: the handlers' DynamoDB requests, SQS messages sent and CPU (lib/local/metrics.ts); local only. */
    metrics: string;
  };
  /** The voice relay's WebSocket URL (ConversationRelay sessions: the simulator, `call talk`, tests, the test chat). */
  voice_relay_url: string;
  /** Every variable the handlers run with: copy into process.env to reach the same services. */
  env: Record<string, string>;
  services: { name: string; url?: string; description?: string }[];
  /** The dashboard (web/, served by the gateway at `/`), when it is built. */
  dashboard_url?: string;
  functions: { http: number; function_urls: number; pollers: string[]; schedules: string[] };
}

export const STACK_FILE = 'stack.json';
const PORTS_FILE = 'ports.json';

export const stackStatePath = (stateDir: string) => join(stateDir, STACK_FILE);

/** Atomic write (tmp + rename), so a reader never sees half a file. */
function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(tmp, path);
}

export function writeStackState(path: string, state: StackState): void {
  writeJson(path, state);
}

export function removeStackState(path: string): void {
  rmSync(path, { force: true });
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The state of a running stack: the file named by `path`, else `LOCAL_STACK_STATE`, else
 * `<LOCAL_STATE_DIR or .local>/stack.json`. Undefined when there is none or its process is gone.
 */
export function readStackState(path?: string): StackState | undefined {
  const file = path ?? process.env.LOCAL_STACK_STATE ?? stackStatePath(defaultStateDir());
  if (!existsSync(file)) return undefined;
  try {
    const state = JSON.parse(readFileSync(file, 'utf8')) as StackState;
    if (typeof state.pid === 'number' && !isProcessAlive(state.pid)) return undefined;
    return state;
  } catch {
    return undefined;
  }
}

/** Ports used last time (kept across restarts, so the issuer URL and tokens stay valid). */
export function readPreferredPorts(stateDir: string): Record<string, number> {
  try {
    return JSON.parse(readFileSync(join(stateDir, PORTS_FILE), 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

export function writePreferredPorts(stateDir: string, ports: Record<string, number>): void {
  writeJson(join(stateDir, PORTS_FILE), ports);
}
