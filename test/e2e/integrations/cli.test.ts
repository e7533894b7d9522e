/**
 * `npm run cli -- crm …`: the real CLI lists, sells and adds to the demo CRM of the running stack,
 * and a connected integration's next sync sees it.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { crmSimulator } from '../../../lib/local/simulators/crm/client.js';
import { stackState } from '../../helpers/stack-state.js';

const run = promisify(execFile);
const cli = (...args: string[]) =>
  run('npx', ['tsx', 'bin/cli.ts', 'crm', ...args], { env: { ...process.env }, timeout: 60_000 });

test('crm listings, crm sell --listing, crm add-contact --phone --email, crm contacts, crm delete-listing, crm delete-contact', async () => {
  const account = `cli-${randomUUID().slice(0, 8)}`;
  const listed = JSON.parse((await cli('listings', '--account', account, '--json')).stdout) as {
    external_id: string;
  }[];
  expect(listed.map((l) => l.external_id)).toEqual(['L-1001', 'L-1002', 'L-1003', 'L-1004', 'L-1005']);
  const text = (await cli('listings', '--account', account)).stdout;
  expect(text).toMatch(/^L-1001 +available +\$1,250,000 +12 Harbour Street Manly$/m);

  const sold = await cli('sell', '--listing', 'L-1003', '--account', account);
  expect(sold.stdout).toMatch(/^L-1003 \(7 Wattle Grove\) is sold at \d{4}-.*listing\.sold/);
  await cli('add-contact', '--phone', '+61491570055', '--email', 'cli@example.com', '--account', account);

  const crm = crmSimulator(stackState().env.CRM_SIMULATOR_URL, account);
  expect((await crm.listings()).find((l) => l.external_id === 'L-1003')?.status).toBe('sold');
  expect(await crm.contacts()).toContainEqual(
    expect.objectContaining({ phone: '+61491570055', email: 'cli@example.com' }),
  );
  await expect(cli('sell', '--listing', 'L-9999', '--account', account)).rejects.toMatchObject({
    stderr: expect.stringMatching(/no listing L-9999/),
  });
  await expect(cli('sell')).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/usage/) });

  // crm contacts, crm delete-listing, crm delete-contact: the deletions are in the feed.
  const people = JSON.parse((await cli('contacts', '--account', account, '--json')).stdout) as {
    external_id: string;
  }[];
  expect(people.map((c) => c.external_id)).toContain('C-2002');
  expect((await cli('delete-listing', '--listing', 'L-1002', '--account', account)).stdout).toMatch(
    /^L-1002 is deleted .*removes it from its listings knowledge base/,
  );
  expect((await cli('delete-contact', '--contact', 'C-2002', '--account', account)).stdout).toMatch(
    /^C-2002 is deleted .*keeps the workspace/,
  );
  expect((await crm.listings()).map((l) => l.external_id)).not.toContain('L-1002');
  expect((await crm.contacts()).map((c) => c.external_id)).not.toContain('C-2002');
  await expect(cli('delete-listing', '--listing', 'L-1002', '--account', account)).rejects.toMatchObject({
    stderr: expect.stringMatching(/no listing L-1002/),
  });
  await expect(cli('delete-contact')).rejects.toMatchObject({
    code: 2,
    stderr: expect.stringMatching(/usage/),
  });
}, 240_000);
