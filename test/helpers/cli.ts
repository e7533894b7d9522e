import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { repoRoot } from '../../lib/local/paths.js';

const run = promisify(execFile);

/** `npm run cli -- <args>` against the test stack: its standard output, trimmed. */
export async function cli(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bin/cli.ts', ...args], {
    cwd: repoRoot,
    env: process.env,
  });
  return stdout.trim();
}

/** Someone dials `to` from `from` and says `lines` (`call receive --json`): the call's id. */
export async function receiveCall(from: string, to: string, ...lines: string[]): Promise<string> {
  const out = await cli(
    'call',
    'receive',
    '--from',
    from,
    '--to',
    to,
    ...lines.flatMap((line) => ['--say', line]),
    '--json',
  );
  return (JSON.parse(out) as { call_id: string }).call_id;
}
