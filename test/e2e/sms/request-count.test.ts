import { api, type Json } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import {
  createContact,
  entriesFor,
  outboxTo,
  smsTenant,
  uniqueMobile,
  ws,
  type SmsTenant,
} from './fixtures.js';
import { requestsBetween, stackCounters, totalOf, type StackCounters } from '../../helpers/metrics.js';

/**
 * What one SMS costs in DynamoDB requests (issue 34's budget: ≤ 10 a message), counted by the local
 * stack per function (GET /_local/metrics) between two quiescent points: a campaign message — the
 * `ProcessSms` worker (its audience page and its chunk) and the delivery status callback
 * (`TelephonySmsWebhook`) — and a message sent with `POST …/sms` (the `SmsApi` request and its
 * callback). The numbers are exact: a change that adds a request to the path breaks them, one that
 * removes one lowers them here. The behaviour is held by the other files of this folder.
 */

/** Requests of `fnId` between two reads of the counters, by command, and their total. */
const counted = (before: StackCounters, after: StackCounters, fnId: string) => {
  const commands = requestsBetween(before, after, fnId);
  return { commands, total: totalOf(commands) };
};

let tenant: SmsTenant;
beforeAll(async () => {
  tenant = await smsTenant();
});

const campaigns = () => `${ws(tenant)}/sms-campaigns`;

test('a campaign message: the worker and its delivery callback make at most 10 DynamoDB requests', async () => {
  // A campaign to a tag, as the cost bench's (`BENCH_PARTS=cost`): its page lists the tag's contacts.
  const phone = uniqueMobile();
  const tag = `count-${Date.now()}`;
  await createContact(tenant, { first_name: 'Ada', phone, tags: [tag] });
  const created = await api('POST', campaigns(), {
    token: tenant.owner.token,
    body: { name: 'Count', body: 'Hi {{first_name}}, open home Saturday.', audience: { tag } },
  });
  expect(created.status).toBe(201);
  await waitForQuiescence();
  const before = await stackCounters();
  const started = await api('PATCH', `${campaigns()}/${created.body.id}`, {
    token: tenant.owner.token,
    body: { status: 'sending' },
  });
  expect(started.status).toBe(202);
  await waitFor(() => outboxTo(phone).length > 0, { what: 'the campaign message at the provider' });
  await waitForQuiescence();
  const after = await stackCounters();

  const campaign = await api('GET', `${campaigns()}/${created.body.id}`, { token: tenant.owner.token });
  expect(campaign.body).toMatchObject({ status: 'sent', recipients: 1, sent: 1, delivered: 1, credits: 5 });
  expect(outboxTo(phone)).toHaveLength(1);

  const worker = counted(before, after, 'ProcessSms');
  const callback = counted(before, after, 'TelephonySmsWebhook');
  // The worker: the page's contacts of the tag and its transaction; the chunk's read, the claim-and-charge, the acceptance with
  // the recipient's count, the campaign marked sent. The callbacks: `sent` read (and written when it
  // came before the worker recorded the acceptance), `delivered` one conditioned transaction.
  // When the simulator's `delivered` comes before the worker recorded the acceptance (it calls back at
  // once), the recipient's count is written on its own: one transaction more.
  expect(worker.commands).toEqual({
    Query: 1,
    TransactWriteItems: expect.any(Number),
    TransactGetItems: 1,
    UpdateItem: 1,
  });
  expect(worker.commands.TransactWriteItems).toBeGreaterThanOrEqual(3);
  expect(worker.commands.TransactWriteItems).toBeLessThanOrEqual(4);
  expect(callback.total).toBeGreaterThanOrEqual(2);
  expect(callback.total).toBeLessThanOrEqual(3);
  expect(worker.total + callback.total).toBeLessThanOrEqual(10);
}, 60_000);

test('a message sent with POST …/sms: the request and its delivery callback make at most 10 DynamoDB requests', async () => {
  const to = uniqueMobile();
  await waitForQuiescence();
  const before = await stackCounters();
  const sent = await api('POST', `${ws(tenant)}/sms`, {
    token: tenant.owner.token,
    body: { to_phone: to, body: 'Your inspection is booked for Saturday at 10.' },
  });
  expect(sent.status).toBe(201);
  const afterRequest = await stackCounters();
  await waitFor(() => outboxTo(to).length > 0, { what: 'the message at the provider' });
  await waitForQuiescence();
  const after = await stackCounters();
  const message = await api('GET', `${ws(tenant)}/sms/${sent.body.id as string}`, {
    token: tenant.owner.token,
  });
  expect((message.body as Json).status).toBe('delivered');
  expect(await entriesFor(tenant, sent.body.id as string)).toHaveLength(1);

  const request = counted(before, afterRequest, 'SmsApi');
  const callback = counted(before, after, 'TelephonySmsWebhook');
  // The request: authentication (2), the sender, one read of the number's contact key, suppression
  // entry and billing account, the new contact, the claim-and-charge, the acceptance.
  expect(request.commands).toEqual({ TransactGetItems: 2, GetItem: 1, Query: 1, TransactWriteItems: 3 });
  expect(callback.total).toBeGreaterThanOrEqual(2);
  expect(callback.total).toBeLessThanOrEqual(3);
  expect(request.total + callback.total).toBeLessThanOrEqual(10);
}, 60_000);
