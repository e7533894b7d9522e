/**
 * `npm run cli -- sms receive --from … --to … --body …`: the real CLI makes the SMS simulator deliver
 * a signed inbound SMS; `--sid` repeats one (a replay, which changes nothing).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { contactByPhone, smsTenant, thread, uniqueMobile } from './fixtures.js';

const run = promisify(execFile);

test('sms receive delivers a signed inbound SMS to the workspace’s inbox, once per sid', async () => {
  const tenant = await smsTenant();
  const from = uniqueMobile();
  const args = [
    'tsx',
    'bin/cli.ts',
    'sms',
    'receive',
    '--from',
    from,
    '--to',
    tenant.number,
    '--body',
    'Yes please',
  ];
  const { stdout } = await run('npx', [...args, '--json'], { env: { ...process.env }, timeout: 90_000 });
  const result = JSON.parse(stdout.trim()) as { sid: string; http_status: number };
  expect(result).toMatchObject({ sid: expect.stringMatching(/^SM/), http_status: 200 });
  const text = await run('npx', [...args, '--sid', result.sid], { env: { ...process.env }, timeout: 90_000 });
  expect(text.stdout).toMatch(new RegExp(`^delivered ${result.sid} from \\${from}`));
  const person = await contactByPhone(tenant, from);
  expect(await thread(tenant, person.id)).toEqual([
    expect.objectContaining({ body: 'Yes please', hot: true }),
  ]);

  const usage = await run('npx', ['tsx', 'bin/cli.ts', 'sms', 'receive', '--from', from], {
    env: { ...process.env },
    timeout: 90_000,
  }).catch((error: { code: number; stderr: string }) => error);
  expect(usage).toMatchObject({
    code: 2,
    stderr: expect.stringContaining('usage: npm run cli -- sms receive'),
  });
});
