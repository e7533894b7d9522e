import { BillingAccountEntity } from '../../../functions/billing/entities.js';
import { unitsFor } from '../../../functions/sms/sending.js';
import { api, type Json } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import {
  createContact,
  ledger,
  outboxTo,
  sendSms,
  setBalance,
  setPlan,
  smsTenant,
  thread,
  uniqueMobile,
  ws,
} from './fixtures.js';

/**
 * The charge is written in the same transaction as the message (and a campaign recipient's claim):
 * a balance that does not cover it writes neither — a direct send is 402 with no message and no
 * charge, a campaign recipient ends `failed` (nothing charged) while the others are sent. The
 * suspension check that follows a movement still runs for a plan that switches agents off.
 */

const BODY = 'Your inspection is booked for Saturday at 10.';

test('a direct send the balance does not cover is 402: no message, no charge, nothing sent', async () => {
  const tenant = await smsTenant();
  const contact = await createContact(tenant, { first_name: 'Ann', phone: uniqueMobile() });
  await setBalance(tenant.organisationId, unitsFor(BODY) - 1);
  const entriesBefore = (await ledger(tenant)).length;
  const res = await sendSms(tenant, { to_phone: contact.phone, body: BODY });
  expect(res.status).toBe(402);
  expect(res.body.error).toBe('Insufficient credits');
  await waitForQuiescence();
  expect(await thread(tenant, contact.id as string)).toHaveLength(0);
  expect(outboxTo(contact.phone as string)).toHaveLength(0);
  expect((await ledger(tenant)).length).toBe(entriesBefore);
  const { data: account } = await BillingAccountEntity.get({ organisationId: tenant.organisationId }).go();
  expect(account?.balanceUnits).toBe(unitsFor(BODY) - 1);
});

test('a campaign that runs out of credits: the rest fail uncharged, each counted once', async () => {
  const tenant = await smsTenant();
  const tag = `funds-${Date.now()}`;
  const phones = [uniqueMobile(), uniqueMobile(), uniqueMobile()];
  for (const phone of phones) await createContact(tenant, { first_name: 'Al', phone, tags: [tag] });
  const body = 'Hi {{first_name}}, open home Saturday.';
  await setBalance(tenant.organisationId, unitsFor('Hi Al, open home Saturday.'));
  const created = await api('POST', `${ws(tenant)}/sms-campaigns`, {
    token: tenant.owner.token,
    body: { name: 'Funds', body, audience: { tag } },
  });
  const path = `${ws(tenant)}/sms-campaigns/${created.body.id as string}`;
  expect((await api('PATCH', path, { token: tenant.owner.token, body: { status: 'sending' } })).status).toBe(
    202,
  );
  const done = await waitFor(
    async () => {
      const c = (await api('GET', path, { token: tenant.owner.token })).body as Json;
      return c.status === 'sent' && c.delivered === 1 ? c : undefined;
    },
    { what: 'the campaign sent' },
  );
  await waitForQuiescence();
  expect(done).toMatchObject({ recipients: 3, sent: 1, delivered: 1, failed: 2, skipped: 0 });
  expect(phones.map((p) => outboxTo(p).length).reduce((a, b) => a + b, 0)).toBe(1);
  const charges = (await ledger(tenant)).filter((e) => e.usage_kind === 'sms');
  expect(charges).toHaveLength(1);
});

test('a Free organisation that spends its last credits on an SMS has its agents switched off', async () => {
  const tenant = await smsTenant();
  await setPlan(tenant.organisationId, 'free', 'none');
  await setBalance(tenant.organisationId, unitsFor(BODY));
  const res = await sendSms(tenant, { to_phone: uniqueMobile(), body: BODY });
  expect(res.status).toBe(201);
  const { data: account } = await BillingAccountEntity.get({ organisationId: tenant.organisationId }).go({
    consistent: true,
  });
  expect(account).toMatchObject({ balanceUnits: 0, agentsSuspended: true });
});
