import { Webhook } from 'standardwebhooks';
import { api, type Json } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import { receive, smsTenant, uniqueMobile } from '../sms/fixtures.js';
import {
  newTenant,
  startReceiver,
  webhookSecret,
  ws,
  type Receiver,
  type Tenant,
} from '../post-call/fixtures.js';

/**
 * Events whatever the text: an emoji (outside the BMP) in a contact's name or an inbound SMS is
 * written, answered with success, and its event delivered once; the local queue stand-in refuses
 * such characters in a raw body, so this fails unless queue bodies are written escaped.
 */

const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.stop()));
});

async function hookFor(tenant: Tenant, eventTypes: string[]): Promise<Receiver> {
  const hook = await startReceiver();
  receivers.push(hook);
  const res = await api('POST', `${ws(tenant)}/webhook-endpoints`, {
    token: tenant.owner.token,
    body: { url: hook.url, event_types: eventTypes },
  });
  if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${res.text}`);
  return hook;
}

const verified = async (tenant: Tenant, request: Receiver['requests'][number]) =>
  new Webhook(await webhookSecret(tenant)).verify(
    request.body,
    request.headers as Record<string, string>,
  ) as Json;

it('a contact named with an emoji: 201, contact.created delivered once, an Idempotency-Key retry answers the same', async () => {
  const tenant = await newTenant();
  const hook = await hookFor(tenant, ['contact.created']);
  const phone = uniqueMobile();
  const create = () =>
    api('POST', `${ws(tenant)}/contacts`, {
      token: tenant.owner.token,
      headers: { 'idempotency-key': 'emoji-contact-1' },
      body: { first_name: 'Zoë 🏡', last_name: 'Ng', phone },
    });
  const res = await create();
  expect(res.status).toBe(201);
  expect(res.body.first_name).toBe('Zoë 🏡');

  const request = await waitFor(() => hook.requests[0], { what: 'the contact.created event' });
  expect(request.headers['webhook-id']).toBe(`evt_contact_created_${res.body.id}`);
  expect(await verified(tenant, request)).toMatchObject({
    type: 'contact.created',
    data: { contact_id: res.body.id, first_name: 'Zoë 🏡', last_name: 'Ng' },
  });

  const again = await create();
  expect(again.status).toBe(201);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body).toEqual(res.body);
  await waitForQuiescence();
  expect(hook.requests).toHaveLength(1);
  const list = await api('GET', `${ws(tenant)}/contacts`, { token: tenant.owner.token });
  expect(list.body.items.filter((c: Json) => c.first_name === 'Zoë 🏡')).toHaveLength(1);
});

it('an inbound SMS with an emoji: accepted, sms.received delivered once with the text as sent', async () => {
  const tenant = await smsTenant();
  const hook = await hookFor(tenant, ['sms.received']);
  const from = uniqueMobile();
  const sent = await receive({ from, to: tenant.number, body: 'Yes 👍 call me' });
  expect(sent.http_status).toBeLessThan(300);

  const request = await waitFor(() => hook.requests[0], { what: 'the sms.received event' });
  expect(await verified(tenant, request)).toMatchObject({
    type: 'sms.received',
    data: { from_phone: from, to_phone: tenant.number, body: 'Yes 👍 call me', hot: true },
  });
  await waitForQuiescence();
  expect(hook.requests).toHaveLength(1);
});
