/**
 * The quick start's `npm run --silent cli -- seed --json`: its standard output is exactly one JSON line
 * (npm's own banner and log stay out of it without a project-wide `loglevel=silent`, which would also
 * hide npm's errors from everyone running `npm ci`).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

test('npm run --silent cli -- seed --json prints one JSON line and nothing else', async () => {
  const { stdout } = await run('npm', ['run', '--silent', 'cli', '--', 'seed', '--json'], {
    env: { ...process.env },
    timeout: 90_000,
  });
  const lines = stdout.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  const demo = JSON.parse(lines[0]) as Record<string, unknown>;
  expect(demo).toMatchObject({
    workspace_id: expect.any(String),
    agent_id: expect.any(String),
    api_key: expect.stringMatching(/^vak_/),
  });
}, 120_000);
