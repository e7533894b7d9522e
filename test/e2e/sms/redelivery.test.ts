import { sendMessage } from '../../../functions/platform/queue.js';
import { FAILING_NUMBER_PREFIX } from '../../../functions/providers/sms/local-outbox.js';
import { SMS_SCENARIO_NUMBERS } from '../../../lib/local/simulators/sms/server.js';
import { api, type Json } from '../../helpers/http.js';
import { waitFor, waitForQuiescence } from '../../helpers/wait.js';
import {
  createContact,
  entriesFor,
  inboundParams,
  outboxTo,
  postWebhook,
  smsTenant,
  thread,
  uniqueMobile,
  ws,
  type SmsTenant,
} from './fixtures.js';

/**
 * What the campaign's sending no longer reads, it must still get right when its messages come twice:
 * a page and a chunk delivered again (as the queue may), with the campaign's facts and in the form
 * queued before chunks carried them, and a delivery callback replayed, change no count, send nothing
 * twice and charge nothing twice. A provider's refusal is refunded; an undelivered message stays
 * charged; a duplicated `delivered` callback counts once.
 */

let tenant: SmsTenant;
beforeAll(async () => {
  tenant = await smsTenant();
});

const campaigns = () => `${ws(tenant)}/sms-campaigns`;

async function campaign(id: string): Promise<Json> {
  const res = await api('GET', `${campaigns()}/${id}`, { token: tenant.owner.token });
  if (res.status !== 200) throw new Error(`get campaign: ${res.status} ${res.text}`);
  return res.body;
}

test('a page, a chunk and a delivery callback delivered again change nothing', async () => {
  const plain = await createContact(tenant, { first_name: 'Ann', phone: uniqueMobile() });
  const duplicated = await createContact(tenant, {
    first_name: 'Dup',
    phone: SMS_SCENARIO_NUMBERS.duplicated,
  });
  const undelivered = await createContact(tenant, {
    first_name: 'Und',
    phone: SMS_SCENARIO_NUMBERS.undelivered,
  });
  const refused = await createContact(tenant, { first_name: 'Ref', phone: `${FAILING_NUMBER_PREFIX}0` });
  const contactIds = [plain.id, duplicated.id, undelivered.id, refused.id] as string[];
  const created = await api('POST', campaigns(), {
    token: tenant.owner.token,
    body: {
      name: 'Twice',
      body: 'Hi {{first_name}}, see you Saturday.',
      audience: { contact_ids: contactIds },
    },
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const started = await api('PATCH', `${campaigns()}/${id}`, {
    token: tenant.owner.token,
    body: { status: 'sending' },
  });
  expect(started.status).toBe(202);
  const expected = {
    status: 'sent',
    recipients: 4,
    sent: 3,
    delivered: 2,
    failed: 2,
    skipped: 0,
    credits: 15,
  };
  await waitFor(
    async () => {
      const now = await campaign(id);
      return now.status === 'sent' && now.delivered === 2 && now.failed === 2 ? now : undefined;
    },
    { what: 'the campaign sent, 2 delivered and 2 failed' },
  );
  await waitForQuiescence();
  expect(await campaign(id)).toMatchObject(expected);

  const messageOf = async (contactId: string) => {
    const items = await thread(tenant, contactId);
    expect(items.filter((m) => m.campaign_id === id)).toHaveLength(1);
    return items.find((m) => m.campaign_id === id)!;
  };
  const messages = {
    plain: await messageOf(plain.id),
    duplicated: await messageOf(duplicated.id),
    undelivered: await messageOf(undelivered.id),
    refused: await messageOf(refused.id),
  };
  expect(messages.plain.status).toBe('delivered');
  expect(messages.duplicated.status).toBe('delivered');
  expect(messages.undelivered.status).toBe('failed');
  expect(messages.refused.status).toBe('failed');
  // Charged once each; the provider's refusal refunded, the undelivered message not.
  for (const message of [messages.plain, messages.duplicated, messages.undelivered])
    expect((await entriesFor(tenant, message.id as string)).map((e) => e.credits)).toEqual([-5]);
  expect(
    (await entriesFor(tenant, messages.refused.id as string)).map((e) => e.credits).sort((a, b) => a - b),
  ).toEqual([-5, 5]);

  // The queue delivers the page and the chunk again (the chunk also as queued before it carried the
  // campaign's facts), and the provider replays the plain message's `delivered`.
  const facts = { organisation_id: tenant.organisationId, from_phone: tenant.number };
  await sendMessage('sms', {
    type: 'sms.campaign.page',
    workspace_id: tenant.workspaceId,
    campaign_id: id,
    page: 0,
    cursor: null,
    campaign: { ...facts, audience: { contact_ids: contactIds } },
  });
  await sendMessage('sms', {
    type: 'sms.campaign.chunk',
    workspace_id: tenant.workspaceId,
    campaign_id: id,
    contact_ids: contactIds,
    ...facts,
  });
  await sendMessage('sms', {
    type: 'sms.campaign.chunk',
    workspace_id: tenant.workspaceId,
    campaign_id: id,
    contact_ids: contactIds,
  });
  const query = new URLSearchParams({
    event: 'status',
    workspace_id: tenant.workspaceId,
    message_id: messages.plain.id as string,
    campaign_id: id,
  }).toString();
  const replay = await postWebhook(
    {
      ...inboundParams({ sid: 'SMreplay', from: tenant.number, to: plain.phone as string, body: '' }),
      MessageSid: outboxTo(plain.phone as string)[0].message_id,
      SmsSid: outboxTo(plain.phone as string)[0].message_id,
      MessageStatus: 'delivered',
    },
    { query },
  );
  expect(replay.status).toBe(200);
  await waitForQuiescence();

  expect(await campaign(id)).toMatchObject(expected);
  expect(outboxTo(plain.phone as string).filter((s) => s.text.startsWith('Hi Ann'))).toHaveLength(1);
  expect(outboxTo(SMS_SCENARIO_NUMBERS.duplicated).filter((s) => s.text.startsWith('Hi Dup'))).toHaveLength(
    1,
  );
  expect(outboxTo(SMS_SCENARIO_NUMBERS.undelivered).filter((s) => s.text.startsWith('Hi Und'))).toHaveLength(
    1,
  );
  for (const message of [messages.plain, messages.duplicated, messages.undelivered])
    expect(await entriesFor(tenant, message.id as string)).toHaveLength(1);
  expect(await entriesFor(tenant, messages.refused.id as string)).toHaveLength(2);
  for (const [name, contactId] of Object.entries({ plain: plain.id, duplicated: duplicated.id }))
    expect([name, (await messageOf(contactId as string)).status]).toEqual([name, 'delivered']);
}, 90_000);

test('a campaign of two pages and chunks sending at once: every recipient once, counted once, then sent', async () => {
  const tag = `pages-${Date.now()}`;
  const phones = Array.from({ length: 57 }, () => uniqueMobile());
  for (let start = 0; start < phones.length; start += 8)
    await Promise.all(
      phones
        .slice(start, start + 8)
        .map((phone, i) => createContact(tenant, { first_name: `P${start + i}`, phone, tags: [tag] })),
    );
  const created = await api('POST', campaigns(), {
    token: tenant.owner.token,
    body: { name: 'Pages', body: 'Hi {{first_name}}, two pages.', audience: { tag } },
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  expect(
    (await api('PATCH', `${campaigns()}/${id}`, { token: tenant.owner.token, body: { status: 'sending' } }))
      .status,
  ).toBe(202);
  await waitFor(
    async () => {
      const now = await campaign(id);
      return now.status === 'sent' && now.delivered === phones.length ? now : undefined;
    },
    { what: 'the campaign sent and every message delivered', timeoutMs: 60_000 },
  );
  await waitForQuiescence();
  expect(await campaign(id)).toMatchObject({
    status: 'sent',
    recipients: phones.length,
    sent: phones.length,
    delivered: phones.length,
    failed: 0,
    skipped: 0,
    credits: 5 * phones.length,
    progress: { done: phones.length, total: phones.length },
  });
  for (const phone of phones)
    expect([phone, outboxTo(phone).filter((s) => s.text.endsWith('two pages.')).length]).toEqual([phone, 1]);
}, 120_000);
