/**
 * The CLI as the README uses it: `--help` lists every command of the table with its options; the
 * stack and its demo are found through LOCAL_STATE_DIR as `npm start` was given it (or .local), and a
 * missing stack is said clearly; `seed --plan free` prints the end state of billing only.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { commands } from '../../../lib/tools/cli/commands.js';
import { uniqueMobile } from '../contacts/fixtures.js';

const exec = promisify(execFile);

/** The CLI with the environment given (no LOCAL_STACK_STATE: it finds the stack as a user's shell would). */
async function cli(args: string[], env: Record<string, string | undefined> = {}) {
  const { LOCAL_STACK_STATE, ...rest } = process.env;
  void LOCAL_STACK_STATE;
  try {
    const { stdout, stderr } = await exec('npx', ['tsx', 'bin/cli.ts', ...args], {
      env: { ...rest, ...env },
      timeout: 90_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const stateDir = () => dirname(process.env.LOCAL_STACK_STATE as string);

test('--help lists every command with its options, sms receive among them', async () => {
  const { code, stdout } = await cli(['--help']);
  expect(code).toBe(0);
  expect(stdout).toContain('sms receive --from E164 --to E164 --body TEXT [--sid SM…] [--json]');
  for (const command of commands) {
    expect(stdout).toContain(command.name);
    for (const option of Object.keys(command.options)) expect(stdout).toContain(`--${option}`);
  }
});

test('a LOCAL_STATE_DIR without a stack is named in the message', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'no-stack-'));
  const { code, stderr } = await cli(['demo'], { LOCAL_STATE_DIR: empty });
  expect(code).toBe(1);
  expect(stderr).toContain(
    `No running local stack at ${join(empty, 'stack.json')} (LOCAL_STATE_DIR=${empty})`,
  );
});

test('with LOCAL_STATE_DIR: seed finds the stack, demo reads its demo.json, import acts as the demo owner', async () => {
  const env = { LOCAL_STATE_DIR: stateDir() };
  const seeded = await cli(['seed', '--json'], env);
  expect(seeded.code).toBe(0);
  // What `npm start` keeps: the demo file in the state folder. The test stack is shared and makes no
  // demo (other tests rely on that), so the file goes again when this test ends.
  const demoFile = join(stateDir(), 'demo.json');
  writeFileSync(demoFile, seeded.stdout);
  try {
    const demo = JSON.parse(seeded.stdout) as { workspace_id: string; api_key: string };

    const field = await cli(['demo', 'workspace_id'], env);
    expect(field).toMatchObject({ code: 0, stdout: `${demo.workspace_id}\n` });

    const file = join(mkdtempSync(join(tmpdir(), 'import-')), 'leads.csv');
    writeFileSync(file, `First Name,Phone\nAda,${uniqueMobile()}\n`);
    const imported = await cli(['import', file, '--json'], env);
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ status: 'completed', counts: { created: 1 } });
  } finally {
    rmSync(demoFile, { force: true });
  }
}, 180_000);

test('seed --plan free prints the end state of billing, not the Growth plan it passed through', async () => {
  const { code, stdout, stderr } = await cli(['seed', '--plan', 'free', '--json'], {
    LOCAL_STATE_DIR: stateDir(),
  });
  expect(code).toBe(0);
  expect(JSON.parse(stdout)).toMatchObject({ plan: 'free' });
  const billing = stderr.split('\n').filter((line) => line.includes('billing: plan'));
  expect(billing).toEqual([expect.stringMatching(/^\[cli\] billing: plan free, status \w+, 500 credits$/)]);
  expect(stderr).not.toContain('plan growth');
}, 120_000);
