import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createContact, newTenant, uniqueMobile } from './contacts/fixtures.js';
import { waitFor, waitForQuiescence } from '../helpers/wait.js';
import { subscribe } from './billing/fixtures.js';

/**
 * Logs never carry personal data at INFO (functions/platform/logger.ts): the test stack runs at INFO
 * as `npm start` does (test/helpers/global-setup.ts) and keeps its output in `<state dir>/stack.log`.
 * A contact made through the API goes through the handlers and its `contact.created` through the
 * workspace-events queue, each logged; none of its phone, e-mail or name is in the log.
 */
const stackLog = (): string => {
  const path = join(dirname(process.env.LOCAL_STACK_STATE ?? ''), 'stack.log');
  if (!existsSync(path))
    throw new Error(
      `no stack log at ${path}: this test needs the stack the test run starts (not LOCAL_STACK_STATE)`,
    );
  return readFileSync(path, 'utf8');
};

test('a created contact’s phone, e-mail and name appear nowhere in the stack’s log', async () => {
  const tenant = await newTenant();
  const phone = uniqueMobile();
  const lastName = `Quillfeather${randomUUID().slice(0, 6)}`;
  const email = `${lastName.toLowerCase()}@privacy.example.com`;
  await createContact(tenant, { first_name: 'Zephyrine', last_name: lastName, phone, email });

  // The event was handled and logged (one INFO line), named by its ids alone.
  const handled = (log: string) =>
    log
      .split('\n')
      .filter(
        (line) =>
          line.includes('queue message handled') &&
          line.includes('event.type=contact.created') &&
          line.includes(tenant.workspaceId),
      );
  await waitFor(() => handled(stackLog()).length > 0, { what: 'the contact.created message to be logged' });
  await waitForQuiescence({ timeoutMs: 60_000 });
  const log = stackLog();
  expect(handled(log)).toHaveLength(1);
  expect(handled(log)[0]).toMatch(/^\d\d:\d\d:\d\d INFO /);
  // Its event's id once (`event.id`), not again as the outcome's `event_id`.
  expect(handled(log)[0]).toContain('event.id=');
  expect(handled(log)[0]).not.toContain('event_id=');

  const national = `0${phone.slice(3)}`;
  for (const personal of [phone, phone.slice(1), national, email, lastName, 'Zephyrine'])
    expect(log).not.toContain(personal);
});

test('a plan change is logged with the plans it went from and to (not a redacted `from`)', async () => {
  const tenant = await newTenant();
  await subscribe(tenant.organisationId, tenant.owner.token, 'starter');
  const changed = (log: string) =>
    log
      .split('\n')
      .filter((line) => line.includes('subscription changed') && line.includes(tenant.organisationId));
  await waitFor(() => changed(stackLog()).length > 0, { what: 'the plan change to be logged' });
  const [line] = changed(stackLog());
  expect(line).toContain('from_plan=free');
  expect(line).toContain('to_plan=starter');
  expect(line).not.toContain('[redacted]');
});
