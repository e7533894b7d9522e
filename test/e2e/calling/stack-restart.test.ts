/**
 * A crash in the middle of a call. A local stack of its own (its own state folder, DynamoDB on disk,
 * not in memory), a demo organisation seeded into it, a 30-minute call started and answered; then the
 * stack is killed as a crash kills it (SIGKILL to its whole process group: nothing is stopped cleanly,
 * no callback of the call will ever come) and started again on the same folder. The telephony
 * simulator restarts empty: it no longer knows the call. The sweeper of the restarted stack finds the
 * call silent, asks the provider, and ends it `lost`: its concurrency slot comes back, it is charged
 * and reported (one post-call webhook) once. Every wait is for a condition.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkspaceEntity } from '../../../functions/access/entities.js';
import { seed, type SeedResult } from '../../../lib/tools/cli/seed.js';
import { repoRoot } from '../../../lib/local/paths.js';
import { readStackState, stackStatePath, type StackState } from '../../../lib/local/state.js';
import { stackState } from '../../helpers/stack-state.js';
import { waitFor } from '../../helpers/wait.js';
import { TEST_NUMBERS } from './fixtures.js';

const START_TIMEOUT_MS = 120_000;

interface RunningStack {
  child: ChildProcess;
  state: StackState;
  output: () => string;
  exited: Promise<void>;
}

const stateDir = mkdtempSync(join(tmpdir(), 'stack-restart-'));
const running: RunningStack[] = [];

/** The environment of this jest worker without the shared test stack's variables. */
function ownEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(stackState().env)) delete env[name];
  delete env.LOCAL_STACK_STATE;
  delete env.LOCAL_IN_MEMORY;
  return {
    ...env,
    PORT: '0',
    LOCAL_STATE_DIR: stateDir,
    LOCAL_EXIT_WITH_PARENT: String(process.pid),
    LOCAL_DEMO: 'off',
    LOCAL_VISIBILITY_TIMEOUT_SECONDS: '1',
    POWERTOOLS_LOG_LEVEL: 'WARN',
    SIMULATOR_TIME_SCALE: '20',
    NODE_OPTIONS: '',
  };
}

/** `npm start`'s program in its own process group (so a crash can take the whole group), on `stateDir`. */
async function startStack(): Promise<RunningStack> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
    cwd: repoRoot,
    env: ownEnvironment(),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-8000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let gone = false;
  const exited = new Promise<void>((resolveExit) =>
    child.once('exit', () => {
      gone = true;
      resolveExit();
    }),
  );
  const state = await waitFor(
    () => {
      if (gone) throw new Error(`the local stack exited before it was ready:\n${output}`);
      const current = readStackState(stackStatePath(stateDir));
      return current?.pid === child.pid ? current : undefined;
    },
    { what: () => `the local stack to be ready; its output:\n${output}`, timeoutMs: START_TIMEOUT_MS },
  );
  const stack = { child, state, output: () => output, exited };
  running.push(stack);
  return stack;
}

/** A crash: SIGKILL to the stack's process group (node and DynamoDB Local's java), nothing cleaned up. */
async function crash(stack: RunningStack): Promise<void> {
  process.kill(-stack.child.pid!, 'SIGKILL');
  await stack.exited;
  // Its DynamoDB Local is gone too before another one opens the same files.
  await waitFor(
    () =>
      fetch(stack.state.urls.dynamodb, { signal: AbortSignal.timeout(1000) }).then(
        () => false,
        () => true,
      ),
    { what: "the crashed stack's DynamoDB Local to be gone" },
  );
}

afterAll(async () => {
  for (const stack of running) {
    if (stack.child.exitCode === null && stack.child.signalCode === null) {
      process.kill(-stack.child.pid!, 'SIGINT');
      await stack.exited;
    }
  }
  rmSync(stateDir, { recursive: true, force: true });
}, 30_000);

async function call(stack: RunningStack, demo: SeedResult, callId: string) {
  const res = await fetch(`${stack.state.base_url}/api/v1/workspaces/${demo.workspace_id}/calls/${callId}`, {
    headers: { authorization: `Bearer ${demo.api_key}` },
  });
  if (res.status !== 200) throw new Error(`GET call ${callId}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown> & { status: string };
}

/** The workspace's calls that have not ended (its concurrency slots taken), read from the stack's table. */
async function activeCalls(stack: RunningStack, workspaceId: string): Promise<number> {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: stack.state.urls.dynamodb,
      region: stack.state.env.AWS_REGION,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  );
  try {
    const params = WorkspaceEntity.get({ workspaceId }).params();
    const { Item } = await client.send(
      new GetCommand({ ...params, TableName: stack.state.env.TABLE_NAME, ConsistentRead: true }),
    );
    return (Item?.activeCalls as number | undefined) ?? -1;
  } finally {
    client.destroy();
  }
}

/** The post-call webhooks the stack's demo receiver got for a call (its log survives restarts). */
function webhooksFor(callId: string): { type: string; verified: boolean }[] {
  const log = join(stateDir, 'demo-webhooks.jsonl');
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type: string; call_id: string; verified: boolean })
    .filter((entry) => entry.call_id === callId);
}

/** Waits until the stack reports quiescence twice in a row (everything it was given is done). */
async function waitForStackQuiescence(stack: RunningStack): Promise<void> {
  let quietReads = 0;
  await waitFor(
    async () => {
      const res = await fetch(stack.state.urls.quiescence);
      const quiet = res.status === 200 && ((await res.json()) as { quiescent: boolean }).quiescent;
      quietReads = quiet ? quietReads + 1 : 0;
      return quietReads >= 2;
    },
    { what: 'the restarted stack to be quiescent' },
  );
}

test('a call left open by a crash is reconciled after the restart: lost, its slot freed, reported once', async () => {
  const first = await startStack();
  const demo = await seed(first.state, { plan: 'growth' }, () => undefined);

  const started = await fetch(
    `${first.state.base_url}/api/v1/workspaces/${demo.workspace_id}/agents/${demo.agent_id}/start-call`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${demo.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ to_phone: TEST_NUMBERS.long, record: false }),
    },
  );
  expect(started.status).toBe(201);
  const { id: callId } = (await started.json()) as { id: string };
  await waitFor(async () => (await call(first, demo, callId)).status === 'inprogress', {
    what: `call ${callId} to be answered`,
  });
  expect(await activeCalls(first, demo.workspace_id)).toBe(1);

  await crash(first);
  const second = await startStack();

  // The sweeper finds it silent, the simulator does not know it any more: lost. Ending it and
  // charging it are two steps (the charge is written right after the status): wait for both.
  const ended = await waitFor(
    async () => {
      const now = await call(second, demo, callId);
      return now.status === 'inprogress' || now.credits === null ? undefined : now;
    },
    { what: `call ${callId} to be reconciled; stack output:\n${second.output()}`, timeoutMs: 120_000 },
  );
  expect(ended).toMatchObject({ status: 'failed', end_reason: 'lost', credits: expect.any(Number) });
  expect((ended.status_history as { source: string }[]).at(-1)).toMatchObject({ source: 'sweeper' });
  expect(await activeCalls(second, demo.workspace_id)).toBe(0);

  // Reported to the post-call pipeline: the demo agent's webhook arrives, once.
  await waitFor(() => webhooksFor(callId).length > 0, { what: 'the post-call webhook of the lost call' });
  await waitForStackQuiescence(second);
  expect(webhooksFor(callId)).toEqual([expect.objectContaining({ type: 'call.ended', verified: true })]);
}, 300_000);
