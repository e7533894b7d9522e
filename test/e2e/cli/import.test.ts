/**
 * `npm run cli -- import FILE …`: the real CLI uploads a small CSV through the presigned URL, starts
 * the import, waits for it to end and prints the job with its counts.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { newTenant, uniqueMobile } from '../contacts/fixtures.js';

const run = promisify(execFile);

test('import FILE --workspace --token prints the finished job with exact counts', async () => {
  const tenant = await newTenant();
  const file = join(mkdtempSync(join(tmpdir(), 'import-')), 'leads.csv');
  const phone = uniqueMobile();
  writeFileSync(file, `First Name,Phone,Email\nAda,${phone},\nBob,${phone},bob@example.com\nNobody,,\n`);
  const args = [
    'tsx',
    'bin/cli.ts',
    'import',
    file,
    '--workspace',
    tenant.workspaceId,
    '--token',
    tenant.owner.token,
  ];
  const { stdout } = await run('npx', [...args, '--json'], { env: { ...process.env }, timeout: 90_000 });
  const job = JSON.parse(stdout.trim()) as Record<string, unknown>;
  expect(job).toMatchObject({
    status: 'completed',
    file_name: 'leads.csv',
    counts: { total: 3, created: 1, merged: 1, rejected: 1 },
    errors: [{ row: 3, reason: expect.stringMatching(/no phone number/) }],
  });
  const text = await run('npx', args, { env: { ...process.env }, timeout: 90_000 });
  // The second time, both rows with the number merge into the contact the first run made.
  expect(text.stdout).toMatch(
    /completed: 3 rows, 0 created, 2 merged, 1 rejected, 0 warnings\n {2}row 3: no phone number/,
  );
}, 180_000);
