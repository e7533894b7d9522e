/**
 * `npm start` as a newcomer runs it: a second local stack (any free port, in memory), stopped with
 * Ctrl-C as a terminal sends it (SIGINT to the whole process group: npm and the stack each get one,
 * and npm forwards its own). It prints no Node-version warning, says it stopped, and exits 0.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const READY = 'Local stack ready on';

test('npm start comes up quietly and stops cleanly on Ctrl-C', async () => {
  // As on a newcomer's machine: nobody has silenced the SDK's warning beforehand.
  const { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: _preset, ...environment } = process.env;
  const child = spawn('npm', ['start'], {
    detached: true,
    env: {
      ...environment,
      PORT: '0',
      LOCAL_STATE_DIR: mkdtempSync(join(tmpdir(), 'npm-start-')),
      LOCAL_IN_MEMORY: '1',
      LOCAL_SCHEDULER: 'off',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

  await new Promise<void>((resolve, reject) => {
    const check = () => (output.includes(READY) ? resolve() : undefined);
    child.stdout.on('data', check);
    void exited.then(() => reject(new Error(`npm start exited before it was ready:\n${output}`)));
  });
  process.kill(-child.pid!, 'SIGINT');
  const code = await exited;

  expect(output).not.toContain('NodeVersionSupportWarning');
  expect(output.trimEnd().split('\n').pop()).toBe('stopped');
  expect(code).toBe(0);
}, 120_000);
