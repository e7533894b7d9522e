/**
 * `npm start` as a newcomer runs it: a second local stack (any free port, in memory), stopped with
 * Ctrl-C as a terminal sends it (SIGINT to the whole process group: npm and the stack each get one,
 * and npm forwards its own). It prints no Node-version warning, makes the demo organisation and prints
 * how to call it (test/e2e/cli/demo.test.ts places that call), says it stopped, and exits 0.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const READY = 'Local stack ready on';

test('npm start comes up quietly and stops cleanly on Ctrl-C', async () => {
  // As on a newcomer's machine: nobody has silenced the SDK's warning beforehand, and no model server
  // of their own is named (this worker's environment names the test stack's model simulator).
  const {
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: _preset,
    LLM_PROVIDER: _provider,
    LLM_BASE_URL: _baseUrl,
    LLM_MODEL: _model,
    LLM_API_KEY: _key,
    ...environment
  } = process.env;
  const stateDir = mkdtempSync(join(tmpdir(), 'npm-start-'));
  const child = spawn('npm', ['start'], {
    detached: true,
    env: {
      ...environment,
      PORT: '0',
      LOCAL_STATE_DIR: stateDir,
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
  const demoPath = join(stateDir, 'demo.json');
  expect(existsSync(demoPath)).toBe(true);
  const demo = JSON.parse(readFileSync(demoPath, 'utf8')) as { workspace_id: string; api_key: string };
  expect(output).toContain('Demo data (made by this start');
  expect(output).toContain(`/api/v1/workspaces/${demo.workspace_id}/agents/`);
  expect(output).toContain(`Bearer ${demo.api_key}`);
  // The language-model simulator is up, printed, and handed to the handlers.
  const stack = JSON.parse(readFileSync(join(stateDir, 'stack.json'), 'utf8')) as {
    env: Record<string, string>;
  };
  const modelUrl = stack.env.LLM_BASE_URL;
  expect(modelUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  expect([stack.env.LLM_PROVIDER, stack.env.LLM_MODEL]).toEqual(['openai', 'simulator']);
  expect(output).toMatch(new RegExp(`language-model +${modelUrl.replace(/\./g, '\\.')} +\\(`));
  expect(await (await fetch(`${modelUrl}/models`)).json()).toMatchObject({ data: [{ id: 'simulator' }] });
  process.kill(-child.pid!, 'SIGINT');
  const code = await exited;

  expect(output).not.toContain('NodeVersionSupportWarning');
  expect(output.trimEnd().split('\n').pop()).toBe('stopped');
  expect(code).toBe(0);
}, 120_000);
