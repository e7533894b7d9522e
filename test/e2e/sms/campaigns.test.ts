import { countHeldSms, releaseHeldSms } from '../../../functions/sms/held.js';
import { api, type Json } from '../../helpers/http.js';
import { waitFor } from '../../helpers/wait.js';
import {
  addMember,
  createContact,
  ledger,
  newTenant,
  outboxTo,
  receive,
  setPlan,
  smsTenant,
  uniqueMobile,
  ws,
  type SmsTenant,
  type Tenant,
} from './fixtures.js';

/**
 * SMS campaigns: placeholders from contact fields, audiences (contact ids, a tag, all contactable),
 * sending in the background with counts kept on write, the unsubscribed and suppressed skipped at send
 * time, replies and opt-outs counted, held while billing is past due; comparison of 2 to 5.
 */

const campaigns = (t: Tenant) => `${ws(t)}/sms-campaigns`;

async function createCampaign(t: Tenant, body: Record<string, unknown>): Promise<Json> {
  const res = await api('POST', campaigns(t), { token: t.owner.token, body });
  if (res.status !== 201) throw new Error(`create campaign: ${res.status} ${res.text}`);
  return res.body;
}

async function getCampaign(t: Tenant, id: string): Promise<Json> {
  const res = await api('GET', `${campaigns(t)}/${id}`, { token: t.owner.token });
  if (res.status !== 200) throw new Error(`get campaign: ${res.status} ${res.text}`);
  return res.body;
}

async function sendCampaign(t: Tenant, id: string): Promise<Json> {
  const res = await api('PATCH', `${campaigns(t)}/${id}`, {
    token: t.owner.token,
    body: { status: 'sending' },
  });
  expect(res.status).toBe(202);
  expect(res.body.status).toBe('sending');
  return res.body;
}

const waitForCampaign = (t: Tenant, id: string, done: (c: Json) => boolean) => {
  let last: Json;
  return waitFor(
    async () => {
      last = await getCampaign(t, id);
      return done(last) ? last : undefined;
    },
    { what: () => `campaign ${id}; last ${JSON.stringify(last)}`, timeoutMs: 30_000 },
  );
};

let tenant: SmsTenant;
beforeAll(async () => {
  tenant = await smsTenant();
});

describe('SMS campaigns', () => {
  it('sends to a tag with placeholders, skips the unsubscribed and suppressed, counts on write, charges once each', async () => {
    const tag = `vip-${Date.now()}`;
    const ann = await createContact(tenant, {
      first_name: 'Ann',
      phone: uniqueMobile(),
      tags: [tag],
      attributes: { suburb: 'Fitzroy' },
    });
    const bob = await createContact(tenant, { phone: uniqueMobile(), tags: [tag.toUpperCase()] }); // no name
    const una = await createContact(tenant, {
      first_name: 'Una',
      phone: uniqueMobile(),
      tags: [tag],
      contactability: 'unsubscribed',
    });
    const sue = await createContact(tenant, { first_name: 'Sue', phone: uniqueMobile(), tags: [tag] });
    const other = await createContact(tenant, { first_name: 'Otto', phone: uniqueMobile() });
    await api(
      'PUT',
      `/api/v1/organisations/${tenant.organisationId}/suppression-list/${encodeURIComponent(sue.phone)}`,
      {
        token: tenant.owner.token,
        body: {},
      },
    );

    const draft = await createCampaign(tenant, {
      name: 'Open homes',
      body: 'Hi {{first_name}}, open home in {{suburb}} on Saturday!',
      audience: { tag },
    });
    expect(draft).toMatchObject({
      status: 'draft',
      recipients: 0,
      sent: 0,
      audience: { tag, contact_ids: null, all: false },
    });
    expect(draft.id).toMatch(/^cmp_/);
    await sendCampaign(tenant, draft.id);
    const done = await waitForCampaign(tenant, draft.id, (c) => c.status === 'sent' && c.delivered === 2);
    expect(done).toMatchObject({
      recipients: 4,
      sent: 2,
      delivered: 2,
      failed: 0,
      skipped: 2,
      replies: 0,
      opt_outs: 0,
      credits: 10,
      progress: { done: 4, total: 4 },
    });
    expect(outboxTo(ann.phone).map((s) => s.text)).toEqual(['Hi Ann, open home in Fitzroy on Saturday!']);
    // A placeholder with no value renders empty (and its space is tidied).
    expect(outboxTo(bob.phone).map((s) => s.text)).toEqual(['Hi, open home in on Saturday!']);
    expect([...outboxTo(una.phone), ...outboxTo(sue.phone), ...outboxTo(other.phone)]).toHaveLength(0);
    const charges = (await ledger(tenant)).filter((e) => e.usage_kind === 'sms' && e.credits === -5);
    expect(charges.length).toBeGreaterThanOrEqual(2);
    expect(new Set(charges.map((e) => e.source)).size).toBe(charges.length);

    // Replies and opt-outs are counted on the campaign they answer.
    await receive({ from: ann.phone, to: tenant.number, body: 'Sounds good, what time?' });
    await receive({ from: bob.phone, to: tenant.number, body: 'STOP' });
    const counted = await getCampaign(tenant, draft.id);
    expect(counted).toMatchObject({ replies: 1, opt_outs: 1 });

    // A sent campaign cannot be sent, changed or deleted... but can be compared.
    expect(
      (
        await api('PATCH', `${campaigns(tenant)}/${draft.id}`, {
          token: tenant.owner.token,
          body: { status: 'sending' },
        })
      ).status,
    ).toBe(409);
    expect(
      (
        await api('PATCH', `${campaigns(tenant)}/${draft.id}`, {
          token: tenant.owner.token,
          body: { name: 'x' },
        })
      ).status,
    ).toBe(409);
  });

  it('audience contact_ids and all contactable; held while past due, sent once when billing recovers', async () => {
    const t = await smsTenant();
    const a = await createContact(t, { first_name: 'A', phone: uniqueMobile() });
    const b = await createContact(t, { first_name: 'B', phone: uniqueMobile() });
    const u = await createContact(t, {
      first_name: 'U',
      phone: uniqueMobile(),
      contactability: 'unsubscribed',
    });
    const everyone = await createCampaign(t, {
      name: 'All',
      body: 'Hello {{first_name}}',
      audience: { all: true },
    });
    await sendCampaign(t, everyone.id);
    const all = await waitForCampaign(t, everyone.id, (c) => c.status === 'sent');
    expect(all).toMatchObject({ recipients: 2, sent: 2, skipped: 0 });
    expect(outboxTo(u.phone)).toHaveLength(0);

    await setPlan(t.organisationId, 'growth', 'past_due');
    const some = await createCampaign(t, {
      name: 'Some',
      body: 'Hi again {{first_name}}',
      audience: { contact_ids: [a.id, u.id, 'ct_01ARZ3NDEKTSV4RRFFQ69G5FAV'] },
    });
    await sendCampaign(t, some.id);
    await waitFor(async () => ((await countHeldSms(t.organisationId)) === 1 ? true : undefined), {
      what: 'the chunk to be held',
    });
    expect(await getCampaign(t, some.id)).toMatchObject({ status: 'sending', recipients: 3, sent: 0 });
    await setPlan(t.organisationId, 'growth', 'active');
    await releaseHeldSms(t.organisationId);
    await releaseHeldSms(t.organisationId);
    const sent = await waitForCampaign(t, some.id, (c) => c.status === 'sent');
    expect(sent).toMatchObject({ recipients: 3, sent: 1, skipped: 2, credits: 5 });
    expect(outboxTo(a.phone).filter((s) => s.text === 'Hi again A')).toHaveLength(1);
    expect(outboxTo(b.phone).filter((s) => s.text.startsWith('Hi again'))).toHaveLength(0);
    expect(await countHeldSms(t.organisationId)).toBe(0);
  });

  it('compare takes 2 to 5 campaigns in the order asked, with rates; 422 outside that', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i += 1)
      ids.push((await createCampaign(tenant, { name: `C${i}`, body: 'x', audience: { all: true } })).id);
    const compare = (list: string[]) =>
      api('GET', `${campaigns(tenant)}/compare?ids=${list.join(',')}`, { token: tenant.owner.token });
    expect((await compare(ids.slice(0, 1))).status).toBe(422);
    expect((await compare(ids)).status).toBe(422);
    expect((await api('GET', `${campaigns(tenant)}/compare`, { token: tenant.owner.token })).status).toBe(
      422,
    );
    expect((await compare([ids[0], ids[0]])).status).toBe(422);
    const two = await compare([ids[3], ids[1]]);
    expect(two.status).toBe(200);
    expect(two.body.items.map((i: Json) => i.id)).toEqual([ids[3], ids[1]]);
    expect(two.body.items[0]).toMatchObject({
      name: 'C3',
      sent: 0,
      delivery_rate: 0,
      reply_rate: 0,
      opt_out_rate: 0,
    });
    const five = await compare(ids.slice(0, 5));
    expect(five.body.items).toHaveLength(5);
    expect((await compare([ids[0], 'cmp_01ARZ3NDEKTSV4RRFFQ69G5FAV'])).status).toBe(404);
    const stranger = await smsTenant();
    const theirs = await createCampaign(stranger, { name: 'Theirs', body: 'x', audience: { all: true } });
    expect((await compare([ids[0], theirs.id])).status).toBe(404);

    const sentOne = (
      await api('GET', `${campaigns(tenant)}?limit=100`, { token: tenant.owner.token })
    ).body.items.find((c: Json) => c.name === 'Open homes');
    const rates = await compare([sentOne.id, ids[0]]);
    expect(rates.body.items[0]).toMatchObject({
      sent: 2,
      delivered: 2,
      delivery_rate: 1,
      reply_rate: 0.5,
      opt_out_rate: 0.5,
    });
  });

  it('CRUD, bad input, viewers and other tenants', async () => {
    const bad: Record<string, unknown>[] = [
      { name: 'x', body: 'x' },
      { name: 'x', body: 'x', audience: {} },
      { name: 'x', body: 'x', audience: { tag: 'a', all: true } },
      { name: 'x', body: '', audience: { all: true } },
      { name: 'x', body: 'y'.repeat(1601), audience: { all: true } },
      { name: '', body: 'x', audience: { all: true } },
      { name: 'x', body: 'x', audience: { all: false } },
      { name: 'x', body: 'x', audience: { contact_ids: [] } },
      { name: 'x', body: 'x', audience: { all: true }, from_phone: '+61491570156' },
      { name: 'x', body: 'x', audience: { all: true }, extra: 1 },
    ];
    for (const body of bad) {
      const res = await api('POST', campaigns(tenant), { token: tenant.owner.token, body });
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
    }
    const draft = await createCampaign(tenant, {
      name: 'Draft',
      body: 'Hi',
      audience: { all: true },
      from_phone: tenant.number,
    });
    expect(draft.from_phone).toBe(tenant.number);
    const renamed = await api('PATCH', `${campaigns(tenant)}/${draft.id}`, {
      token: tenant.owner.token,
      body: { name: 'Renamed', audience: { tag: 'x' } },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Renamed', audience: { tag: 'x' }, status: 'draft' });
    expect(
      (
        await api('PATCH', `${campaigns(tenant)}/${draft.id}`, {
          token: tenant.owner.token,
          body: { status: 'sent' },
        })
      ).status,
    ).toBe(422);
    const list = await api('GET', `${campaigns(tenant)}?limit=2`, { token: tenant.owner.token });
    expect(list.body.items[0].id).toBe(draft.id);
    expect(list.body.next_cursor).toBeTruthy();

    const viewer = await addMember(tenant, 'viewer');
    expect((await api('GET', `${campaigns(tenant)}/${draft.id}`, { token: viewer.token })).status).toBe(200);
    expect(
      (
        await api('POST', campaigns(tenant), {
          token: viewer.token,
          body: { name: 'v', body: 'v', audience: { all: true } },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await api('PATCH', `${campaigns(tenant)}/${draft.id}`, {
          token: viewer.token,
          body: { status: 'sending' },
        })
      ).status,
    ).toBe(403);
    expect((await api('DELETE', `${campaigns(tenant)}/${draft.id}`, { token: viewer.token })).status).toBe(
      403,
    );
    const stranger = await newTenant({ paid: true });
    expect(
      (await api('GET', `${campaigns(tenant)}/${draft.id}`, { token: stranger.owner.token })).status,
    ).toBe(404);
    expect(
      (await api('GET', `${ws(stranger)}/sms-campaigns/${draft.id}`, { token: stranger.owner.token })).status,
    ).toBe(404);
    expect((await api('GET', `${ws(tenant)}/sms-inbox`, { token: stranger.owner.token })).status).toBe(404);
    expect((await api('GET', `${campaigns(tenant)}/nope`, { token: tenant.owner.token })).status).toBe(404);

    const cancelled = await api('PATCH', `${campaigns(tenant)}/${draft.id}`, {
      token: tenant.owner.token,
      body: { status: 'cancelled' },
    });
    expect(cancelled.body.status).toBe('cancelled');
    expect(
      (await api('DELETE', `${campaigns(tenant)}/${draft.id}`, { token: tenant.owner.token })).status,
    ).toBe(204);
    expect((await api('GET', `${campaigns(tenant)}/${draft.id}`, { token: tenant.owner.token })).status).toBe(
      404,
    );

    // A workspace without a number cannot send.
    const numberless = await newTenant({ paid: true });
    const c = await createCampaign(numberless, { name: 'n', body: 'n', audience: { all: true } });
    expect(
      (
        await api('PATCH', `${campaigns(numberless)}/${c.id}`, {
          token: numberless.owner.token,
          body: { status: 'sending' },
        })
      ).status,
    ).toBe(409);
  });
});
