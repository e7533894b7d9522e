import { api } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { receive, smsTenant, uniqueMobile } from '../sms/fixtures.js';
import { createContact, createWorkflow, listRuns, workflowBody, ws } from './fixtures.js';

/**
 * sms.received: a reply's `hot` flag is a Signal condition. A hot reply runs the workflow (Auto Mode,
 * all yolo), which tags the contact; a reply that is not hot completes its run at the Signal.
 */
it('a hot reply tags the contact; a cold one stops at the signal', async () => {
  const tenant = await smsTenant();
  const phone = uniqueMobile();
  const contact = await createContact(tenant, { first_name: 'Hattie', phone });
  const workflow = await createWorkflow(
    tenant,
    workflowBody({
      name: 'Hot replies',
      trigger: { type: 'event', event: 'sms.received' },
      auto_mode: true,
      yolo: true,
      conditions: [{ field: 'hot', op: 'eq', value: true }],
      action: { type: 'update_contact', fields: { tags: ['hot-lead'] } },
    }),
  );

  await receive({ from: phone, to: tenant.number, body: 'No thanks, not interested' });
  await receive({ from: phone, to: tenant.number, body: 'Yes please, call me about the house' });
  const runs = await waitFor(async () => {
    const all = await listRuns(tenant, workflow.id);
    return all.length === 2 && all.every((r) => r.status === 'completed') ? all : undefined;
  });
  const byBody = (body: string) => runs.find((r) => r.event.data.body === body);
  expect(byBody('Yes please, call me about the house')).toMatchObject({
    contact_id: contact.id,
    event: { type: 'sms.received', data: { hot: true, contact_id: contact.id } },
    stages: { signal: { state: 'done', result: { matched: true } }, task: { state: 'done' } },
  });
  expect(byBody('No thanks, not interested')).toMatchObject({
    stages: {
      signal: { result: { matched: false } },
      task: { state: 'skipped' },
      outcome: { state: 'skipped' },
    },
  });
  const got = await api('GET', `${ws(tenant)}/contacts/${contact.id}`, { token: tenant.owner.token });
  expect(got.body.tags).toEqual(['hot-lead']);
  await waitForQuiescence();
  expect(await listRuns(tenant, workflow.id)).toHaveLength(2);
});
